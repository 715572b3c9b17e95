"""SHREC's human baseline (SH-13): annotation studies whose items are task items, answered by people.

The paper's people did the same tasks as the models, with the same prompts as instructions, on the
same pre-cut excerpts, and were scored against the same labels. Here that is an ordinary annotation
study with three differences, each kept in one module:

- ``study``: the study is made from a task set (``create_human_baseline_study``, the
  ``shrec_human_study`` command): one study item per task item (``StudyItem.task_item``), its window
  the item's turns, and an instrument of one question per task asked, keyed by the task's name. Tasks
  1, 2 and 5–8 are per-item choices from the item's own options (``item_choice``, source
  ``task_item``), task 3 a multi-label question over the item's attribute options, task 4 yes/no.
- ``page``: what the item page adds: the agent's description and the task's text exactly as the model
  prompt words them (``benchmark.shrec.prompts``), only the question of the item's task, and, for pre-
  and post-conditions, only the one utterance (the window never holds the answer). The correct option
  never reaches the page: the per-item choice binds the item's options without it.
- ``answers``: every submitted answer read back into the task's answer space (option position → 1-based
  number, option → "competency"/"error"/"none" or "error"/"no_error", attribute keys sorted, yes → True),
  the source the app registers for ``benchmark.results.shrec.human`` (the Human row).
- ``generated``: seeded generated answers for the demo, labelled as generated.

People stay blind: the page shows no model's answer, no gold, no other person's answer.
"""
