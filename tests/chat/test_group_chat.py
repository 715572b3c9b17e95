"""A participant in one seat of a three-party scenario, agents in the other two, over the real socket.

Who should speak when is computed here with ``benchmark.scenarios.turn_taking.next_speaker`` (the
policy agent-only runs use) from the episode's stored seed, and compared with what the socket
did. Marked ``concurrency``: ``make test`` runs them on PostgreSQL with Redis and again on SQLite
with the in-memory channel layer.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from itertools import count
from uuid import uuid4

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from benchmark.models import ActionType, Episode, Seat, Turn, TurnTaking
from benchmark.scenarios.turn_taking import next_speaker, speaking_order
from chat.assignment import create_chat_episode
from chat.models import ChatStudy, Participant
from tests.builders import default_team, get_barrier, make_character, make_scenario, make_user
from tests.chat.conftest import session_for

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db(transaction=True, serialized_rollback=True)]
_numbers = count(1)
NAMES = ("Ana Greeter", "Ben Middle", "Cleo Last")


@dataclass
class GroupChat:
    study: ChatStudy
    participant: Participant
    episode: Episode
    session_key: str
    seed: int
    policy: str
    greeter: int | None

    @property
    def path(self) -> str:
        return f"/ws/chat/{self.study.slug}/"

    def order(self, length: int) -> list[int]:
        """The seat positions of the first ``length`` turns, as the scenario's policy deals them."""
        spoken: list[int] = []
        for _ in range(length):
            spoken.append(next_speaker(self.policy, [0, 1, 2], spoken, seed=self.seed, greeter=self.greeter))
        return spoken


def make_group_chat(
    *, human_position: int = 1, turn_cap: int = 12, policy: str = TurnTaking.RANDOM_AFTER_GREETING,
    seed: int | None = None, wants: list[int] | None = None,
) -> GroupChat:
    """A three-role scenario and a participant in its chat, as consent assigns it. ``wants``: the speaking
    order must start with these positions; the first seed (from 0) that deals them is used."""
    number = next(_numbers)
    greeter = 0 if policy == TurnTaking.RANDOM_AFTER_GREETING else None
    team = default_team()
    scenario = make_scenario(
        roles=[{"character": make_character(team=team, first_name=name.split()[0], last_name=name.split()[1])}
               for name in NAMES],
        team=team, turn_taking=policy, greeter_position=greeter, turn_cap=turn_cap,
        context="Three neighbours plan the building's summer party.",
    )
    study = ChatStudy.objects.create(
        team=team, slug=f"group-{number}-{uuid4().hex[:6]}", title=f"Group {number}", created_by=make_user(staff=True),
        human_position=human_position, agent_model="scripted", completion_code="C0MPLETE", min_participant_turns=0,
    )
    study.scenarios.add(scenario)
    episode = create_chat_episode(study, scenario, get_barrier("none"))
    chat_seed = seed if seed is not None else episode.settings["seed"]
    if wants is not None:
        chat_seed = next(s for s in range(10_000) if _order(policy, s, greeter, len(wants)) == wants)
    episode.settings = {**episode.settings, "seed": chat_seed}
    episode.status, episode.started_at = Episode.Status.RUNNING, timezone.now()
    episode.save(update_fields=["settings", "status", "started_at"])
    browser = secrets.token_urlsafe(24)
    participant = Participant.objects.create(
        study=study, participant_id=f"group-pid-{number}", stage=Participant.Stage.CHAT, scenario=scenario,
        barrier=episode.barrier, episode=episode, consented_at=timezone.now(), browser_token=browser,
    )
    return GroupChat(study, participant, episode, session_for({str(study.pk): participant.pk}, browser=browser),
                     chat_seed, policy, greeter)


def _order(policy: str, seed: int, greeter: int | None, length: int) -> list[int]:
    spoken: list[int] = []
    for _ in range(length):
        spoken.append(next_speaker(policy, [0, 1, 2], spoken, seed=seed, greeter=greeter))
    return spoken


@pytest.fixture
def group_chat():
    return database_sync_to_async(make_group_chat)


@database_sync_to_async
def store_turns(chat: GroupChat, positions: list[int], *, leaves: tuple[int, ...] = ()) -> None:
    """Turns as if spoken already (a reconnect finds them), each by the seat the order gives it; the turns at
    the indices in ``leaves`` are leaves."""
    seats = {seat.position: seat for seat in chat.episode.seats.all()}
    for index, position in enumerate(positions):
        action = ActionType.LEAVE if index in leaves else ActionType.SPEAK
        Turn.objects.create(episode=chat.episode, index=index, seat=seats[position], action_type=action,
                            content="" if index in leaves else f"Line {index}.",
                            client_id=uuid4().hex if seats[position].player == Seat.Player.HUMAN else None)


@database_sync_to_async
def hold_agent_lease(chat: GroupChat) -> None:
    """Another server process is writing the agent's turn (its lease is live), so this one waits."""
    Participant.objects.filter(pk=chat.participant.pk).update(
        agent_lease_until=timezone.now() + timedelta(minutes=5), agent_lease_owner="elsewhere"
    )


async def test_after_the_greeting_the_agents_speak_in_the_policys_order_until_the_participants_turn(
    group_chat, sockets, stored_turns
):
    chat = await group_chat(human_position=1, wants=[0, 2, 0, 1])  # greeting, two agent turns, then the participant
    page = sockets(chat)
    assert await page.connect()

    history = await page.receive_until("history")
    await page.receive_until("turn", index=2)
    typings = [message for message in page.seen if message["type"] == "typing"]
    turns = [message for message in page.seen if message["type"] == "turn"]

    assert history["speakers"] == [
        {"seat": 0, "name": NAMES[0], "you": False, "left": False},
        {"seat": 1, "name": NAMES[1], "you": True, "left": False},
        {"seat": 2, "name": NAMES[2], "you": False, "left": False},
    ]
    assert [speaker["seat"] for speaker in history["upcoming"]] == chat.order(4)
    assert [(t["seat"], t["speaker"]) for t in typings] == [(0, NAMES[0]), (2, NAMES[2]), (0, NAMES[0])]
    assert [(t["seat"], t["side"], t["next"]) for t in turns] == [
        (0, "partner", "partner"), (2, "partner", "partner"), (0, "partner", "you")
    ]
    assert turns[2]["upcoming"][0] == {"seat": 1, "name": NAMES[1], "you": True}
    assert await page.nothing_more()  # the participant's turn: no fourth agent turn starts
    assert [position for _, position, _, _ in await stored_turns(chat.episode.pk)] == [0, 2, 0]


async def test_after_the_participant_speaks_the_next_agents_follow_in_order(group_chat, sockets, stored_turns):
    chat = await group_chat(human_position=0, policy=TurnTaking.ROUND_ROBIN, turn_cap=12)
    page = sockets(chat)
    await page.connect()
    history = await page.receive_until("history")
    assert history["next"] == {"index": 0, "side": "you"}

    await page.act("Hello both of you!")
    await page.receive_until("turn", index=2)
    replies = [message for message in page.seen if message["type"] == "turn" and message["side"] == "partner"]

    assert [(r["seat"], r["speaker"]) for r in replies] == [(1, NAMES[1]), (2, NAMES[2])]
    assert replies[-1]["next"] == "you"
    assert [position for _, position, _, _ in await stored_turns(chat.episode.pk)] == [0, 1, 2]


async def test_a_message_out_of_turn_is_refused_and_not_stored(group_chat, sockets, stored_turns):
    chat = await group_chat(human_position=1, wants=[0, 2, 0, 1])
    await store_turns(chat, [0])  # the greeting is in; seat 2 speaks next
    await hold_agent_lease(chat)
    page = sockets(chat)
    await page.connect()
    history = await page.receive_until("history")

    client_id = await page.act("Me first!")
    refusal = await page.receive_until("error")

    assert history["next"] == {"index": 1, "side": "partner"}
    assert (refusal["code"], refusal["client_id"]) == ("not_your_turn", client_id)
    assert len(await stored_turns(chat.episode.pk)) == 1


async def test_a_page_reconnecting_mid_sequence_gets_the_whole_state_and_the_agents_go_on(
    group_chat, sockets, stored_turns
):
    chat = await group_chat(human_position=2, wants=[0, 1, 2, 1, 0, 2])
    await store_turns(chat, [0, 1, 2, 1])  # the participant spoke at turn 2; seat 0 is due at turn 4
    page = sockets(chat)
    await page.connect()

    history = await page.receive_until("history")
    turn = await page.receive_until("turn", index=4)

    assert [(t["index"], t["seat"], t["speaker"], t["side"]) for t in history["turns"]] == [
        (0, 0, NAMES[0], "partner"), (1, 1, NAMES[1], "partner"), (2, 2, NAMES[2], "you"), (3, 1, NAMES[1], "partner"),
    ]
    assert history["next"] == {"index": 4, "side": "partner"}
    assert [speaker["seat"] for speaker in history["upcoming"]] == chat.order(8)[4:8]
    assert (turn["seat"], turn["next"]) == (0, "you")
    assert [position for _, position, _, _ in await stored_turns(chat.episode.pk)] == [0, 1, 2, 1, 0]


async def test_the_turn_cap_ends_a_group_chat_and_no_agent_speaks_past_it(group_chat, sockets, stored_turns, reload):
    chat = await group_chat(human_position=1, policy=TurnTaking.ROUND_ROBIN, turn_cap=5)
    await store_turns(chat, [0, 1, 2, 0])  # the participant has the last turn under the cap
    page = sockets(chat)
    await page.connect()
    history = await page.receive_until("history")
    assert [speaker["seat"] for speaker in history["upcoming"]] == [1]  # nobody is shown past the cap

    await page.act("Then that is settled. Bye!")
    last = await page.receive_until("turn", index=4)
    ended = await page.receive_until("ended")

    assert (last["next"], last["upcoming"]) == (None, [])
    assert ended["reason"] == Episode.EndReason.TURN_CAP
    assert len(await stored_turns(chat.episode.pk)) == 5
    episode = await reload(chat.episode)
    assert (episode.status, episode.end_reason) == (Episode.Status.FINISHED, Episode.EndReason.TURN_CAP)


async def test_the_participants_leave_ends_a_group_chat(group_chat, sockets, stored_turns):
    chat = await group_chat(human_position=0, policy=TurnTaking.ROUND_ROBIN)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    await page.act("", action_type=ActionType.LEAVE)
    ended = await page.receive_until("ended")

    assert (ended["reason"], ended["message"]) == (Episode.EndReason.LEAVE, "You left the conversation.")
    assert len(await stored_turns(chat.episode.pk)) == 1  # no agent speaks after the participant left


async def test_an_agent_that_leaves_is_stepped_round_and_the_chat_goes_on(group_chat, sockets, stored_turns, reload):
    chat = await group_chat(human_position=0, policy=TurnTaking.ROUND_ROBIN, turn_cap=11)
    await store_turns(chat, [0, 1, 2, 0, 1, 2, 0, 1])  # Cleo (seat 2) is due at turn 8, her last before the cap
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    left = await page.receive_until("turn", index=8)

    assert (left["seat"], left["speaker"], left["action_type"]) == (2, NAMES[2], ActionType.LEAVE)
    assert (left["next"], [speaker["seat"] for speaker in left["upcoming"]]) == ("you", [0, 1])
    assert await page.nothing_more()  # no end, and no agent turn: it is the participant's
    assert (await reload(chat.episode)).status == Episode.Status.RUNNING

    await page.act("Ben, it is just us then.")
    await page.receive_until("turn", index=10)  # Ben answers: Cleo is stepped round
    assert [position for _, position, _, _ in await stored_turns(chat.episode.pk)][8:] == [2, 0, 1]


async def test_the_chat_ends_when_the_last_other_seat_leaves(group_chat, sockets, stored_turns, reload):
    chat = await group_chat(human_position=0, policy=TurnTaking.ROUND_ROBIN, turn_cap=6)
    await store_turns(chat, [0, 1, 2, 0], leaves=(1,))  # Ben left at turn 1; Cleo's turn 4 is her last
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    last = await page.receive_until("turn", index=4)
    ended = await page.receive_until("ended")

    assert (last["seat"], last["action_type"], last["next"], last["upcoming"]) == (2, ActionType.LEAVE, None, [])
    assert ended == {"type": "ended", "reason": Episode.EndReason.LEAVE,
                     "message": "Everyone else has left the conversation.", "outcome": "questions"}
    episode = await reload(chat.episode)
    assert (episode.status, episode.end_reason) == (Episode.Status.FINISHED, Episode.EndReason.LEAVE)
    assert len(await stored_turns(chat.episode.pk)) == 5  # ended before the cap of 6


async def test_a_page_reconnecting_after_a_leave_knows_who_left_and_who_is_next(group_chat, sockets, stored_turns):
    # greeting by seat 0, then agent seat 2 speaks (and leaves), then the participant: a seed that deals
    # this order, so the test does not depend on the episode's random seed
    chat = await group_chat(human_position=1, turn_cap=14, wants=[0, 2, 1])
    leaver, leave_at = 2, 1
    spoken = chat.order(leave_at + 1)
    await store_turns(chat, spoken, leaves=(leave_at,))
    await hold_agent_lease(chat)  # nobody speaks meanwhile: this is about what the page is told
    expected = speaking_order(chat.policy, (0, 1, 2), 14, seed=chat.seed, greeter=chat.greeter,
                              leaves=((leave_at, leaver),))
    page = sockets(chat)
    await page.connect()

    history = await page.receive_until("history")

    assert [(s["seat"], s["left"]) for s in history["speakers"]] == [(p, p == leaver) for p in (0, 1, 2)]
    assert history["turns"][leave_at]["action_type"] == ActionType.LEAVE
    assert history["turns"][leave_at]["speaker"] == NAMES[leaver]
    assert history["ended"] is None
    upcoming = [speaker["seat"] for speaker in history["upcoming"]]
    assert upcoming == list(expected[leave_at + 1:leave_at + 5])
    assert leaver not in upcoming


async def test_a_resent_turn_after_an_agents_leave_is_stored_once(group_chat, sockets, stored_turns):
    chat = await group_chat(human_position=0, policy=TurnTaking.ROUND_ROBIN, turn_cap=12)
    await store_turns(chat, [0, 1], leaves=(1,))  # Ben left; Cleo speaks next, then the participant
    await hold_agent_lease(chat)
    page = sockets(chat)
    await page.connect()
    history = await page.receive_until("history")
    assert history["next"] == {"index": 2, "side": "partner"}

    refusal_id = await page.act("Too early.")
    refusal = await page.receive_until("error")
    assert (refusal["code"], refusal["client_id"]) == ("not_your_turn", refusal_id)
    await store_turns_after(chat, 2, position=2)  # Cleo's turn arrives from another process
    client_id = await page.act("Now me.")
    first = await page.receive_until("ack")
    await page.act("Now me.", client_id=client_id)  # the page resends after a dropped frame
    second = await page.receive_until("ack")

    assert first["index"] == second["index"] == 3
    assert [position for _, position, _, _ in await stored_turns(chat.episode.pk)] == [0, 1, 2, 0]


@database_sync_to_async
def store_turns_after(chat: GroupChat, index: int, *, position: int) -> None:
    seat = chat.episode.seats.get(position=position)
    Turn.objects.create(episode=chat.episode, index=index, seat=seat, content=f"Line {index}.")


async def test_a_page_that_missed_an_agents_leave_still_gets_its_turn(group_chat, sockets, stored_turns):
    # Seat 1 leaves in another process, so this page hears nothing of it: by the order it read, turn 4 would be
    # the leaver's. Storing checks the leaves against the transcript under the episode's lock, so it is the
    # participant's, as it is in truth.
    chat = await group_chat(human_position=2, policy=TurnTaking.ROUND_ROBIN, turn_cap=12)
    await store_turns(chat, [0])
    await hold_agent_lease(chat)
    page = sockets(chat)
    await page.connect()
    assert (await page.receive_until("history"))["next"] == {"index": 1, "side": "partner"}
    await store_leave(chat, 1, position=1)

    await page.act("Ben has gone, then.")
    assert (await page.receive_until("ack"))["index"] == 2
    await store_turns_after(chat, 3, position=0)
    await page.act("Just the two of us.")
    ack = await page.receive_until("ack")

    assert ack["index"] == 4
    assert [position for _, position, _, _ in await stored_turns(chat.episode.pk)] == [0, 1, 2, 0, 2]


@database_sync_to_async
def store_leave(chat: GroupChat, index: int, *, position: int) -> None:
    seat = chat.episode.seats.get(position=position)
    Turn.objects.create(episode=chat.episode, index=index, seat=seat, action_type=ActionType.LEAVE, content="")
