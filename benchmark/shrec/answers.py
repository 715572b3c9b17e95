"""Reading a model's free-text reply to a SHREC task item as an answer in the task's answer space (SH-9).

The paper has a second model coerce every reply into the answer space; Parley reads it first with a
deterministic parser, so that the same reply always scores the same, and keeps any model coercion
(``coercion_messages`` + ``parse_answer`` on the coercing model's reply) in a field of its own. An
unreadable reply is ``None``: wrong, and counted as unparsed by the scores.

How a reply is read (``parse_answer``):

1. the text after the last "Answer:" (or "answer is") when there is one; else the whole reply, and
   when the whole reply is ambiguous, its last non-empty line (a chain of thought ends with its answer);
2. in that text, in order, the first reading that is unambiguous (exactly one option, or for task 3 a
   set of attributes): option marks "(B)", "(3)"; "option C", "choice 3"; a bare "C", "3" or "C."; the
   text of an option; then the task's own words (detection: competence / error / none; error:
   "no error" / "error", yes / no; task 4: true / false, yes / no, "more than one" / "only one";
   task 3: attribute letters, names and the usual variants of their names).

Answer spaces (see ``benchmark.models.task_items``): detection "competency" / "error" / "none"; error
"error" / "no_error"; attributes a sorted list of keys; multiple True / False; the multiple-choice
tasks the 1-based option number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from benchmark.models import Task

from .prompts import LETTERED, option_mark, options_block

# Words that name each social attribute in replies, option texts and SHREC's released files.
ATTRIBUTE_WORDS: dict[str, tuple[str, ...]] = {
    "emotions": ("emotion",),
    "engagement": ("engagement", "engaged"),
    "conversational-mechanics": ("conversational mechanic", "conversation mechanic", "turn-taking", "turn taking"),
    "knowledge-state": ("knowledge state", "knowledge-state", "knowledge"),
    "intention": ("intention", "intent"),
    "social-context": ("social context", "relationship"),
    "social-norms": ("social norm", "norms", "routine"),
}

_ANSWER_MARK = re.compile(r"\b(?:final\s+)?answer\s*(?:is\s*)?[:\-]|\banswer\s+is\b", re.IGNORECASE)
_MARK = re.compile(r"\(\s*([A-Za-z]|\d+)\s*\)")
_NAMED = re.compile(
    r"\b(?:option|choice|letter|number)\s*(?:is\s*)?[:#]?\s*\(?([A-Za-z]|\d+)\)?(?![\w'])", re.IGNORECASE
)
# A reply that is only a mark ("B", "**3**", "(C).") or starts with one and a stop ("3. Because ...").
_BARE = re.compile(r"^[\W_]*\(?([A-Za-z]|\d+)\)?(?:[\W_]*$|[.):,]\s)")
_LETTERS = re.compile(r"(?<![\w'])([A-G])(?![\w'])")


def normalise(text: str) -> str:
    """Lower case, '&' as 'and', runs of blanks as one space: what option texts and replies are compared in."""
    return re.sub(r"\s+", " ", text.replace("&", " and ").lower()).strip()


def answer_text(reply: str) -> str:
    """The part of ``reply`` that holds the answer: after its last 'Answer:' if any, else all of it."""
    marks = list(_ANSWER_MARK.finditer(reply))
    if not marks:
        return reply.strip()
    tail = reply[marks[-1].end():].strip()
    return tail.splitlines()[0].strip() if tail else ""


def _position(task: str, token: str, count: int) -> int | None:
    """The 0-based option a mark ('C', '3') names for ``task``, or None when it names none."""
    token = token.strip()
    if task in LETTERED:
        if len(token) == 1 and token.isalpha():
            position = ord(token.upper()) - ord("A")
            return position if 0 <= position < count else None
        return None
    if token.isdigit():
        position = int(token) - 1
        return position if 0 <= position < count else None
    return None


def _one(positions: Sequence[int | None]) -> int | None:
    found = {p for p in positions if p is not None}
    return found.pop() if len(found) == 1 else None


def _word(text: str, words: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(words)}", text) is not None


def _options_named(text: str, options: Sequence[str]) -> list[int]:
    """Options whose whole text appears in ``text``; an option inside a longer one found too is dropped."""
    found = [i for i, option in enumerate(options) if normalise(option) and _word(text, normalise(option))]
    return [i for i in found if not any(j != i and normalise(options[i]) in normalise(options[j]) for j in found)]


def option_value(task: str, position: int, options: Sequence[str]) -> Any:
    """The answer-space value of choosing option ``position`` (0-based) of a task item."""
    if task in (Task.DETECTION, Task.ERROR):
        return _label_words(task, normalise(options[position])) or _fixed_order(task, position)
    if task == Task.ATTRIBUTES:
        keys = attribute_keys(options[position])
        return sorted(keys)[0] if len(keys) == 1 else None
    if task == Task.MULTIPLE:
        return _truth(normalise(options[position]))
    return position + 1


def _fixed_order(task: str, position: int) -> str | None:
    order = ("competency", "error", "none") if task == Task.DETECTION else ("error", "no_error")
    return order[position] if position < len(order) else None


def _label_words(task: str, text: str) -> str | None:
    """Detection / error label named in ``text`` by its words, when exactly one is."""
    negated = any(_word(text, words) for words in ("no social error", "no error", "not a social error",
                                                    "not an error", "no_error"))
    said = set()
    if task == Task.DETECTION:
        if _word(text, "competen"):
            said.add("competency")
        if _word(text, "error") and not negated:
            said.add("error")
        if _word(text, "none") or _word(text, "neither"):
            said.add("none")
    else:
        if negated or re.fullmatch(r"no\W*", text):
            said.add("no_error")
        elif _word(text, "error") or re.fullmatch(r"yes\W*", text):
            said.add("error")
    return said.pop() if len(said) == 1 else None


def _truth(text: str) -> bool | None:
    said = set()
    if _word(text, "true") or _word(text, "yes") or _word(text, "more than one"):
        said.add(True)
    if _word(text, "false") or re.search(r"(?<![\w-])no\b", text) or _word(text, "only one"):
        said.add(False)
    return said.pop() if len(said) == 1 else None


def attribute_keys(text: str) -> set[str]:
    """The social attributes ``text`` names by their words (``ATTRIBUTE_WORDS``)."""
    text = normalise(text)
    return {key for key, words in ATTRIBUTE_WORDS.items() if any(_word(text, word) for word in words)}


def _attributes(text: str, options: Sequence[str]) -> list[str] | None:
    """Task 3: the attributes chosen by letter marks, bare letters or names; None when none is."""
    count = len(options)
    values = [option_value(Task.ATTRIBUTES, i, options) for i in range(count)]
    marked = [_position(Task.ATTRIBUTES, token, count) for token in _MARK.findall(text)]
    if not marked and re.fullmatch(r"[\W\sA-Ga-g]*", text.replace("and", " ")):
        marked = [_position(Task.ATTRIBUTES, token, count) for token in _LETTERS.findall(text.upper())]
    chosen = {values[p] for p in marked if p is not None and values[p] is not None}
    if not chosen:
        chosen = attribute_keys(text)
    return sorted(chosen) or None


def _single(task: str, text: str, options: Sequence[str]) -> Any:
    """One option of a single-answer task read from ``text``, or None."""
    count = len(options)
    readings = (
        lambda: _one([_position(task, token, count) for token in _MARK.findall(text)]),
        lambda: _one([_position(task, token, count) for token in _NAMED.findall(text)]),
        lambda: _one([_position(task, match.group(1), count)] if (match := _BARE.match(text)) else []),
        lambda: _one(_options_named(normalise(text), options)),
    )
    for reading in readings:
        position = reading()
        if position is not None:
            return option_value(task, position, options)
    if task in (Task.DETECTION, Task.ERROR):
        return _label_words(task, normalise(text))
    return None


def _read(task: str, text: str, options: Sequence[str]) -> Any:
    if not text.strip():
        return None
    if task == Task.ATTRIBUTES:
        return _attributes(text, options)
    if task == Task.MULTIPLE:
        position = _single(task, text, options) if options else None
        return position if isinstance(position, bool) else _truth(normalise(text))
    return _single(task, text, options)


def parse_answer(task: str, reply: str, options: Sequence[str]) -> Any:
    """``reply`` read in ``task``'s answer space, or None when it cannot be read unambiguously.

    ``options`` are the item's options in the order shown (``TaskItem.options``).
    """
    if task not in Task.values:
        raise ValueError(f"unknown SHREC task {task!r}")
    text = answer_text(reply or "")
    value = _read(task, text, options)
    if value is None and text == (reply or "").strip():
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1:
            value = _read(task, lines[-1], options)
    return value


def coercion_messages(task: str, reply: str, options: Sequence[str]) -> list[dict[str, str]]:
    """The request to a second model to restate ``reply`` as a bare answer (the paper's coercion step)."""
    if task == Task.MULTIPLE:
        allowed, form = "True or False", "Answer: True"
    elif task == Task.ATTRIBUTES:
        allowed, form = "the letters of the attributes the reply chose", "Answer: (A), (C)"
    else:
        allowed, form = "the mark of the one option the reply chose", f"Answer: {option_mark(task, 0)}"
    listed = options_block(task, options)
    instructions = (
        "You restate another model's reply to a multiple-choice question. Do not answer the question "
        f"yourself: say only what the reply chose, as {allowed}, on one line in the form '{form}'. If the reply "
        "chose nothing clear, write 'Answer: unclear'."
    )
    content = (f"Options:\n{listed}\n\n" if listed else "") + f"Reply:\n{reply}"
    return [{"role": "system", "content": instructions}, {"role": "user", "content": content}]
