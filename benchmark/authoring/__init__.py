"""Writing a team's scenarios and characters in the browser, instead of the superuser admin.

One page edits a whole scenario: its own fields, its roles (seats) with their characters, goals,
probes and the barriers some seats speak under. Goals, probes and barriers name a role by its
number on the page (role 1, role 2, ...), so a new scenario is written in one submit, before any
role has an id. ``scenario_forms`` reads the page into a plain ``ScenarioData``; ``scenario_saving``
compares it with what is stored and writes it all or nothing, and refuses to change under played
episodes what their agents were told (see its docstring). Characters have a page of their own
(``character_forms``); the views are in ``scenario_views`` and ``character_views``.
"""
