"""Add a file's responses to episodes already stored (a scores file's, or an episode line's whose
episode the team has).

A response of a respondent the stored episode has no response from (for that instrument and seat) is
added whole; one that matches a stored response adds the answers it leaves open (per question and
target). An answer the episode already has with the same value is unchanged; a different value is
refused, naming the place in the file, since an import never overwrites. The stored episodes are read
in a few queries per 500 (``load_stored``), however many responses the file adds.

Functions of the file's :class:`saving.Saver`, which holds the lookups and the rows to create.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.db.models import Prefetch

from ..instruments.targets import EPISODE, GOAL, Target
from ..models import Answer, Episode, Response
from .lookups import chunks
from .records import TEXT_SCENARIO_PREFIX, EpisodeDraft
from .responses import AnswerDraft, EpisodeResponsesDraft, ResponseDraft
from .saving_responses import answer_row, instrument_of, respondent_of, save_response

if TYPE_CHECKING:
    from .saving import Saver


def load_stored(saver: Saver) -> None:
    """The stored episodes the file gives responses for, with their seats, roles and responses (with
    answers): a few queries per 500 episodes, however many responses the file adds."""
    wanted = {draft.episode_id for draft in saver.drafts if isinstance(draft, EpisodeResponsesDraft)}
    wanted.update(
        draft.external_id for draft in saver.drafts
        if isinstance(draft, EpisodeDraft) and draft.responses and draft.external_id in saver.episode_ids
    )
    responses = Response.objects.exclude(status=Response.Status.SUPERSEDED).prefetch_related("answers")
    for chunk in chunks(wanted):
        for episode in (
            Episode.objects.of_team(saver.team).filter(external_id__in=chunk).select_related("scenario")
            .prefetch_related("seats", "scenario__roles__goals", Prefetch("responses", queryset=responses))
        ):
            saver.stored[episode.external_id] = episode
            for role in episode.scenario.roles.all():
                saver.stored_goals.update(((role.pk, goal.position), goal) for goal in role.goals.all())


def responses_for_stored(saver: Saver, draft: EpisodeResponsesDraft) -> None:
    """A scores file's responses for one episode: added to the stored episode, which must play the
    scenario the file names; an episode the team lacks is refused or listed, as the format says."""
    episode = saver.stored.get(draft.episode_id)
    if episode is None:
        if draft.when_missing == EpisodeResponsesDraft.LIST:
            saver.not_stored.append(draft.episode_id)
            return
        raise draft.origin.at(draft.id_field).problem(
            f"episode {draft.episode_id!r} is not in Parley (in this team); import the episode first"
        )
    stored_scenario = episode.scenario.external_id or ""
    if stored_scenario.startswith(TEXT_SCENARIO_PREFIX) and draft.scenario_id is not None:
        saver.result.note(
            "some episodes play a scenario built from a log's text, which has no environment id: the file's "
            f"{draft.scenario_field} could not be checked for them"
        )
    elif draft.scenario_id is not None and draft.scenario_id != stored_scenario:
        raise draft.origin.at(draft.scenario_field).problem(
            f"episode {draft.episode_id!r} plays scenario {episode.scenario.external_id!r} in Parley, "
            f"not {draft.scenario_id!r}"
        )
    add_to_stored(saver, draft.episode_id, draft.responses)


def add_to_stored(saver: Saver, episode_id: str, responses: list[ResponseDraft]) -> None:
    """Add to a stored episode what ``responses`` hold and it lacks; count it changed, else unchanged.

    A file response is matched to the episode's stored response of the same instrument, respondent
    and seat (one whose answers are the same, if the respondent has several); unmatched, it is a new
    response. A judge answers once, so a file naming one judge twice is refused as it is for new episodes.
    """
    episode = saver.stored.get(episode_id)
    if episode is None:  # nothing to add: the file gives no responses for it
        saver.result.unchanged["episode"] += 1
        return
    roles = {role.position: role for role in episode.scenario.roles.all()}
    seats = sorted(seat.position for seat in episode.seats.all())
    stored = list(episode.responses.all())
    answered: set[tuple[int, int, int | None]] = set()
    matched: set[int] = set()
    before = saver.result.created["answer"]
    for draft in responses:
        for answer in draft.answers:
            if answer.seat_position is not None and answer.seat_position not in seats:
                raise answer.origin.at("seat").problem(
                    f"episode {episode_id!r} has no seat {answer.seat_position} "
                    f"(seats: {', '.join(map(str, seats))})"
                )
        instrument, questions = instrument_of(saver, draft, episode.scenario)
        respondent = respondent_of(saver, draft)
        key = (instrument.pk, respondent.pk, draft.seat_position)
        same = [
            response for response in stored
            if (response.instrument_id, response.respondent_id, response.seat_position) == key
            and response.pk not in matched
        ]
        if instrument.pk is None or not same:
            save_response(saver, draft, episode, roles, answered)
            continue
        answered.add(key)  # a second response of this judge in the file is refused as a new one
        rows = [answer_row(saver, answer, same[0], questions, roles) for answer in draft.answers]
        target = next((response for response in same if _unchanged(response, rows)), None)
        if target is None and len(same) > 1:
            raise draft.origin.problem(
                f"episode {episode_id!r} has {len(same)} responses of {respondent} to {instrument}, none with "
                "exactly these answers; Parley cannot tell which one this file adds to"
            )
        target = target or same[0]
        matched.add(target.pk)
        add_answers(saver, target, rows, draft)
    if saver.result.created["answer"] > before:
        saver.result.changed["episode"] += 1
    else:
        saver.result.unchanged["episode"] += 1


def add_answers(saver: Saver, response: Response, rows: list[Answer], draft: ResponseDraft) -> None:
    """Answers to questions (per target: seat, goal...) the stored response leaves open are added; where it has
    an answer, the file's must be the same (its reasoning, when it differs, is not kept)."""
    stored: dict[tuple[int, Target], list[Answer]] = {}
    for answer in response.answers.all():
        stored.setdefault(_place(answer), []).append(answer)
    given: dict[tuple[int, Target], list[tuple[Answer, AnswerDraft]]] = {}
    for row, answer in zip(rows, draft.answers, strict=True):
        row.response = response
        given.setdefault(_place(row), []).append((row, answer))
    for place, pairs in given.items():
        kept = stored.get(place)
        if not kept:
            saver.new[Answer].extend(row for row, _ in pairs)
            saver.result.created["answer"] += len(pairs)
            continue
        if sorted(map(_value, kept)) != sorted(_value(row) for row, _ in pairs):
            row, answer = pairs[0]
            target = Target.of(row)
            about = "" if target.kind in (EPISODE, GOAL) else f" for {target.describe()}"
            raise answer.origin.problem(
                f"{response.respondent} already answered {row.question.key!r}{about} of episode "
                f"{response.episode.external_id!r} with {_shown(kept)}; this file gives "
                f"{_shown(row for row, _ in pairs)}. "
                "An import never overwrites an answer: delete that response first, or import these answers "
                "under another prompt version"
            )
        reasons = {answer.reasoning for answer in kept}
        differ = sum(1 for row, _ in pairs if row.reasoning and row.reasoning not in reasons)
        if differ:
            saver.result.ignored["reasoning"] += differ
            saver.result.note(
                "Where an answer was already stored with the same value, its stored reasoning was kept "
                "and the file's different reasoning was not."
            )


def list_not_stored(saver: Saver) -> None:
    if not saver.not_stored:
        return
    count = len(saver.not_stored)
    shown = ", ".join(saver.not_stored[:5]) + (", ..." if count > 5 else "")
    saver.result.note(
        f"{count} episode(s) the file scores are not in Parley, so their scores were not imported "
        f"(nothing was invented for them): {shown}"
    )
    saver.result.details.append(f"episodes not in Parley: {', '.join(saver.not_stored)}")


def _place(answer: Answer) -> tuple[int, Target]:
    """What an answer answers: its question, about which target (a multi-label answer: several rows)."""
    return answer.question_id, Target.of(answer)


def _value(answer: Answer) -> tuple[str, float | str]:
    return ("number", answer.number) if answer.number is not None else ("value", answer.value)


def _shown(answers: Iterable[Answer]) -> str:
    return ", ".join(sorted(f"{a.number:g}" if a.number is not None else repr(a.value) for a in answers))


def _unchanged(response: Response, rows: list[Answer]) -> bool:
    """The stored response has exactly these answers (questions, targets and values)."""
    def values(answers: Iterable[Answer]) -> list[tuple[object, ...]]:
        return sorted((answer.question_id, Target.of(answer).sort_key, *_value(answer)) for answer in answers)

    return values(response.answers.all()) == values(rows)
