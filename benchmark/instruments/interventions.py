"""ProMediate's per-intervention ratings: which turns are rated, what a rater reads first, and one
respondent's answers for one turn.

An **intervention** is a turn the mediator took after its welcome: the opening line only greets, so
ProMediate rates every mediator turn but the first (spec PM-16; upstream's ``behavior_score.json`` has one
entry per such turn, in order). A rater — a person, the J3 judge, an imported upstream score — reads
the turns since the mediator last spoke (that turn included, as upstream passes it) and then the
intervention, and rates it on the four questions of the ``promediate-intervention`` preset, any of which
may be "not applicable" (stored as the value ``na`` with no number).

Who the mediator is: none when the episode's ``settings["promediate"]["mediator"]`` is ``none``
(ProMediate's NoAgent condition: no interventions); else the seat that ``settings["promediate"]
["mediator_position"]`` names, on the episode when a simulation recorded it, else on its scenario when
the episode has that seat (the case importer records the Mediator's role, whose position its seat
takes); else the seat whose character is called "Mediator" (as ProMediate's cases name it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from ..models import Answer, Episode, Instrument, Respondent, Response, Seat, Turn
from .kinds.base import NOT_APPLICABLE, format_number
from .presets import INTERVENTION_DIMENSIONS, PROMEDIATE_INTERVENTION_PRESET, install_preset
from .targets import Target

MEDIATOR_NAME = "mediator"
# What upstream ProMediate writes for "not applicable"; accepted as None.
UPSTREAM_NOT_APPLICABLE = -1


class InterventionAnswerError(ValueError):
    """An MI answer that cannot be stored: the message names the episode, turn and question."""


def mediator_position(episode: Episode) -> int | None:
    """The mediator's seat position in ``episode``, or None when it has no mediator."""
    recorded = _promediate_settings(episode.settings)
    if recorded.get("mediator") == "none":
        return None
    if "mediator_position" in recorded:
        return _position(recorded["mediator_position"])
    seats = list(Seat.objects.filter(episode=episode).select_related("character").order_by("position"))
    position = _position(_promediate_settings(episode.scenario.settings).get("mediator_position"))
    if position is not None and any(seat.position == position for seat in seats):
        return position
    for seat in seats:
        if seat.character.first_name.strip().lower() == MEDIATOR_NAME and not seat.character.last_name.strip():
            return seat.position
    return None


def _promediate_settings(settings: object) -> dict:
    recorded = settings.get("promediate") if isinstance(settings, dict) else None
    return recorded if isinstance(recorded, dict) else {}


def _position(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def intervention_turns(episode: Episode) -> list[Turn]:
    """The mediator's turns after its welcome, in order: the turns a per-intervention question rates."""
    position = mediator_position(episode)
    if position is None:
        return []
    turns = list(Turn.objects.filter(episode=episode, seat__position=position).order_by("index"))
    return turns[1:] if turns and turns[0].index == _first_index(episode) else turns


def intervention_context(episode: Episode, turn_index: int, *, window: int | None = None) -> list[Turn]:
    """What a rater reads before intervention ``turn_index``: the turns from the mediator's previous turn
    (included) up to the intervention (excluded), as upstream's MI judge is given them; with ``window``,
    the ``window`` turns just before it instead."""
    before = Turn.objects.filter(episode=episode, index__lt=turn_index).select_related("seat__character")
    if window is not None:
        return list(reversed(before.order_by("-index")[:window]))
    position = mediator_position(episode)
    previous = (
        before.filter(seat__position=position).order_by("-index").values_list("index", flat=True).first()
        if position is not None
        else None
    )
    return list(before.filter(index__gte=previous or 0).order_by("index"))


def intervention_instrument() -> Instrument:
    """The per-intervention instrument, installed on first use."""
    return install_preset(PROMEDIATE_INTERVENTION_PRESET)


def store_intervention_answers(
    episode: Episode,
    turn_index: int,
    respondent: Respondent,
    scores: Mapping[str, Any],
    *,
    comment: str = "",
    reasoning: Mapping[str, str] | None = None,
    instrument: Instrument | None = None,
) -> Response:
    """Store one respondent's answers about one intervention, replacing any it gave for that turn before.

    ``scores`` maps each of the four dimensions to 1–5 or None (not applicable; upstream's -1 means the
    same). The respondent's one submitted response to the instrument about the episode holds its answers
    for every intervention. All or nothing: a bad score stores none of the turn's answers.
    """
    instrument = instrument or intervention_instrument()
    where = f"episode {episode.pk}, turn {turn_index}"
    if turn_index not in {turn.index for turn in intervention_turns(episode)}:
        raise InterventionAnswerError(
            f"{where}: not a mediator intervention (the mediator's turns after its welcome are rated)"
        )
    unknown = sorted(set(scores) - set(INTERVENTION_DIMENSIONS))
    missing = [key for key in INTERVENTION_DIMENSIONS if key not in scores]
    if unknown or missing:
        raise InterventionAnswerError(
            f"{where}: give a score for each of {', '.join(INTERVENTION_DIMENSIONS)}"
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
        )
    questions = {question.key: question for question in instrument.questions.all()}
    rows = []
    for key in INTERVENTION_DIMENSIONS:
        value, number = _score(scores[key], questions[key], where)
        rows.append(
            Answer(
                question=questions[key],
                value=value,
                number=number,
                reasoning=(reasoning or {}).get(key, ""),
                **Target.of_turn(turn_index).columns(),
            )
        )
    if comment.strip() and "comment" in questions:
        rows.append(
            Answer(question=questions["comment"], value=comment.strip(), **Target.of_turn(turn_index).columns())
        )
    with transaction.atomic():
        response = (
            Response.objects.filter(
                instrument=instrument,
                episode=episode,
                respondent=respondent,
                seat_position__isnull=True,
                status=Response.Status.SUBMITTED,
            )
            .order_by("pk")
            .first()
        )
        if response is None:
            response = Response.objects.create(instrument=instrument, episode=episode, respondent=respondent)
        response.answers.filter(turn=turn_index, end_turn__isnull=True).delete()
        for row in rows:
            row.response = response
        Answer.objects.bulk_create(rows)
    return response


def _score(score: Any, question: Any, where: str) -> tuple[str, float | None]:
    """(value, number) of one score: a whole number within the question's range, or None / -1 / "na"."""
    if (
        score is None
        or score == UPSTREAM_NOT_APPLICABLE
        or (isinstance(score, str) and score.strip().lower() in (NOT_APPLICABLE, "n/a", "not applicable"))
    ):
        return NOT_APPLICABLE, None
    if (
        isinstance(score, bool)
        or not isinstance(score, int | float)
        or not float(score).is_integer()
        or not (question.low <= score <= question.high)
    ):
        raise InterventionAnswerError(
            f"{where}, {question.key}: {score!r} is not a score; give a whole number from {question.low:g} to "
            f"{question.high:g}, or None for not applicable"
        )
    return format_number(float(score)), float(score)


def _first_index(episode: Episode) -> int | None:
    return Turn.objects.filter(episode=episode).order_by("index").values_list("index", flat=True).first()
