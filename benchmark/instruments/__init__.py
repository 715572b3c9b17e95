"""Instruments as data: the question system annotators, participants and judges all answer.

An instrument (``benchmark.models.Instrument``) is a versioned list of questions; whoever answers
it gives a ``Response`` made of typed ``Answer`` rows. This package holds what every user of an
instrument shares, split by what it does:

- ``checks``: what a question's ``options`` must look like for its kind, and the checks on a whole
  list of questions (keys, positions, dimensions, sources of truth); saving through them sets a
  numeric question's ``low``/``high`` from its options.
- ``values``: one answer's text checked against its question (the same rule for a form, a judge's
  output or an import), and how numbers are written back as text.
- ``presets``: the instruments Parley ships (shared, no team) and ``install_preset``.
- ``versions``: freezing an instrument once it is answered, and copying it to a new version.
- ``respondents``: the ``Respondent`` row of a person.
- ``triggers``: the database triggers that refuse an answer its question does not allow.

Nothing here imports another Parley app; forms that read answers (the annotator's item page, the
chat questionnaire) build on ``checks`` and ``values``.
"""
