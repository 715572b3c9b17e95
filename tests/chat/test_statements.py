"""Statements compiled once (``chat.statements``) give what their querysets give, run after run, on both databases."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from benchmark.models import Episode, Goal, Seat, Turn
from chat.models import Participant
from chat.statements import DATETIME, Insert, Param, Select, Update, prefetched
from chat.turns import GOALS, participants
from tests.chat.conftest import make_chat

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db]


def _turns(chat, count: int) -> list[Turn]:
    now = timezone.now()
    seats = (chat.agent_seat, chat.human_seat) if chat.agent_seat.position == 0 else (chat.human_seat, chat.agent_seat)
    return [
        Turn.objects.create(episode=chat.episode, index=i, seat=seats[i % 2], content=f"turn {i} <b>&", created_at=now)
        for i in range(count)
    ]


def _fields(obj) -> dict:
    return {field.attname: getattr(obj, field.attname) for field in obj._meta.concrete_fields}


def test_a_select_gives_the_querysets_rows_and_sends_its_sql() -> None:
    first, second = make_chat(), make_chat()
    _turns(first, 3), _turns(second, 2)
    built = []

    def build():
        built.append(1)
        return Turn.objects.filter(episode_id=Param("episode")).order_by("index")

    transcript = Select(build)
    for chat in (first, second, first):
        expected = list(Turn.objects.filter(episode_id=chat.episode.pk).order_by("index"))
        with CaptureQueriesContext(connection) as orm:
            list(Turn.objects.filter(episode_id=chat.episode.pk).order_by("index"))
        with CaptureQueriesContext(connection) as ours:
            got = transcript.fetch(episode=chat.episode.pk)
        assert [_fields(turn) for turn in got] == [_fields(turn) for turn in expected]
        assert all(isinstance(turn, Turn) and not turn._state.adding and turn._state.db == "default" for turn in got)
        # The same statement, but that a compared value is a parenthesised expression: ``= (7)``, not ``= 7``.
        assert [query["sql"].replace("(", "").replace(")", "") for query in ours] == [query["sql"] for query in orm]
    assert len(built) == 2  # where it runs, and the compiling: once each, not once a run


def test_related_objects_annotations_and_filtered_relations_come_as_the_queryset_gives_them() -> None:
    chat = make_chat(barrier="hostility")
    statement = Select(lambda: participants().filter(pk=Param("participant")))
    got = statement.fetch(participant=chat.participant.pk)
    expected = participants().get(pk=chat.participant.pk)
    assert len(got) == 1
    (participant,) = got
    assert _fields(participant) == _fields(expected)
    assert _fields(participant.episode) == _fields(expected.episode)
    assert _fields(participant.episode.scenario) == _fields(expected.episode.scenario)
    assert participant.episode.barrier.name == expected.episode.barrier.name
    assert participant.study.slug == chat.study.slug
    assert participant.has_probes == expected.has_probes
    assert getattr(participant, "scenario_prompt", None) == getattr(expected, "scenario_prompt", None)
    assert statement.fetch(participant=-1) == []


def test_values_rows_and_locks_inside_a_transaction() -> None:
    chat = make_chat()
    has_turns = Exists(Turn.objects.filter(episode_id=OuterRef("pk")))
    lock = Select(
        lambda: Episode.objects.select_for_update(no_key=True).filter(pk=Param("episode"))
        .annotate(has_turns=has_turns).values("status", "turn_cap", "has_turns")
    )
    with transaction.atomic():
        assert lock.fetch(episode=chat.episode.pk) == [
            {"status": chat.episode.status, "turn_cap": chat.episode.turn_cap, "has_turns": False}
        ]


def test_an_update_counts_its_rows_and_stores_datetimes_as_the_orm_does() -> None:
    chat, other = make_chat(), make_chat()
    now = timezone.now().replace(microsecond=123456) + timedelta(minutes=1)
    Participant.objects.filter(pk__in=[chat.participant.pk, other.participant.pk]).update(
        last_seen_at=now - timedelta(hours=2)
    )
    seen = Update(
        lambda: Participant.objects.filter(pk=Param("participant"), stage=Participant.Stage.CHAT)
        .exclude(last_seen_at__gte=Param("now", DATETIME)),
        last_seen_at=Param("now", DATETIME), agent_lease_owner=Param("owner"), agent_lease_until=None,
    )
    assert seen.run(participant=chat.participant.pk, now=now, owner="a" * 32) == 1
    assert seen.run(participant=chat.participant.pk, now=now, owner="b" * 32) == 0  # seen at ``now`` already
    assert seen.run(participant=-1, now=now, owner="c" * 32) == 0
    assert seen.run(participant=other.participant.pk, now=now - timedelta(hours=1), owner="d" * 32) == 1
    chat.participant.refresh_from_db()
    other.participant.refresh_from_db()
    assert (chat.participant.last_seen_at, chat.participant.agent_lease_owner) == (now, "a" * 32)
    assert (other.participant.last_seen_at, other.participant.agent_lease_owner) == (now - timedelta(hours=1), "d" * 32)
    # The SQL compared with a datetime the ORM wrote, not only with one this statement wrote.
    Participant.objects.filter(pk=chat.participant.pk).update(last_seen_at=now + timedelta(seconds=1))
    assert seen.run(participant=chat.participant.pk, now=now + timedelta(seconds=1), owner="e" * 32) == 0
    assert seen.run(participant=chat.participant.pk, now=now + timedelta(seconds=2), owner="e" * 32) == 1


def test_a_run_must_give_every_value_and_no_other() -> None:
    chat = make_chat()
    seats = Select(lambda: Seat.objects.filter(episode_id=Param("episode")).order_by("position"))
    assert len(seats.fetch(episode=chat.episode.pk)) == 2
    with pytest.raises(TypeError, match=r"takes \['episode'\], not \[\]"):
        seats.fetch()
    with pytest.raises(TypeError, match=r"not \['episode', 'extra'\]"):
        seats.fetch(episode=chat.episode.pk, extra=1)


def test_what_cannot_be_compiled_is_refused() -> None:
    make_chat()
    with pytest.raises(ValueError, match="cannot prefetch"):
        Select(lambda: Seat.objects.filter(episode_id=Param("e")).prefetch_related("role__goals")).fetch(e=1)
    with pytest.raises(ValueError, match="model instances or values"):
        Select(lambda: Seat.objects.filter(episode_id=Param("e")).values_list("pk")).fetch(e=1)


def test_an_insert_stores_the_row_create_would_and_gives_it_back() -> None:
    chat = make_chat()
    insert = Insert(Turn)
    now = timezone.now()
    ours = insert.create(episode_id=chat.episode.pk, index=0, seat_id=chat.agent_seat.pk, content="<b>hi</b> & ' \"",
                         client_id=None, created_at=now, words=[[0.5, "hi"]], latency_ms=12)
    theirs = Turn.objects.create(episode_id=chat.episode.pk, index=1, seat_id=chat.human_seat.pk, content="x",
                                 client_id="abcdefgh", created_at=now)
    assert isinstance(ours.pk, int) and ours.pk != theirs.pk and not ours._state.adding
    stored = Turn.objects.get(pk=ours.pk)
    assert _fields(stored) == _fields(ours)
    assert (stored.action_type, stored.model, stored.prompt_tokens, stored.words) == ("speak", "", None, [[0.5, "hi"]])
    second = insert.create(episode_id=chat.episode.pk, index=2, seat_id=chat.agent_seat.pk, content="again")
    assert second.created_at is not None and Turn.objects.get(pk=second.pk).content == "again"
    with pytest.raises(TypeError, match=r"Turn has no field \['seat'\]"):
        insert.create(episode_id=chat.episode.pk, index=3, seat=chat.agent_seat, content="x")


def test_a_failed_insert_raises_as_create_does_and_spoils_only_its_transaction() -> None:
    chat = make_chat()
    insert = Insert(Turn)
    insert.create(episode_id=chat.episode.pk, index=0, seat_id=chat.agent_seat.pk, content="first")
    with pytest.raises(IntegrityError), transaction.atomic():
        Turn.objects.create(episode_id=chat.episode.pk, index=1, seat_id=chat.human_seat.pk, content="rolled back")
        insert.create(episode_id=chat.episode.pk, index=0, seat_id=chat.agent_seat.pk, content="same index")
    assert list(Turn.objects.filter(episode=chat.episode).values_list("content", flat=True)) == ["first"]


def test_related_rows_fetched_apart_read_as_prefetched_ones() -> None:
    chat = make_chat(barrier="hostility")
    first_role = chat.agent_seat.role
    Goal.objects.create(role=first_role, position=5, text="and a second goal <i>")
    chat.human_seat.role.goals.all().delete()
    seats = Seat.objects.filter(episode=chat.episode).select_related("role").order_by("position")
    expected = list(seats.prefetch_related("role__goals"))
    got = list(seats)
    prefetched([seat.role for seat in got], "goals", GOALS.fetch(episode=chat.episode.pk))
    with CaptureQueriesContext(connection) as queries:
        for ours, theirs in zip(got, expected, strict=True):
            assert [_fields(goal) for goal in ours.role.goals.all()] == [_fields(g) for g in theirs.role.goals.all()]
            assert ours.role.goal_text == theirs.role.goal_text
            assert all(goal.role is ours.role for goal in ours.role.goals.all())
    assert len(queries) == 0
    assert [len(seat.role.goals.all()) for seat in got] == [len(seat.role.goals.all()) for seat in expected]
    assert {len(seat.role.goals.all()) for seat in got} == {0, Goal.objects.filter(role=first_role).count()}
    prefetched([], "goals", [])  # no instances: nothing to fill, no error
