"""The import page: upload files, see a dry run of them, then import them, with a worker process doing the work.

``jobs`` stores an upload and runs it (``manage.py import_episodes --job <id>``), ``progress`` is how
the worker tells the page how far it has got, ``views`` and ``forms`` are the page.
"""
