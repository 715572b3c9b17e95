"""Simulation runs: a grid of scenarios × conditions × episodes, planned, executed, resumed, cancelled.

A run is what SocialVeil's experiments are made of: every chosen scenario played under every
chosen barrier condition, ``episodes_per_cell`` times, for the ``simulate`` command and for runs
launched from the web alike. One module per step and mechanism:

- :mod:`.options`: what a run is asked to do, checked; :mod:`.planning`: the grid and its
  episodes in the database; :mod:`.simulation`: one agent–agent episode, turn by turn.
- :mod:`.supervisor`: the process that executes a run (heartbeat, counts, cancel);
  :mod:`.workers`: the episodes played in an event loop, in one or several forked processes;
  :mod:`.writer`: group commit of their turns; :mod:`.interrupts`: Ctrl-C and SIGTERM;
  :mod:`.scoring`: the judge's pass at the end.
- :mod:`.status`: the run's row as workers write it and pages read it; :mod:`.launching`: runs
  started from the web in a detached worker; :mod:`.views`, :mod:`.forms`, :mod:`.urls`: the pages.

Why it is built this way:

- **Resumable by construction.** Planning the same run again finds the same episodes (their
  external ids are made from the run's tag, scenario, condition and number). Finished ones are
  skipped; pending, interrupted (``running`` with no live worker) and failed ones are played
  again, each from its next turn, since every turn is stored the moment it is produced.
- **Concurrency is episodes in flight.** An episode has one model call in flight at a time, so
  ``concurrency`` is the number of concurrent model calls; ``workers`` splits the episodes over
  several processes when one process's CPU is the limit.
- **Supervised from the database.** The executing process writes its pid, a heartbeat and the
  counts, and reads ``cancel_requested`` once a second; the web pages read only the row.
- **Cancellation stops at once and loses nothing stored.** Turns in flight are abandoned and
  their episodes set back to ``pending``, to be resumed by a later run.
"""
