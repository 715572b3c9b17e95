"""Plain records of what SHREC's task builders read: an episode's turns and each annotator's spans.

The annotator app reads a study's submitted spans into these (``annotator/shrec_records.py``); tests
write them by hand. Nothing here touches the database, so the builders run on any spans, Parley's
own or SHREC's imported ones.

Times are seconds into the episode's recording; a span marked on turns only (Parley's own episodes)
has ``start_s``/``end_s`` None and is placed by its turn indexes instead. Labels are
``"error"``/``"competency"``; attributes are ``SocialAttribute`` keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LABELS = ("error", "competency")
# SHREC's seven social attributes (keys and the names options show), in the order Parley seeds them.
ATTRIBUTES: tuple[tuple[str, str], ...] = (
    ("emotions", "Emotions"),
    ("engagement", "Engagement"),
    ("conversational-mechanics", "Conversational Mechanics"),
    ("knowledge-state", "Knowledge State"),
    ("intention", "Intention"),
    ("social-context", "Social Context and Relationships"),
    ("social-norms", "Social Norms and Routines"),
)
ATTRIBUTE_KEYS = tuple(key for key, _ in ATTRIBUTES)


@dataclass(frozen=True)
class TurnRecord:
    """One turn: its index, who spoke (seat position and the name transcripts print), what was said."""

    index: int
    seat: int
    speaker: str
    text: str
    start_s: float | None = None
    end_s: float | None = None
    words: tuple[tuple[float, str], ...] = ()


@dataclass(frozen=True)
class SpanRecord:
    """One annotator's span: a stretch marked as a social error or competency, with what they said of it."""

    id: int | str
    label: str
    start_turn: int
    end_turn: int
    start_s: float | None = None
    end_s: float | None = None
    attributes: tuple[str, ...] = ()
    rationale: str = ""
    correction: str = ""
    channel: str = ""
    seat: int | None = None  # the seat whose behaviour the span is about

    @property
    def timed(self) -> bool:
        return self.start_s is not None and self.end_s is not None


@dataclass(frozen=True)
class AnnotatorSpans:
    """One annotator's spans of one episode; ``name`` is a pseudonym (e.g. ``external 1``)."""

    name: str
    spans: tuple[SpanRecord, ...]


@dataclass
class EpisodeRecord:
    """One episode with its turns and its annotators' spans, annotators in the study's order.

    ``key`` is the episode's stable id (SHREC's video id, the external id), used in item keys;
    ``agent_seat`` the seat under study (SHREC's "AI Agent"); ``source`` the dataset subset
    (empathic, wellness-dorm, …), which subsets are stratified by.
    """

    key: str
    turns: list[TurnRecord]
    annotators: list[AnnotatorSpans] = field(default_factory=list)
    agent_seat: int = 0
    source: str = ""
    episode_id: int | None = None

    @property
    def timed(self) -> bool:
        """Whether the spans carry times (an imported or recorded episode) rather than turns only."""
        spans = [span for annotator in self.annotators for span in annotator.spans]
        return bool(spans) and all(span.timed for span in spans)
