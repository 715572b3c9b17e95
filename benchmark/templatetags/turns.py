"""How a turn's text is shown: a gesture or an action without the marks other tools wrap it in.

Transcripts mark a non-verbal turn as ``*smiles*`` and a physical action as ``[hands over the keys]``
(Sotopia's files do; so did our pages). A page shows the kind of turn in its own element, in
emphasis, so the marks are taken off: otherwise a turn stored with them reads ``**smiles**`` or
``[[hands over the keys]]``. The text stays plain text, escaped by the template.
"""

from __future__ import annotations

import re

from django import template

register = template.Library()

_WRAPPED = re.compile(r"^\s*(?:\*+(?P<starred>[^*]*)\*+|\[+(?P<bracketed>[^\[\]]*)\]+)\s*$")


@register.filter
def without_marks(content: str) -> str:
    """``content`` without the ``*…*`` or ``[…]`` (doubled or not) wrapped around all of it; a text with
    marks inside (``*smiles* and *nods*``) is left as it is."""
    match = _WRAPPED.match(content or "")
    if match is None:
        return content
    inner = match.group("starred") if match.group("starred") is not None else match.group("bracketed")
    return inner.strip() or content
