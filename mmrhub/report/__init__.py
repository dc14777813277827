"""``mmrhub report``: one self-contained HTML page of scores, plots and a gallery of queries with thumbnails.

Needs the ``report`` extra (matplotlib). Modules: ``views`` (what each benchmark shows), ``selection`` (which
queries), ``thumbnails`` (Pillow), ``gallery`` (decodes only the rows shown), ``plots`` (matplotlib), ``page``
(the HTML), ``build`` (puts them together).
"""
