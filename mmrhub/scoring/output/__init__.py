"""What the scoring commands print and write: tables in every format (``tables``), the captions and JSON of scores
(``scores``) and of comparisons (``comparison``)."""
