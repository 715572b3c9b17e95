"""Long work on the task queue (Huey): the queue from settings, the one way to enqueue, the jobs' rows.

Every piece of long work (a chunk of a simulation run, a judge pass, an import, a report bundle)
is a Huey task put on the queue by :func:`benchmark.jobs.queue.enqueue`, which writes a
:class:`benchmark.models.Job` row for the jobs page and hands the task to the queue when the
caller's transaction commits. Consumers (``manage.py run_huey``; ``make worker``) on any number of
machines take tasks from the one queue that ``PARLEY_TASKS`` names; the queue's signals keep the
job rows current (:mod:`benchmark.jobs.signals`). Progress and cancellation stay on the rows of
what the work is about (the run, the import, the bundle), which every page reads.
"""
