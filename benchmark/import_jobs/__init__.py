"""The import page: upload files, see a dry run of them, then import them, each step a task on the queue.

``jobs`` stores an upload and queues its steps (the task is ``benchmark.jobs.tasks.import_upload``;
``manage.py import_episodes --job <id>`` runs one in place), ``progress_store`` is how the task tells the
page how far it has got, ``status`` is what the page shows, ``views`` and ``forms`` are the page.
"""
