"""Simulation runs: a grid of scenarios × conditions × episodes, planned, played in chunks on the task queue,
resumed, cancelled.

A run is what SocialVeil's experiments are made of: every chosen scenario played under every
chosen barrier condition, ``episodes_per_cell`` times, for the ``simulate`` command and for runs
launched from the web alike. One module per step and mechanism:

- :mod:`.options`: what a run is asked to do, checked; :mod:`.planning`: the grid and its
  episodes in the database; :mod:`.simulation`: one agent–agent episode, turn by turn.
- :mod:`.chunks`: the run on the task queue (prepared, split into chunks, each chunk a task,
  heartbeats, stale chunks queued again, the finishing passes); :mod:`.eventloop`: one event loop
  per task with its own database thread; :mod:`.writer`: group commit of the turns;
  :mod:`.scoring`: the judges' and interviews' passes at the end.
- :mod:`.status`: the run's row as chunks write it and pages read it; :mod:`.control`: create,
  launch, resume and cancel a run; :mod:`.views`, :mod:`.forms`, :mod:`.urls`: the pages.

Why it is built this way:

- **Resumable by construction.** Planning the same run again finds the same episodes (their
  external ids are made from the run's tag, scenario, condition and number). Finished ones are
  skipped; pending, interrupted and failed ones are played again, each from its next turn, since
  every turn is stored the moment it is produced.
- **Chunks on a shared queue.** A run's episodes to play are split into chunks of twice its
  concurrency, one Huey task each, so any number of consumers on any number of machines share a run
  with no supervisor of Parley's own; ``concurrency`` is the number of model calls in flight per chunk
  (an episode has one at a time).
- **The run row is the one source of progress.** Chunks add their finished and failed episodes to
  its counts and read its ``cancel_requested``; pages read only the rows. The last chunk to end,
  decided with the run's row locked, queues the finishing task (judges, interviews, goal judges),
  which closes the run.
- **Heartbeats per attempt.** A playing chunk beats once a second on its row, for its attempt only;
  a chunk not heard from for ``PARLEY_RUN_STALE_SECONDS`` is queued again as a new attempt (by the
  run's watch task and a periodic task), and the superseded attempt, if it still lives, stops at its
  next beat.
- **Cancellation stops at once and loses nothing stored.** Each chunk reads the cancel at its next
  beat; turns in flight are abandoned and their episodes set back to ``pending``, to be resumed.
- **A model that cannot be reached stops the run** with the provider's message, rather than every
  episode failing alike.
"""
