"""The evaluation pass on negotiations the simulator played offline (the scripted parties and mediators):
every episode evaluated, interventions rated, and the stored trace read back into a consensus series."""

import io

import pytest
from django.core.management import call_command

from benchmark.evaluation.promediate import passes
from benchmark.instruments.interventions import intervention_turns
from benchmark.models import Answer, Attitude, Episode, PairAgreement, TopicTag
from benchmark.stats.consensus import PairReading, consensus_series
from tests.benchmark.negotiation_data import competing, make_negotiation

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


def test_simulated_negotiations_are_evaluated_and_their_trace_makes_a_series():
    competing()
    make_negotiation("promediate-case", turn_cap=24)
    call_command(
        "simulate",
        "--preset",
        "promediate",
        "--scenarios",
        "promediate-case",
        "--conditions",
        "promediate-competing",
        "--mediator",
        "none,generic",
        "--runs",
        "1",
        "--seed",
        "3",
        "--model",
        "scripted",
        "--run-name",
        "pilot",
        "--judge-model",
        "none",  # the run would read the negotiations itself; here the command does
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    out = io.StringIO()
    call_command("evaluate", "--promediate", "--tag", "pilot", stdout=out, stderr=io.StringIO())

    assert "2 evaluated, 0 cached, 0 failed" in out.getvalue()
    for episode in Episode.objects.filter(tag="pilot"):
        mediated = episode.settings["promediate"]["mediator"] == "generic"
        turns = episode.turns.count()
        rated = intervention_turns(episode)
        assert bool(rated) == mediated  # the scripted generic mediator speaks every 8 party turns
        answers = Answer.objects.filter(
            response__episode=episode, response__respondent__model="scripted", question__scope="turn"
        )
        assert answers.count() == 4 * len(rated)
        assert TopicTag.objects.filter(turn__episode=episode, kind="mention").count() == turns * 3
        assert TopicTag.objects.filter(turn__episode=episode, kind="addressed").count() == 3 * len(rated)
        assert Attitude.objects.filter(episode=episode, point__gt=0).exists()  # the parties' stated options read

        parties = [str(seat.position) for seat in episode.seats.all() if not (mediated and seat.position == 3)]
        readings = [
            PairReading(row.point, str(row.topic_id), str(row.seat_a.position), str(row.seat_b.position), row.overall)
            for row in PairAgreement.objects.filter(
                episode=episode, judge="scripted", prompt_version=passes.SCRIPTED_VERSION
            ).select_related("seat_a", "seat_b")
        ]
        topics = [str(pk) for pk in episode.scenario.topics.values_list("pk", flat=True)]
        series = consensus_series(parties, topics, turns + 1, readings)
        assert len(series.overall) == turns + 1 and all(0 <= value <= 1 for value in series.overall)
