"""The per-intervention instrument (PM-16): its questions, "not applicable" stored with no number, the
interventions it rates, and storing one respondent's answers for one turn."""

import pytest
from django.db import IntegrityError, transaction

from benchmark.instruments import interventions
from benchmark.instruments.checks import option_problems
from benchmark.instruments.kinds import get_kind
from benchmark.instruments.presets import INTERVENTION_DIMENSIONS, install_preset
from benchmark.instruments.respondents import judge_respondent
from benchmark.models import Answer, Question, Response
from tests.benchmark.promediate_world import negotiation_episode

pytestmark = pytest.mark.django_db


def test_the_preset_asks_four_turn_ratings_named_at_1_3_5_with_not_applicable_and_a_comment():
    instrument = install_preset("promediate-intervention")
    questions = list(instrument.questions.order_by("position"))
    assert instrument.name == "ProMediate mediator intelligence (per intervention)"
    assert [q.key for q in questions] == [*INTERVENTION_DIMENSIONS, "comment"]
    assert {q.scope for q in questions} == {Question.Scope.TURN}
    rating = questions[0]
    assert (rating.low, rating.high) == (1, 5)
    assert [(a["value"], bool(a.get("label"))) for a in rating.options["anchors"]] == [
        (1, True),
        (2, False),
        (3, True),
        (4, False),
        (5, True),
    ]
    options = get_kind("likert").widget_options(rating)
    assert [o["value"] for o in options] == [1, 2, 3, 4, 5, "na"]
    assert not questions[-1].required
    assert install_preset("promediate") != instrument  # the old preset stays as it was
    assert install_preset("promediate").questions.filter(scope=Question.Scope.EPISODE).count() == 5


def test_not_applicable_is_accepted_only_where_offered_and_has_no_number():
    instrument = install_preset("promediate-intervention")
    rating = instrument.questions.get(key="emotional_dynamics")
    likert = get_kind("likert")
    assert likert.check_value(rating, "N/A") == ("na", None, "")
    assert likert.parse_reply(rating, -1).value == "na"
    assert likert.parse_reply(rating, None).value == "na"
    assert likert.parse_reply(rating, 2).number == 2.0
    assert "or 'na' when it does not apply" in likert.parse_reply(rating, 7).problem
    plain = install_preset("turn-rating").questions.get(key="helpfulness")
    assert likert.check_value(plain, "na")[2] == "choose a value from 1 to 5."


def test_an_unlabelled_end_or_a_bad_not_applicable_is_refused_with_the_path():
    anchors = [{"value": 1}, {"value": 2}, {"value": 3, "label": "Top", "description": "The top."}]
    problems = option_problems("likert", {"anchors": anchors, "not_applicable": "n/a"})
    assert "options.anchors[0].label: is missing" in problems
    assert "options.anchors[1].label: is missing" not in problems  # an inner point may be unlabelled
    assert "options.not_applicable: must be an object with a label and a description" in problems


def test_the_database_refuses_na_where_not_applicable_is_not_offered():
    episode = negotiation_episode()
    plain = install_preset("turn-rating")
    response = Response.objects.create(instrument=plain, episode=episode, respondent=judge_respondent("m", "v1"))
    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.create(
            response=response, question=plain.questions.get(key="helpfulness"), turn=3, value="na", number=None
        )


def test_interventions_are_the_mediators_turns_after_the_welcome_and_context_runs_from_its_last_turn():
    episode = negotiation_episode()
    assert interventions.mediator_position(episode) == 0
    assert [turn.index for turn in interventions.intervention_turns(episode)] == [3]
    assert [turn.index for turn in interventions.intervention_context(episode, 3)] == [0, 1, 2]
    assert [turn.index for turn in interventions.intervention_context(episode, 3, window=2)] == [1, 2]


def test_one_respondents_answers_for_one_turn_are_stored_with_na_as_no_number_and_replaced_on_a_second_store():
    episode = negotiation_episode()
    judge = judge_respondent("scripted", "pm-v1")
    interventions.store_intervention_answers(
        episode,
        3,
        judge,
        {
            "perception_alignment": 4,
            "emotional_dynamics": None,
            "cognitive_challenges": -1,
            "communication_breakdowns": 5,
        },
        comment="Asked Carol why.",
        reasoning={"perception_alignment": "Invited Carol to explain."},
    )
    rows = {a.question.key: (a.turn, a.value, a.number) for a in Answer.objects.select_related("question")}
    assert rows == {
        "perception_alignment": (3, "4", 4.0),
        "emotional_dynamics": (3, "na", None),
        "cognitive_challenges": (3, "na", None),
        "communication_breakdowns": (3, "5", 5.0),
        "comment": (3, "Asked Carol why.", None),
    }
    interventions.store_intervention_answers(episode, 3, judge, dict.fromkeys(INTERVENTION_DIMENSIONS, 3))
    assert Response.objects.count() == 1
    assert sorted(Answer.objects.values_list("number", flat=True)) == [3.0] * 4


@pytest.mark.parametrize(
    ("turn", "scores", "message"),
    [
        (1, dict.fromkeys(INTERVENTION_DIMENSIONS, 3), "episode {pk}, turn 1: not a mediator intervention"),
        (
            3,
            {**dict.fromkeys(INTERVENTION_DIMENSIONS, 3), "emotional_dynamics": 6},
            "episode {pk}, turn 3, emotional_dynamics: 6 is not a score; give a whole number from 1 to 5",
        ),
        (3, {"perception_alignment": 3}, "missing: emotional_dynamics, cognitive_challenges, communication_breakdowns"),
    ],
)
def test_a_bad_answer_is_refused_naming_turn_and_question_and_nothing_is_stored(turn, scores, message):
    episode = negotiation_episode()
    with pytest.raises(interventions.InterventionAnswerError) as refused:
        interventions.store_intervention_answers(episode, turn, judge_respondent("scripted", "pm-v1"), scores)
    assert message.format(pk=episode.pk) in str(refused.value)
    assert not Answer.objects.exists()


class _Row:
    def __init__(self, value: str, number: float | None) -> None:
        self.value, self.number = value, number


def test_the_majority_is_not_applicable_only_when_most_said_so():
    rating = install_preset("promediate-intervention").questions.get(key="perception_alignment")
    likert = get_kind("likert")
    assert likert.majority(rating, [_Row("na", None), _Row("na", None), _Row("4", 4.0)], 3) == [("na", None)]
    assert likert.majority(rating, [_Row("na", None), _Row("2", 2.0), _Row("4", 4.0)], 3) == [("3", 3.0)]
    assert likert.summary(rating)[0] == "a rating from 1 to 5, or not applicable"
    assert likert.participant_choices(rating)[1:3] == [("2", "2"), ("3", "3 – Partly handled")]


def test_the_mediator_is_the_recorded_seat_and_a_no_mediator_condition_has_no_interventions():
    episode = negotiation_episode(settings={"promediate": {"mediator": "none"}})
    assert interventions.mediator_position(episode) is None and interventions.intervention_turns(episode) == []
    episode = negotiation_episode(settings={"promediate": {"mediator": "social", "mediator_position": 2}})
    assert interventions.mediator_position(episode) == 2  # as recorded; its one turn is no opening line: rated
    assert [turn.index for turn in interventions.intervention_turns(episode)] == [4]
