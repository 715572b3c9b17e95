"""The offline scripted answerer of SHREC's task items (SH-11): model name ``scripted``.

It lets the whole benchmark run with no model, deterministically, and gives the results tables a
floor that is easy to explain. It reads only what a model would read (the item's context and
options, and the label the attribute tasks state), never the gold, and writes its reply the way a
model is asked to ("Answer: (B)"), so that the same parser reads it.

- Tasks 1 and 2 (detection, error): cue words in the excerpt. An apology ("sorry", "apologise"), a
  sign of not understanding ("pardon", "didn't catch"), or a question asked twice → error; else
  thanks ("thank") or the agent recalling a name the person gave ("my name is Maya" … "Maya") →
  competence; else none. Task 2 answers error or no error.
- Tasks 3 and 4 (attributes, multiple): ``KEYWORDS`` maps words of the excerpt to attributes; task 3
  answers every attribute found (conversational mechanics, the paper's most frequent attribute, when
  none is), task 4 True when more than one is found.
- Tasks 5–8 (multiple choice): the option sharing the most distinct words with the context; ties go
  to the lowest option number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from benchmark.agents.allowed_models import SCRIPTED
from benchmark.models import Task

from .answers import option_value
from .prompts import PromptItem, option_mark

__all__ = ["SCRIPTED", "KEYWORDS", "scripted_reply"]

ERROR_CUES = ("sorry", "apolog", "pardon", "didn't catch", "did not catch", "didn't understand",
              "did not understand")
COMPETENCE_CUES = ("thank",)
FALLBACK_ATTRIBUTE = "conversational-mechanics"

KEYWORDS: dict[str, tuple[str, ...]] = {
    "emotions": ("sad", "happy", "feel", "upset", "angry", "cry", "excited", "worried", "lonely", "glad"),
    "engagement": ("bored", "interest", "listen", "attention", "fun", "enjoy", "story"),
    "conversational-mechanics": ("interrupt", "wait", "repeat", "again", "pardon", "hear", "finish"),
    "knowledge-state": ("know", "remember", "forgot", "understand", "told", "learn"),
    "intention": ("want", "plan", "try", "need", "goal", "would like", "going to"),
    "social-context": ("friend", "family", "mom", "dad", "roommate", "work", "school", "partner"),
    "social-norms": ("please", "thank", "sorry", "hello", "goodbye", "bye", "rude", "polite"),
}

_WORD = re.compile(r"[a-z0-9']+")
_GIVEN_NAME = re.compile(r"\b(?i:my name is|i'm|i am|call me)\s+([A-Z][a-z]+)")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _has(text: str, cue: str) -> bool:
    """``cue`` at the start of a word of ``text`` (so 'apolog' finds 'apologise' and 'apology')."""
    return re.search(rf"(?<![a-z']){re.escape(cue)}", text) is not None


def _questions(text: str) -> list[str]:
    return [" ".join(words(question)) for question in re.findall(r"[^.!?\n:]*\?", text) if words(question)]


def _repeated_question(text: str) -> bool:
    asked = _questions(text)
    return len(asked) != len(set(asked))


def _name_recalled(text: str) -> bool:
    """A name someone gave ('my name is Maya', "I'm Maya") said again later in the excerpt."""
    for match in _GIVEN_NAME.finditer(text):
        if re.search(rf"\b{re.escape(match.group(1))}\b", text[match.end():]):
            return True
    return False


def detection_label(context: str) -> str:
    """'error', 'competency' or 'none' from the cue words of an excerpt."""
    lowered = context.lower()
    if any(_has(lowered, cue) for cue in ERROR_CUES) or _repeated_question(context):
        return "error"
    if any(_has(lowered, cue) for cue in COMPETENCE_CUES) or _name_recalled(context):
        return "competency"
    return "none"


def attributes_found(context: str) -> list[str]:
    """The attributes whose keywords occur in the excerpt, sorted."""
    lowered = context.lower()
    return sorted(key for key, cues in KEYWORDS.items() if any(_has(lowered, cue) for cue in cues))


def best_overlap(context: str, options: Sequence[str]) -> int:
    """The 0-based option sharing the most distinct words with ``context``; ties → the first."""
    seen = set(words(context))
    overlaps = [len(seen & set(words(option))) for option in options]
    return overlaps.index(max(overlaps))


def _marks(task: str, options: Sequence[str], values: set) -> str:
    chosen = [option_mark(task, i) for i in range(len(options)) if option_value(task, i, options) in values]
    return ", ".join(chosen)


def scripted_reply(item: PromptItem) -> str:
    """The scripted answerer's reply to ``item``, written as a model is asked to write it."""
    if item.task in (Task.DETECTION, Task.ERROR):
        label = detection_label(item.context)
        if item.task == Task.ERROR:
            label = "error" if label == "error" else "no_error"
        return f"Answer: {_marks(item.task, item.options, {label}) or label}"
    if item.task == Task.ATTRIBUTES:
        found = attributes_found(item.context) or [FALLBACK_ATTRIBUTE]
        return f"Answer: {_marks(item.task, item.options, set(found)) or ', '.join(found)}"
    if item.task == Task.MULTIPLE:
        return f"Answer: {len(attributes_found(item.context)) > 1}"
    if not item.options:
        return "No options to choose from."
    return f"Answer: {option_mark(item.task, best_overlap(item.context, item.options))}"
