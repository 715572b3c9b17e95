"""What an import tells the other apps, as Django signals carrying plain records.

``benchmark`` imports nothing of the apps above it, yet some files hold what only they keep: SHREC's
files hold annotators' spans, which are annotation studies' rows (``annotator``). The format sends
the spans as plain records inside the import's transaction, and the app that keeps them connects a
receiver; a receiver's ``ImportProblem`` rolls the whole import back, as any other problem would.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.dispatch import Signal

from .shrec_spans import AnnotatorSpans

# Sent by the SHREC format (``importing.shrec``) once its episodes are saved, with keyword arguments
# ``team`` (the importing team), ``tag`` (the import's tag: one study per tag), ``file`` (the file's name,
# for messages), ``videos`` (a list of :class:`VideoSpans`) and ``result`` (the ``ImportResult`` to count
# into). A receiver returns the slug of the study that holds the spans.
spans_imported = Signal()


@dataclass
class VideoSpans:
    """One imported video's annotators and their spans, for the episode stored as ``episode_id``."""

    episode_id: int
    external_id: str
    place: str  # where the video is in the file ("row 3"), for messages
    agent_seat: int = 0
    annotators: list[AnnotatorSpans] = field(default_factory=list)  # the columns holding segments, in column order
