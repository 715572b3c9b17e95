"""SHREC's diarised, timestamped transcripts read into turns with times (``parse_transcript``).

A SHREC transcript (``transcript`` column; spec ``docs``: shrec.md §2.2) is a speaker line, then the
speaker's words, each after the time it was said::

    AI Agent:
    (00:00:02) Hey (00:00:03) there. (00:00:04) How (00:00:05) was (00:00:05) your (00:00:06) day?
    User A:
    (00:00:08) Good. (00:00:09) How (00:00:09) was (00:00:10) yours?

or, as the dataset's README shows it, the words on the speaker's line (``AI Agent: (00:00:02) Hey
there.``). The rules, and why:

- **A speaker line** is a label of letters, digits and spaces (``AI Agent``, ``User A``) and a colon,
  followed by nothing or by a time: a line of words never starts that way, so a word such as "Note:"
  inside a sentence is not mistaken for a speaker.
- **A time** is ``(hh:mm:ss)``, ``(mm:ss)`` or either with a fraction (``(00:01:02.5)``); every word
  after it, up to the next time, was said at it (a phrase after one time gives each of its words that
  time). Words before the first time of a turn take the turn's first time.
- **One turn per stretch of one speaker**: consecutive blocks of the same speaker (a speaker line
  repeated without anyone else in between) are one turn, as a reader hears them.
- **A turn's times**: ``start_s`` is its first word's time; ``end_s`` the latest time of its words
  (the transcript gives when words start, not when the turn stops, so a pause before the next
  speaker is not counted as the turn's; a one-word turn starts and ends at once). ``words`` keeps
  every word with its time, ``[[seconds, word], ...]``, and the turn's text is its words joined by
  spaces.
- **Unreadable** (a :class:`TranscriptProblem` naming the line): words before any speaker line, a
  turn with no time at all. A speaker line with no words after it is no turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SPEAKER = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ]{0,39}?)\s*:\s*(?=\(|$)(.*)$")
_TIME = re.compile(r"\((\d+(?::\d{1,2}){1,2}(?:\.\d+)?)\)")


class TranscriptProblem(ValueError):
    """A transcript that cannot be read; the message names the line (from 1)."""


@dataclass
class TranscriptTurn:
    """One speaker's stretch of the transcript."""

    speaker: str
    words: list[list[float | str]] = field(default_factory=list)  # [[seconds, word], ...]

    @property
    def start_s(self) -> float:
        return float(self.words[0][0])

    @property
    def end_s(self) -> float:
        return max(float(time) for time, _ in self.words)

    @property
    def text(self) -> str:
        return " ".join(str(word) for _, word in self.words)


def seconds(time: str) -> float:
    """``hh:mm:ss`` or ``mm:ss`` (with an optional fraction) as seconds."""
    total = 0.0
    for part in time.split(":"):
        total = total * 60 + float(part)
    return total


def parse_transcript(text: str) -> list[TranscriptTurn]:
    """The transcript's turns in order, as the module's docstring says; ``TranscriptProblem`` if unreadable."""
    turns: list[TranscriptTurn] = []
    current: TranscriptTurn | None = None
    untimed: list[str] = []  # words of the current turn before its first time
    started_on = 0
    for number, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), start=1):
        speaker = _SPEAKER.match(line)
        if speaker:
            label = " ".join(speaker.group(1).split())
            if current is None or current.speaker != label:
                _close(current, untimed, started_on, turns)
                current, untimed, started_on = TranscriptTurn(label), [], number
            line = speaker.group(2)
        if not line.strip():
            continue
        if current is None:
            raise TranscriptProblem(f"line {number}: words before any speaker line ('AI Agent:', 'User A:')")
        pieces = _TIME.split(line)
        untimed_here = pieces[0].split()
        if untimed_here:
            if current.words:  # words after a time said on an earlier line: still at that time
                time = current.words[-1][0]
                current.words.extend([time, word] for word in untimed_here)
            else:
                untimed.extend(untimed_here)
        for position in range(1, len(pieces), 2):
            time = seconds(pieces[position])
            words = pieces[position + 1].split()
            if not current.words and untimed:
                current.words.extend([time, word] for word in untimed)
                untimed = []
            current.words += [[time, word] for word in words]
    _close(current, untimed, started_on, turns)
    return turns


def _close(turn: TranscriptTurn | None, untimed: list[str], started_on: int, turns: list[TranscriptTurn]) -> None:
    if turn is None:
        return
    if untimed and not turn.words:
        raise TranscriptProblem(
            f"line {started_on}: {turn.speaker}'s words have no time; each needs one, as (hh:mm:ss) word"
        )
    if turn.words:
        turns.append(turn)
