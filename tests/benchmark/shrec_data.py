"""SHREC records built by hand for the builders' tests: SH-A1's two annotators on one timed episode."""

from benchmark.shrec.records import AnnotatorSpans, EpisodeRecord, SpanRecord, TurnRecord

AGENT, USER = 0, 1


def timed_turns(until: int = 100, every: int = 5) -> list[TurnRecord]:
    """Alternating agent and user turns every ``every`` seconds, each a distinct sentence."""
    turns = []
    for index, start in enumerate(range(0, until, every)):
        seat = AGENT if index % 2 == 0 else USER
        speaker = "AI Agent" if seat == AGENT else "User A"
        text = f"Line {index} at {start} seconds."
        turns.append(TurnRecord(index, seat, speaker, text, start, start + every - 1, ((start, text),)))
    return turns


def span(id, start, end, label, attributes=(), rationale="", correction="") -> SpanRecord:
    return SpanRecord(
        id, label, int(start // 5), int(end // 5), float(start), float(end), tuple(attributes), rationale, correction,
        "verbal", AGENT,
    )


def sh_a1_episode() -> EpisodeRecord:
    first = AnnotatorSpans("external 1", (
        span("A1", 0, 10, "error", ["emotions"]), span("A2", 20, 30, "competency", ["engagement"]),
        span("A3", 50, 60, "competency"),
    ))
    second = AnnotatorSpans("external 2", (
        span("B1", 1, 9, "error", ["emotions", "intention"]), span("B2", 21, 35, "error"),
        span("B3", 80, 90, "competency"),
    ))
    return EpisodeRecord("video", timed_turns(), [first, second], agent_seat=AGENT, source="empathic")
