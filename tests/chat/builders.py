"""Builders for chat tests: a chat study with its design, participants at any stage, a joined client.

They build on ``tests.builders`` and need a database (use them inside a ``db`` test).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import count
from typing import Any

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from benchmark.instrument_builder.transfer import create_instrument, questions_from_data
from benchmark.instruments.values import check_value
from benchmark.models import Answer, Episode, Response, Scenario, Seat, Turn
from chat.access import claim
from chat.answers import answer_table, participant_respondent
from chat.assignment import assign
from chat.models import ChatCondition, ChatStudy, Participant
from chat.questionnaire import default_instrument
from tests.builders import default_team, get_barrier, make_scenario, make_user

_numbers = count(1)


def make_chat_study(
    *,
    scenarios: int | Sequence[Scenario] = 2,
    conditions: Sequence[str] = ("none", "semantic"),
    target: int = 2,
    **fields: Any,
) -> ChatStudy:
    """A chat study over ``scenarios`` (a number of fresh two-role scenarios, or given ones) and
    ``conditions`` (barrier keys), each cell wanting ``target`` participants; the agent is scripted.
    ``questions`` (the instrument format, ``benchmark.instrument_builder.transfer``) replace the default
    questionnaire with a team instrument asking them; an empty list asks nothing."""
    questions = fields.pop("questions", None)
    number = next(_numbers)
    fields.setdefault("slug", f"chat-study-{number}")
    fields.setdefault("title", f"Chat study {number}")
    fields.setdefault("completion_code", f"CODE{number}")
    fields.setdefault("agent_model", "scripted")
    fields.setdefault("team", default_team())
    if "created_by" not in fields:
        fields["created_by"] = make_user(staff=True)
    if questions is not None:
        made = questions_from_data(questions) if questions else None
        fields["instrument"] = made and create_instrument(fields["team"], f"Questions of {fields['title']}", "", made)
    fields.setdefault("instrument", default_instrument())
    study = ChatStudy.objects.create(**fields)
    if isinstance(scenarios, int):
        chosen = [make_scenario(team=study.team) for _ in range(scenarios)]
    else:
        chosen = list(scenarios)
    study.scenarios.set(chosen)
    for key in conditions:
        ChatCondition.objects.create(study=study, barrier=get_barrier(key), target=target)
    return study


def make_participant(
    study: ChatStudy,
    *,
    participant_id: str | None = None,
    stage: str = Participant.Stage.BRIEFING,
    last_seen_at: datetime | None = None,
    **fields: Any,
) -> Participant:
    """A participant at ``stage``; from the briefing on they are assigned a cell and episode as by consent."""
    participant = Participant.objects.create(
        study=study, participant_id=participant_id or f"pid-{next(_numbers)}", **fields
    )
    if stage in (Participant.Stage.CONSENT, Participant.Stage.DECLINED):
        Participant.objects.filter(pk=participant.pk).update(stage=stage)
    else:
        participant = assign(participant)
        updates: dict[str, Any] = {"stage": stage}
        if stage == Participant.Stage.DONE:
            updates["finished_at"] = timezone.now()
        Participant.objects.filter(pk=participant.pk).update(**updates)
        if stage == Participant.Stage.CHAT:
            Episode.objects.filter(pk=participant.episode_id).update(
                status=Episode.Status.RUNNING, started_at=timezone.now()
            )
        elif stage in (Participant.Stage.QUESTIONNAIRE, Participant.Stage.DONE):
            Episode.objects.filter(pk=participant.episode_id).update(
                status=Episode.Status.FINISHED, end_reason=Episode.EndReason.LEAVE, finished_at=timezone.now()
            )
    if last_seen_at is not None:
        Participant.objects.filter(pk=participant.pk).update(last_seen_at=last_seen_at)
    participant.refresh_from_db()
    return participant


def entry_url(study: ChatStudy, participant_id: str | None = None, **query: str) -> str:
    url = reverse("chat:entry", args=[study.slug])
    if participant_id is not None:
        query = {"PROLIFIC_PID": participant_id, **query}
    if query:
        url += "?" + "&".join(f"{key}={value}" for key, value in query.items())
    return url


def join(
    client: Client, study: ChatStudy, participant_id: str, *, stage: str = Participant.Stage.BRIEFING
) -> Participant:
    """Open the study link as ``participant_id`` in ``client``, then walk the real pages up to ``stage``."""
    client.get(entry_url(study, participant_id))
    steps = [
        (Participant.Stage.BRIEFING, "chat:consent", {"decision": "agree"}),
        (Participant.Stage.CHAT, "chat:briefing", {}),
    ]
    for reached, page, data in steps:
        if stage == Participant.Stage.CONSENT:
            break
        client.post(reverse(page, args=[study.slug]), data)
        if stage == reached:
            break
    return Participant.objects.get(study=study, participant_id=participant_id)


def sign_in(client: Client, participant: Participant) -> None:
    """Bind the participant to ``client``'s browser session, as the study link does for a new id."""
    session = client.session
    assert claim(session, participant), "the participant is bound to another browser"
    session.save()


def chat_until(participant: Participant, participant_turns: int) -> None:
    """Store turns of the participant's episode, seats alternating in speaking order, until the
    participant has sent ``participant_turns`` and the agent has answered: it is their turn again."""
    seats = list(participant.episode.seats.order_by("position"))
    turns = participant.episode.turns
    index = turns.count()
    while (
        turns.filter(seat__player=Seat.Player.HUMAN).count() < participant_turns
        or seats[index % 2].player != Seat.Player.HUMAN
    ):
        Turn.objects.create(episode=participant.episode, index=index, seat=seats[index % 2], content=f"Turn {index}.")
        index += 1


def answers_of(participant: Participant) -> dict[str, str]:
    """The participant's stored answers as text by question key (what the CSV shows); empty before they answer."""
    participant.refresh_from_db(fields=["response"])
    return answer_table(None, [participant]).answers.get(participant.pk, {})


def give_answers(participant: Participant, answers: dict[str, str]) -> Response:
    """Store ``answers`` (text by key) as the participant's response to their study's questionnaire, as a
    submission would: each checked against its question, the instrument frozen."""
    instrument = participant.study.instrument
    questions = {question.key: question for question in instrument.questions.all()}
    response = Response.objects.create(
        instrument=instrument, episode=participant.episode, respondent=participant_respondent(participant)
    )
    for key, text in answers.items():
        value, number, problem = check_value(questions[key], text)
        assert not problem, problem
        Answer.objects.create(response=response, question=questions[key], value=value, number=number)
    Participant.objects.filter(pk=participant.pk).update(response=response)
    instrument.frozen_at = instrument.frozen_at or timezone.now()
    instrument.save(update_fields=["frozen_at"])
    return response
