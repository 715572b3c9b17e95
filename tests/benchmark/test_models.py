"""The database refuses what must never break: duplicate turns, two barrier seats, scores out of range."""

import pytest
from django.db import IntegrityError, transaction

from benchmark.evaluation.judge_questions import judge_instruments
from benchmark.instruments.rubrics import JUDGE_DIMENSIONS
from benchmark.models import (
    ActionType,
    Answer,
    Barrier,
    BarrierCue,
    Episode,
    Question,
    Relationship,
    Respondent,
    Response,
    Role,
    Seat,
    Turn,
)
from tests.builders import make_character, make_episode, make_scenario, make_scores

pytestmark = pytest.mark.django_db


def refused(create) -> bool:
    try:
        with transaction.atomic():
            create()
    except IntegrityError:
        return True
    return False


def test_turn_index_is_unique_per_episode():
    episode = make_episode(turns=2)
    seat = episode.seats.first()
    assert refused(lambda: Turn.objects.create(episode=episode, index=1, seat=seat, content="again"))


def test_same_turn_index_is_fine_in_another_episode():
    first, second = make_episode(turns=1), make_episode(turns=1)
    Turn.objects.create(episode=second, index=1, seat=second.seats.first(), content="ok")
    assert first.turns.count() == 1 and second.turns.count() == 2


def test_client_id_is_unique_per_episode():
    episode = make_episode(turns=0)
    seat = episode.seats.first()
    Turn.objects.create(episode=episode, index=0, seat=seat, content="hi", client_id="c-1")
    assert refused(lambda: Turn.objects.create(episode=episode, index=1, seat=seat, content="hi", client_id="c-1"))


def test_many_turns_may_have_no_client_id():
    episode = make_episode(turns=3)
    assert episode.turns.filter(client_id__isnull=True).count() == 3


def test_speech_needs_content_but_leaving_does_not():
    episode = make_episode(turns=0)
    seat = episode.seats.first()
    assert refused(lambda: Turn.objects.create(episode=episode, index=0, seat=seat, action_type=ActionType.SPEAK))
    Turn.objects.create(episode=episode, index=0, seat=seat, action_type=ActionType.LEAVE)


def test_a_condition_may_put_several_seats_under_the_barrier():
    episode = make_episode(barrier="semantic", barrier_seat=0)
    second = episode.seats.get(position=1)
    second.carries_barrier = True
    second.save()
    assert episode.seats.filter(carries_barrier=True).count() == 2


def test_seat_position_is_unique_per_episode():
    episode = make_episode()
    seat = episode.seats.get(position=0)
    assert refused(
        lambda: Seat.objects.create(episode=episode, position=0, role=seat.role, character=seat.character)
    )


def test_role_position_is_unique_per_scenario():
    scenario = make_scenario()
    assert refused(lambda: Role.objects.create(scenario=scenario, position=1))


def test_deleting_an_episode_deletes_its_seats_and_turns():
    episode = make_episode(turns=3)
    make_scores(episode, [("goal", 0, 5)])
    episode.delete()
    assert not Seat.objects.exists() and not Turn.objects.exists()
    assert not Response.objects.exists() and not Answer.objects.exists()


def test_a_seat_that_has_spoken_cannot_be_deleted_alone():
    from django.db.models import RestrictedError

    episode = make_episode(turns=2)
    with pytest.raises(RestrictedError):
        episode.seats.first().delete()


def test_turn_cap_must_be_positive():
    assert refused(lambda: make_episode(turn_cap=0))


def judge_response(episode: Episode, dimension: str, judge: str = "j", prompt_version: str = "") -> Response:
    """A judge's (empty) response to the preset that asks ``dimension``."""
    question = Question.objects.get(instrument__in=judge_instruments(), key=dimension)
    respondent, _ = Respondent.objects.get_or_create(kind="judge", model=judge, prompt_version=prompt_version)
    return Response.objects.create(episode=episode, respondent=respondent, instrument=question.instrument)


def answer(response: Response, dimension: str, number: float, seat: int | None) -> Answer:
    question = response.instrument.questions.get(key=dimension)
    return Answer.objects.create(response=response, question=question, seat_position=seat, value=f"{number:g}",
                                 number=number)


@pytest.mark.parametrize("dimension", [question for _, question in JUDGE_DIMENSIONS.values()], ids=lambda d: d.key)
def test_scores_outside_a_dimension_range_are_refused(dimension):
    episode = make_episode()
    seat = 0 if dimension.per_seat else None

    def score(value):
        response = judge_response(episode, dimension.key, judge=f"judge {value}")
        return lambda: answer(response, dimension.key, value, seat)

    assert refused(score(dimension.low - 0.5))
    assert refused(score(dimension.high + 0.5))
    score(dimension.low)()
    score(dimension.high)()


def test_per_seat_dimension_needs_a_seat_and_episode_dimension_refuses_one():
    episode = make_episode()
    assert refused(lambda: answer(judge_response(episode, "goal"), "goal", 5, seat=None))
    assert refused(lambda: answer(judge_response(episode, "mutual_understanding"), "mutual_understanding", 3, seat=0))


def test_one_score_per_evaluator_dimension_and_seat():
    episode = make_episode()
    response = judge_response(episode, "unresolved_confusion")
    answer(response, "unresolved_confusion", 3, seat=None)
    assert refused(lambda: answer(response, "unresolved_confusion", 4, seat=None))
    assert refused(lambda: judge_response(episode, "unresolved_confusion"))  # the same judge answers once
    answer(judge_response(episode, "unresolved_confusion", prompt_version="v2"), "unresolved_confusion", 4, None)


def test_cue_rate_is_a_share():
    barrier = Barrier.objects.get(key="semantic")
    assert refused(lambda: BarrierCue.objects.create(
        barrier=barrier, dimension="interaction_tactics", instruction="x", rate=1.5, unit="of words"))


def test_seeded_barriers_have_their_parameterisation():
    barriers = {b.key: b for b in Barrier.objects.prefetch_related("cues")}
    assert set(barriers) >= {"none", "semantic", "sociocultural", "emotional"}
    assert barriers["none"].is_baseline and not barriers["none"].style_directive
    for key in ("semantic", "sociocultural", "emotional"):
        barrier = barriers[key]
        assert barrier.definition and barrier.example and barrier.style_directive
        assert barrier.narrative_stance and barrier.interaction_tactics and barrier.confusion_mechanisms
        assert len(barrier.templates) >= 3
        assert barrier.cues.count() >= 3


def test_episode_source_choices_cover_every_producer():
    assert set(Episode.Source.values) == {"simulated", "human_chat", "imported"}


# Relationship-based visibility (Sotopia's rule).

@pytest.fixture
def person():
    return make_character(
        first_name="Mara", last_name="Voss", age=41, occupation="pharmacist", pronouns="she/her",
        personality="Careful and warm.", public_info="Runs the Saturday market stall.",
        secret="Failed her licence exam twice.", decision_style="deliberate",
    )


def test_strangers_see_nothing(person):
    assert person.visible_to(Relationship.STRANGER) == {}


def test_knowing_by_name_shows_the_name_only(person):
    assert person.visible_to(Relationship.KNOW_BY_NAME) == {"name": "Mara Voss"}


def test_acquaintances_see_the_public_face(person):
    assert person.visible_to(Relationship.ACQUAINTANCE) == {
        "name": "Mara Voss", "occupation": "pharmacist", "pronouns": "she/her",
        "public_info": "Runs the Saturday market stall.",
    }


@pytest.mark.parametrize("relationship", [Relationship.FRIEND, Relationship.ROMANTIC, Relationship.FAMILY])
def test_close_ties_see_everything_but_the_secret(person, relationship):
    visible = person.visible_to(relationship)
    assert visible["personality"] == "Careful and warm." and visible["age"] == "41"
    assert "secret" not in visible
