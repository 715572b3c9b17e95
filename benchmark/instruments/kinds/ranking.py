"""Ranking: the respondent puts all of the question's options in order, first = best.

``options.choices`` as for categorical (at least two, distinct values). An answer is one
``Answer`` row whose ``value`` is the order as a JSON list of the choices' values, each exactly
once (``["b", "a", "c"]``), written by ``json.dumps`` so the same order is always the same text:
one row keeps the order intact through every path (forms, the judge, exports, imports), and the
database checks it as one value (``RANKED``). A form posts the field once per place, in order
(the widget's n menus "1st", "2nd", ...), a model replies with a JSON list, an import or a CSV
cell holds the JSON text. A respondent may not tie two options: every place holds one option
(the statistic's tie correction is there for rankings made elsewhere). Offline
(``scripted_answer``) the options are ordered by the words they share with the transcript.

The majority of several respondents is the order of the options by their **mean rank** (ties
between means kept in the question's order; ``benchmark.stats.ranking.mean_rank_order``). The
agreement statistic is **Kendall's W** per item, averaged over items
(``benchmark.stats.ranking.kendall_w_by_item``; Kendall & Babington Smith 1939).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from benchmark.stats.ranking import kendall_w_by_item, mean_rank_order

from . import register
from .base import SCRIPTED, DbCheck, QuestionKind, Reply, choice_labels, choice_problems, overlap, words

# A JSON list of strings (what json.dumps writes for one): checked before PostgreSQL casts it, so a
# malformed value is refused with the kind's message rather than a cast error.
_JSON_STRING = r'"([^"\\]|\\(["\\/bfnrt]|u[0-9a-fA-F]{4}))*"'
_JSON_STRING_LIST = rf"^\[\s*({_JSON_STRING}\s*(,\s*{_JSON_STRING}\s*)*)?\]$"

RANKED = DbCheck(
    "ranked", 40,
    "a ranking does not list every choice once (a JSON list of the choices' values)",
    # SQLite: CASE keeps json_* off a value that is not JSON (they raise on it).
    "CASE WHEN json_valid({a}.value) AND json_type({a}.value) = 'array' THEN "
    "json_array_length({a}.value) <> json_array_length(q.options, '$.choices') "
    "OR (SELECT count(DISTINCT v.value) FROM json_each({a}.value) AS v WHERE v.type = 'text' AND EXISTS ("
    "SELECT 1 FROM json_each(q.options, '$.choices') AS c WHERE json_extract(c.value, '$.value') = v.value)) "
    "<> json_array_length(q.options, '$.choices') ELSE 1 END",
    f"""CASE WHEN p_value ~ '{_JSON_STRING_LIST}' AND jsonb_typeof(p_options -> 'choices') = 'array' THEN
            jsonb_array_length(p_value::jsonb) <> jsonb_array_length(p_options -> 'choices')
            OR (SELECT count(DISTINCT ranked) FROM jsonb_array_elements_text(p_value::jsonb) AS ranked
                WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(p_options -> 'choices') AS choice
                              WHERE choice ->> 'value' = ranked)) <> jsonb_array_length(p_options -> 'choices')
        ELSE true END""",
    "format('%L does not list every choice once', p_value)",
)


@register
class Ranking(QuestionKind):
    """``options.choices``: at least two ``{value, label, description?}``; the answer orders all of them."""

    name = "ranking"
    label = "ranking (order the options)"
    order = 95
    option_names = ("choices",)
    participants = True
    widget_template = "instruments/kinds/_ranking.html"
    posts_several = True  # one menu per place; one row
    agreement = "own"
    export_columns = ("value",)
    db_checks = (RANKED,)

    def option_problems(self, options: dict[str, Any]) -> list[str]:
        return choice_problems(options)

    def values(self, question: Any) -> list[str]:
        """The choices' values, in the question's order."""
        return [str(choice.get("value")) for choice in self.choices(question)]

    # --- one answer -----------------------------------------------------------------------------

    def check_value(self, question: Any, value: str) -> tuple[str, float | None, str]:
        """The order as JSON text (``["b", "a"]``); the stored text is the canonical ``json.dumps``."""
        try:
            order = json.loads(value)
        except ValueError:
            return value, None, f"give the order as a JSON list; {self.what_to_answer(question)}"
        if not isinstance(order, list) or not all(isinstance(item, str) for item in order):
            return value, None, f"give the order as a list of the choices' values; {self.what_to_answer(question)}"
        return self.check_order(question, order)

    def check_values(self, question: Any, values: Sequence[str]) -> tuple[list[str], str]:
        """A form's posted places, in order: the one value to store (``[json text]``) and a problem.

        A place left empty is not an option placed, so the message names what is still missing. The
        text is returned with a problem too: a draft keeps what was placed so far.
        """
        placed = [str(item).strip() for item in values if str(item).strip()]
        if len(placed) == 1 and placed[0].startswith("["):  # the whole order in one field (a CSV cell, as stored)
            stored, _, problem = self.check_value(question, placed[0])
            return [stored], problem
        stored, _, problem = self.check_order(question, placed)
        return [stored], problem

    def check_order(self, question: Any, order: Sequence[str]) -> tuple[str, float | None, str]:
        """(stored text, None, problem) for an order given as a list of values."""
        known = self.values(question)
        text = json.dumps(list(order), ensure_ascii=False)
        unknown = [item for item in order if item not in known]
        if unknown:
            return text, None, f"{unknown[0]!r} is not one of the choices; {self.what_to_answer(question)}"
        repeated = [item for index, item in enumerate(order) if item in order[:index]]
        if repeated:
            return text, None, f"{repeated[0]!r} is placed twice; {self.what_to_answer(question)}"
        missing = [item for item in known if item not in order]
        if missing:
            labels = ", ".join(self.label_of(question, item) for item in missing)
            return text, None, f"place every choice (missing: {labels}); {self.what_to_answer(question)}"
        return text, None, ""

    def order_of(self, value: str) -> list[str]:
        """A stored answer's order (the list its JSON text holds); empty when it holds none."""
        try:
            order = json.loads(value)
        except ValueError:
            return []
        return [str(item) for item in order] if isinstance(order, list) else []

    def label_of(self, question: Any, value: str) -> str:
        return next((str(c.get("label") or value) for c in self.choices(question) if c.get("value") == value), value)

    def what_to_answer(self, question: Any) -> str:
        return f"put all of these in order, best first: {choice_labels(self, question)}."

    def summary(self, question: Any) -> tuple[str, list[dict[str, Any]]]:
        choices = self.choices(question)
        answer = "an order of: " + ", ".join(str(choice.get("label") or choice.get("value")) for choice in choices)
        return answer, [choice for choice in choices if choice.get("description")]

    def widget_data(self, question: Any, value: str) -> dict[str, Any]:
        """The widget's places (``places``) and the choices that carry a description (``descriptions``)."""
        described = [choice for choice in self.choices(question) if choice.get("description")]
        return {"places": self.places(question, value), "descriptions": described}

    def places(self, question: Any, value: str = "") -> list[dict[str, Any]]:
        """The widget's places, "1st" to "nth", each with the value already placed there (if any)."""
        order = self.order_of(value) if value else []
        return [
            {"number": index + 1, "ordinal": ordinal(index + 1), "value": order[index] if index < len(order) else ""}
            for index in range(len(self.choices(question)))
        ]

    # --- a model as respondent ------------------------------------------------------------------

    def instruction(self, question: Any) -> str:
        values = ", ".join(repr(value) for value in self.values(question))
        return f"a JSON list of all of these values in order, best first, each exactly once: {values}"

    def parse_reply(self, question: Any, reply: Any) -> Reply:
        """A JSON list (the instruction asks for one); a JSON list written as text is read too."""
        if isinstance(reply, str):
            text = reply.strip()
            if not text:
                return Reply("", None, f"the answer is empty; {self.what_to_answer(question)}")
            value, number, problem = self.check_value(question, text)
            return Reply(value if not problem else "", number, problem)
        if not isinstance(reply, list) or not all(isinstance(item, str | int | float) for item in reply):
            return Reply("", None, f"give a JSON list of the values; {self.what_to_answer(question)}")
        value, number, problem = self.check_order(question, [str(item).strip() for item in reply])
        return Reply(value if not problem else "", number, problem)

    def scripted_answer(self, question: Any, transcript: str) -> tuple[str, str] | None:
        """The options by how many words they share with the transcript, most first, ties in the question's order."""
        choices = self.choices(question)
        if not choices:
            return None
        said = words(transcript)
        scores = [overlap(str(choice.get("label", "")), said) for choice in choices]
        order = sorted(range(len(choices)), key=lambda index: -scores[index])  # stable: ties keep their order
        value = json.dumps([str(choices[index]["value"]) for index in order], ensure_ascii=False)
        return value, f"{SCRIPTED}: the options by the words they share with the transcript ({sorted(scores)[::-1]})."

    # --- several respondents --------------------------------------------------------------------

    def majority(self, question: Any, rows: Sequence[Any], respondents: int) -> list[tuple[str, float | None]]:
        """The order by mean rank over the rows that hold a full order (ties kept in the question's order)."""
        known = self.values(question)
        orders = [order for order in (self.order_of(row.value) for row in rows) if sorted(order) == sorted(known)]
        if not orders:
            return []
        return [(json.dumps(mean_rank_order(orders, known), ensure_ascii=False), None)]

    def agreement_statistic(self, question: Any, table: Any) -> dict[str, Any]:
        """Kendall's W per item over a long table (``item``, ``annotator``, ``value`` = stored JSON text), as a
        report entry: the counts, ``kendall_w`` (the mean over items), ``per_item``, its method and notes."""
        known = self.values(question)
        orders = table.assign(value=[self.order_of(value) for value in table["value"]])
        full = [sorted(order) == sorted(known) for order in orders["value"]]
        result = kendall_w_by_item(orders[full], known)
        notes = list(result.notes)
        if not all(full):
            notes.insert(0, f"kendall_w: {full.count(False)} answers that do not order every option left out")
        return {
            "type": "ranking",
            "n_items": result.n_items,
            "n_ratings": result.n_rankings,
            "excluded_items": result.excluded_items,
            "kendall_w": result.mean_w,
            "per_item": {str(item): w for item, w in result.per_item.items()},
            "own_statistics": [{"key": "kendall_w", "label": "Kendall's W, mean over items", "value": result.mean_w}],
            "methods": {"kendall_w": result.method},
            "notes": notes,
        }


def ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"
