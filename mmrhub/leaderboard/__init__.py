"""A leaderboard Space per benchmark: entries scored exactly as ``mmrhub evaluate`` scores them, compared as ``mmrhub
compare`` compares them, each row traceable to its run file and record.

``board`` (the board's settings, ``board.json``), ``results`` (one file per entry), ``records`` (what a run's record
says of it), ``judgments`` (the tables, copied in or fetched from a dataset repo), ``standings`` (the entries in
order, their labels and ``compare``'s letters), ``upload`` (a submitted run, made ready for the reader), ``html``
(what the page shows, every name escaped), ``space`` (the Space's files and code), ``build`` (``mmrhub
leaderboard`` and ``leaderboard add``), ``pull_request`` (an entry proposed to the Space), ``live`` (the board a
running Space holds) and ``page`` (its gradio page; gradio is imported only there).
"""
