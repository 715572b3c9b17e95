"""The instrument builder: researchers make and change their team's instruments in the browser, no JSON typed.

A page lists the team's instruments and the shared presets; an instrument's page lists its questions,
adds, edits, orders and removes them, and previews the instrument as each kind of respondent meets it.
The question form is drawn from the question's kind (``benchmark.instruments.kinds``): one field per
name in the kind's ``option_names``, each read by an option editor (``option_fields``), and checked by
the kind's own checks (``benchmark.instruments.checks``), each problem shown on its field.

Why here, in ``benchmark``: instruments are benchmark's, and so is the judge, whose prompt is one of
the previews. The annotator's and the participant's forms belong to apps that import ``benchmark``,
so they register their previews (``previews.register_preview``) from their ``apps.py``, as the
results page's human rows are registered: the builder shows the real renderers without importing them.

- ``option_fields``: one editor per option name (points, choices, a value, a number, lines);
- ``forms``: the instrument, question, copy and upload forms;
- ``editing``: saving, moving and removing questions in a transaction, refused on an answered instrument;
  new versions and copies;
- ``transfer``: the instrument format (a JSON object of name, description and questions) out and back in;
- ``previews``: the preview registry, and the judge's preview;
- ``views``, ``urls``: the pages.
"""
