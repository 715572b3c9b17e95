"""``QuestionKind``: everything one kind of question means, in one class.

A kind is code, an instrument is data (``docs/architecture.md``): a ``Question`` row names its kind
(``Question.kind``) and holds what the kind needs in its ``options``; the kind's class says what
those options must look like, how an answer is checked, shown, asked of a model, combined across
respondents, compared for agreement, exported and held by the database. Every place outside this
package asks the kind (``get_kind(question.kind).check_value(...)``, ``kind.numeric``) instead of
branching on its name, so adding a kind is one module in this package (see ``__init__``).

The parts a kind must have are listed in ``REQUIRED_PARTS``; the system check
(``benchmark.instruments.kinds.checks``) fails ``manage.py check`` when a registered kind lacks one.
This module imports no model, so ``benchmark.models`` can take its choices from the registry.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

DEFAULT_TEXT_MAX_LENGTH = 2000
CHOICE_VALUE_MAX_LENGTH = 200  # a known answer (annotator.ItemKey.value) is a CharField of this size

# The agreement statistic a kind's answers take in the reports (``annotator.reports``): nominal
# (Krippendorff's alpha on values), interval (alpha and ICC on numbers), span overlap, or none.
# "own": the kind computes its statistic itself (``agreement_statistic``; ranking's Kendall's W).
AGREEMENTS = ("categorical", "numeric", "spans", "own", None)

# What a kind must say; the system check names the missing ones.
REQUIRED_PARTS = (
    "name", "label", "option_names", "widget_template", "agreement", "export_columns",
    "option_problems", "check_value", "what_to_answer", "instruction", "majority", "summary",
)


class PartMissing(NotImplementedError):
    """Raised by a part a kind must define but did not (the system check reports it first)."""


def required(method: Any) -> Any:
    """Mark a base method as a part every kind overrides (or inherits from a family that does)."""
    method.required_part = True
    return method


@dataclass(frozen=True)
class DbCheck:
    """One check the answer triggers run on a stored answer of a kind (``benchmark.instruments.triggers``).

    The triggers group kinds by check, in ``order``, around the range check every numbered answer
    gets (order 10): for each check, ``q.kind IN (the kinds that have it) AND <condition>``.

    - ``message``: the SQLite message (a literal; ``RAISE`` takes no expression);
    - ``sqlite``: the condition on the answer ``{a}`` (``NEW`` or a joined row) and its question ``q``;
    - ``postgresql``: the condition on ``p_kind``, ``p_options`` (jsonb), ``p_value``, ``p_number``;
    - ``postgresql_message``: an SQL text expression for the message, over the same names.
    """

    key: str
    order: int
    message: str
    sqlite: str
    postgresql: str
    postgresql_message: str


# A numeric question may offer "not applicable" (``options.not_applicable``, Likert): that answer is
# stored as the value ``NOT_APPLICABLE`` with no number, so statistics never read it as a point.
NOT_APPLICABLE = "na"
NEEDS_NUMBER = DbCheck(
    "needs_number", 0,
    "a numeric question's answer needs a number (benchmark_answer.number)",
    "{a}.number IS NULL AND NOT ({a}.value = 'na' AND json_extract(q.options, '$.not_applicable') IS NOT NULL)",
    "p_number IS NULL AND NOT (p_value = 'na' AND (p_options -> 'not_applicable') IS NOT NULL)",
    "'a ' || p_kind || ' question''s answer needs a number (or ''na'' where it offers not applicable)'",
)
IN_CHOICES = DbCheck(
    "in_choices", 20,
    "the answer is not one of the question's choices (options.choices values)",
    "NOT EXISTS (SELECT 1 FROM json_each(q.options, '$.choices') AS c "
    "WHERE json_extract(c.value, '$.value') = {a}.value)",
    """NOT EXISTS (
            SELECT 1 FROM jsonb_array_elements(
                CASE WHEN jsonb_typeof(p_options -> 'choices') = 'array' THEN p_options -> 'choices'
                     ELSE '[]'::jsonb END
            ) AS choice WHERE choice ->> 'value' = p_value)""",
    "format('%L is not one of the question''s choices', p_value)",
)
YES_OR_NO = DbCheck(
    "yes_or_no", 30,
    "a yes/no answer must be 'yes' or 'no'",
    "{a}.value NOT IN ('yes', 'no')",
    "p_value NOT IN ('yes', 'no')",
    "format('%L is not yes or no', p_value)",
)


@dataclass(frozen=True)
class Reply:
    """A model's reply to one question, checked: what to store, or the problem to send back in a repair."""

    value: str
    number: float | None
    problem: str
    labels: tuple[str, ...] = ()  # a multi-valued answer's values, one answer row each


class QuestionKind:
    """One kind of question. Subclass it (or a family below), fill in the parts, and ``@register`` it.

    Class attributes (the parts that are data):

    - ``name``: what ``Question.kind`` stores (a slug, at most 20 characters); ``label``: what people read.
    - ``order``: where it comes in ``choices()`` (the admin's menu); new kinds may leave the default.
    - ``option_names``: the ``options`` keys it takes; any other key is refused.
    - ``numeric``: the answer is a number in ``[low, high]`` (``Question.low``/``high`` set from the options).
    - ``single_choice``: the answer is one value from a list (``choices``).
    - ``multi_valued``: the answer is several values, one ``Answer`` row each (the database's
      one-answer-per-target rule does not apply).
    - ``posts_several``: a form posts the answer's field several times (read with ``check_values``),
      whether that makes several rows (multi-label) or one (a ranking's places, in order).
    - ``boolean``: the answer is yes or no (a goal reached or not: the reports' AgentSense goals).
    - ``numbered``: its options are numbered points, shown with their values (Likert).
    - ``compares_two``: asked about two episodes side by side (a pairwise item).
    - ``whole_transcript``: asked once per episode and answered by marking the transcript (spans).
    - ``hidden_options``: options a respondent must never see (a multiple-choice question's ``correct``).
    - ``truth_sources``: where a true answer may come from (``Question.truth``), e.g. ``episode.barrier``.
    - ``participants``: a study participant can answer it about their own chat, unaided.
    - ``widget_template``: the partial that renders it for a respondent
      (``instruments/kinds/_<name>.html``; context: ``question``, ``answer``, ``entry``).
    - ``agreement``: the statistic its answers take in the reports (one of ``AGREEMENTS``).
    - ``export_columns``: the answer export's columns its answers fill.
    - ``db_checks``: the ``DbCheck`` rows the answer triggers run on it.
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    order: ClassVar[int] = 100
    option_names: ClassVar[tuple[str, ...] | None] = None
    numeric: ClassVar[bool] = False
    single_choice: ClassVar[bool] = False
    multi_valued: ClassVar[bool] = False
    posts_several: ClassVar[bool | None] = None  # None: as multi_valued (see ``posts_several_values``)
    boolean: ClassVar[bool] = False
    numbered: ClassVar[bool] = False
    compares_two: ClassVar[bool] = False
    whole_transcript: ClassVar[bool] = False
    hidden_options: ClassVar[tuple[str, ...]] = ()
    truth_sources: ClassVar[tuple[str, ...]] = ()
    participants: ClassVar[bool] = False
    widget_template: ClassVar[str] = ""
    agreement: ClassVar[str | None | type[PartMissing]] = PartMissing
    export_columns: ClassVar[tuple[str, ...]] = ()
    db_checks: ClassVar[tuple[DbCheck, ...]] = ()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    # --- options --------------------------------------------------------------------------------

    @required
    def option_problems(self, options: dict[str, Any]) -> list[str]:
        """What is wrong with ``options`` (a dict; unknown keys already refused), as messages."""
        raise PartMissing(f"{self.name}: option_problems")

    def question_problems(self, question: Any) -> list[str]:
        """What else is wrong with a question of this kind (scope, rationale), beyond its options."""
        return []

    def bounds(self, options: dict[str, Any]) -> tuple[float, float] | None:
        """The inclusive range of a numeric answer as the (valid) options give it; None if not numeric."""
        return None

    def scale(self, options: dict[str, Any]) -> tuple[float, float] | None:
        """The scale's ends as the options give them, or None when they give none (the reports' scale)."""
        return None

    def numeric_range(self, question: Any) -> tuple[float, float, float]:
        """(lowest, highest, step) of a numeric answer, from the question's options."""
        raise ValueError(f"a {self.name} question has no numeric range")

    def choices(self, question: Any) -> list[dict[str, Any]]:
        """The values a respondent picks from (well-formed ones only, in order); empty when none."""
        options = question.options if isinstance(question.options, dict) else {}
        found = options.get("choices")
        return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []

    def for_item(self, question: Any, episode: Any, task_item: Any = None) -> Any:
        """The question as asked about one item (episode, and the SHREC task item a human-baseline study item
        answers): itself, unless the item brings its own choices (per-item multiple choice); None when the
        item has none for it (then it is not asked)."""
        return question

    def correct_for(self, question: Any, episode: Any, task_item: Any = None) -> str | None:
        """The value of the correct answer about ``episode`` (or its ``task_item``), if the kind stores one
        (for accuracy)."""
        return None

    def imported_value_problem(self, question: Any, value: str) -> str:
        """What is wrong with one imported answer row's value, before it reaches the database ("" when fine).

        A choice (one, or one label of several) is checked as a form checks it; any other value is left to
        the database's checks (a number to the question's bounds, which ``importing`` checks itself), so
        an import keeps what the database would keep, in the database's words.
        """
        if self.single_choice or self.multi_valued:
            return self.check_value(question, value)[2]
        return ""

    @property
    def posts_several_values(self) -> bool:
        """Whether a form posts this kind's answer field several times (``posts_several``, else ``multi_valued``)."""
        return self.multi_valued if self.posts_several is None else self.posts_several

    def widget_options(self, question: Any) -> list[dict[str, Any]]:
        """The options its widget lists (``{value, label, description?}``), in order."""
        return self.choices(question)

    def widget_data(self, question: Any, value: str) -> dict[str, Any]:
        """What else its widget shows besides the options (``entry.widget``), given the current value."""
        return {}

    def participant_choices(self, question: Any) -> list[tuple[str, str]]:
        """What a participant picks from, as (value, label); empty for a typed answer (a text box)."""
        return [(str(c["value"]), str(c.get("label", c["value"]))) for c in self.choices(question)]

    def correct(self, options: Any) -> str | None:
        """The value of the correct answer, for a kind scored for accuracy whose options say it; else None."""
        return None

    def option_order(self, options: Any) -> list[str]:
        """The values of the options in their listed order (for breaking ties)."""
        if isinstance(options, dict):
            return [str(choice.get("value")) for choice in options.get("choices", []) if isinstance(choice, dict)]
        return []

    # --- one answer -----------------------------------------------------------------------------

    @required
    def check_value(self, question: Any, value: str) -> tuple[str, float | None, str]:
        """(value to store, number, problem) for a non-empty stripped answer; problem is "" when fine."""
        raise PartMissing(f"{self.name}: check_value")

    def check_values(self, question: Any, values: Sequence[str]) -> tuple[list[str], str]:
        """A multi-valued answer's values as stored (in order) and a problem ("" when fine)."""
        raise ValueError(f"a {self.name} question takes one value")

    @required
    def what_to_answer(self, question: Any) -> str:
        """What a valid answer looks like, as an instruction ("choose one of: ...")."""
        raise PartMissing(f"{self.name}: what_to_answer")

    @required
    def summary(self, question: Any) -> tuple[str, list[dict[str, Any]]]:
        """What it asks for in a line, and the options worth spelling out (the study's instructions page)."""
        raise PartMissing(f"{self.name}: summary")

    # --- a model as respondent ------------------------------------------------------------------

    @required
    def instruction(self, question: Any) -> str:
        """How a model is told to answer it in a judge or interview prompt (after the question's key)."""
        raise PartMissing(f"{self.name}: instruction")

    def parse_reply(self, question: Any, reply: Any) -> Reply:
        """A model's JSON reply to it, checked. Numbers and text are both accepted for one value."""
        if self.multi_valued:
            items = reply if isinstance(reply, list) else [reply] if reply not in (None, "") else []
            values, problem = self.check_values(question, [str(item).strip() for item in items])
            return Reply("", None, problem, tuple(values))
        if isinstance(reply, bool) or reply is None or isinstance(reply, list | dict):
            return Reply("", None, f"give one answer; {self.what_to_answer(question)}")
        text = format_number(reply) if isinstance(reply, int | float) else str(reply).strip()
        if not text:
            return Reply("", None, f"the answer is empty; {self.what_to_answer(question)}")
        value, number, problem = self.check_value(question, text)
        return Reply(value, number, problem)

    def repair_message(self, question: Any, problem: str) -> str:
        """What a repair request says about an answer that did not pass ``parse_reply``."""
        return f"Your answer to {question.key!r} was not accepted: {problem} Answer again with the same JSON shape."

    # --- several respondents --------------------------------------------------------------------

    def scripted_answer(self, question: Any, transcript: str) -> tuple[str, str] | None:
        """An offline answer from the transcript's words, (value to store, reasoning), for a scripted respondent
        when no model is configured; None when the kind has no such heuristic (it is then not answered offline)."""
        return None

    def agreement_statistic(self, question: Any, table: Any) -> dict[str, Any] | None:
        """A kind whose ``agreement`` is "own": its statistic over a long table (``item``, ``annotator``,
        ``value``), as a JSON-ready dict; None for the others (the reports compute theirs)."""
        return None

    @required
    def majority(self, question: Any, rows: Sequence[Any], respondents: int) -> list[tuple[str, float | None]]:
        """The majority of several respondents' answer rows (``value``, ``number``) to one question and
        target, as (value, number) rows to report; empty when the kind has none."""
        raise PartMissing(f"{self.name}: majority")


# --- families -----------------------------------------------------------------------------------


class NumericKind(QuestionKind):
    """A bounded number: Likert points or a slider. The majority is the median."""

    numeric = True
    agreement = "numeric"
    export_columns = ("value", "number")
    db_checks = (NEEDS_NUMBER,)
    participants = True

    def check_value(self, question: Any, value: str) -> tuple[str, float | None, str]:
        number = parse_number(value)
        low, high, step = self.numeric_range(question)
        if number is None or not low <= number <= high:
            return value, None, self.what_to_answer(question)
        if not on_grid(number, low, step):
            if step == 1 and float(low).is_integer():
                return value, None, f"choose a whole number from {format_number(low)} to {format_number(high)}."
            return value, None, (
                f"choose a value from {format_number(low)} to {format_number(high)} in steps of {format_number(step)}."
            )
        return format_number(number), number, ""

    def what_to_answer(self, question: Any) -> str:
        low, high, _ = self.numeric_range(question)
        return f"choose a value from {format_number(low)} to {format_number(high)}."

    def instruction(self, question: Any) -> str:
        low, high, step = self.numeric_range(question)
        whole = step == 1 and float(low).is_integer()
        grid = "a whole number" if whole else f"a number in steps of {format_number(step)}"
        return f"{grid} from {format_number(low)} to {format_number(high)}"

    def majority(self, question: Any, rows: Sequence[Any], respondents: int) -> list[tuple[str, float | None]]:
        numbers = [row.number for row in rows if row.number is not None]
        if not numbers:
            return []
        number = majority_number(numbers)
        return [(str(int(number)) if number.is_integer() else repr(number), number)]


class ChoiceKind(QuestionKind):
    """One value from the question's ``options.choices``. The majority is the most common value."""

    single_choice = True
    agreement = None
    export_columns = ("value",)
    db_checks = (IN_CHOICES,)

    def check_value(self, question: Any, value: str) -> tuple[str, float | None, str]:
        if value in {c.get("value") for c in self.choices(question)}:
            return value, None, ""
        return value, None, f"{value!r} is not one of the choices; {self.what_to_answer(question)}"

    def what_to_answer(self, question: Any) -> str:
        return f"choose one of: {choice_labels(self, question)}."

    def summary(self, question: Any) -> tuple[str, list[dict[str, Any]]]:
        choices = self.choices(question)
        answer = "one of: " + ", ".join(str(choice.get("label") or choice.get("value")) for choice in choices)
        return answer, [choice for choice in choices if choice.get("description")]

    def instruction(self, question: Any) -> str:
        return "exactly one of these values: " + ", ".join(repr(str(c.get("value"))) for c in self.choices(question))

    def majority(self, question: Any, rows: Sequence[Any], respondents: int) -> list[tuple[str, float | None]]:
        return [(majority_value([row.value for row in rows], self.option_order(question.options)), None)]

    def parse_reply(self, question: Any, reply: Any) -> Reply:
        """As the base, but a model's value is matched to a choice regardless of case and a final full stop."""
        if isinstance(reply, str) and not self.multi_valued:
            text = reply.strip().rstrip(".").strip()
            reply = next((str(c.get("value")) for c in self.choices(question)
                          if str(c.get("value")).lower() == text.lower()), reply)
        return super().parse_reply(question, reply)


# --- helpers the kinds share --------------------------------------------------------------------


def majority_number(numbers: Sequence[float]) -> float:
    """The median of ``numbers`` (at least one)."""
    return float(statistics.median(numbers))


def majority_value(values: Sequence[str], order: Sequence[str] = ()) -> str:
    """The most common of ``values`` (at least one); ties broken by ``order``, then by the text."""
    counts = Counter(values)
    top = max(counts.values())
    tied = [value for value, n in counts.items() if n == top]
    rank = {value: position for position, value in enumerate(order)}
    return min(tied, key=lambda value: (rank.get(value, len(rank)), value))


SCRIPTED = "Scripted heuristic, not a model judgement"


def overlap(text: str, transcript_words: set[str]) -> int:
    """How many distinct words of three letters or more ``text`` shares with a transcript's words."""
    return len(words(text) & transcript_words)


def words(text: str) -> set[str]:
    """The distinct lower-case words of three letters or more in ``text``."""
    return {word for word in re.findall(r"\w+", text.lower()) if len(word) >= 3}


def choice_labels(kind: QuestionKind, question: Any) -> str:
    return ", ".join(str(c.get("label", c.get("value"))) for c in kind.choices(question))


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def on_grid(number: float, low: float, step: float) -> bool:
    """Whether ``number`` is a whole number of ``step``s from ``low`` (up to rounding)."""
    steps = (number - low) / step
    return abs(steps - round(steps)) < 1e-9 * max(1.0, abs(steps))


def parse_number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def format_number(number: float) -> str:
    """The number as stored text: ``7`` rather than ``7.0``, otherwise the shortest exact form."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def text_problems(path: str, value: Any, *, required: bool) -> list[str]:
    if value is None:
        return [f"{path}: is missing"] if required else []
    if not isinstance(value, str):
        return [f"{path}: must be text"]
    if required and not value.strip():
        return [f"{path}: must not be empty"]
    return []


def unknown_key_problems(path: str, item: dict[str, Any], allowed: Sequence[str]) -> list[str]:
    return [f"{path}.{name}: not a field here (use {', '.join(allowed)})" for name in item if name not in allowed]


def choice_problems(options: dict[str, Any]) -> list[str]:
    """``options.choices``: at least two ``{value, label, description?}`` with distinct values."""
    choices = options.get("choices")
    if not isinstance(choices, list):
        return ["options.choices: give a list of choices, each {value, label}"]
    problems = []
    if len(choices) < 2:
        problems.append("options.choices: give at least two choices")
    seen: set[str] = set()
    for index, choice in enumerate(choices):
        path = f"options.choices[{index}]"
        if not isinstance(choice, dict):
            problems.append(f"{path}: must be an object with a value and a label")
            continue
        problems.extend(unknown_key_problems(path, choice, ("value", "label", "description")))
        value = choice.get("value")
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{path}.value: must be non-empty text")
        elif value != value.strip() or len(value) > CHOICE_VALUE_MAX_LENGTH:
            problems.append(f"{path}.value: use at most {CHOICE_VALUE_MAX_LENGTH} characters, no outer spaces")
        elif value in seen:
            problems.append(f"{path}.value: {value!r} is already the value of an earlier choice")
        else:
            seen.add(value)
        problems.extend(text_problems(f"{path}.label", choice.get("label"), required=True))
        if "description" in choice:
            problems.extend(text_problems(f"{path}.description", choice["description"], required=False))
    return problems


def choice_values(options: dict[str, Any]) -> list[str]:
    choices = options.get("choices")
    return [c.get("value") for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []
