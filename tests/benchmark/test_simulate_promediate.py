"""``simulate --preset promediate``: the grid scenario × mode × mediator × run, offline and reproducible
(PM-A12's simulate part), and clear refusals."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from benchmark.models import (
    DEFAULT_TEAM_SLUG,
    Attitude,
    Episode,
    MediatorDecision,
    PartyThought,
    Scenario,
    Team,
)
from benchmark.runs.options import RunOptions, RunOptionsError
from benchmark.runs.planning import plan_run
from tests.benchmark.import_checks import import_file
from tests.benchmark.negotiation_data import competing, make_negotiation
from tests.benchmark.test_import_promediate import HMO
from tests.builders import make_scenario

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

TURN_CAP = 12


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


@pytest.fixture
def case():
    competing()
    return make_negotiation("promediate-case", turn_cap=TURN_CAP)


def simulate(*args: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("simulate", *args, stdout=out, stderr=err)
    return out.getvalue()


def grid(name: str, *extra: str) -> str:
    return simulate(
        "--preset",
        "promediate",
        "--scenarios",
        "promediate-case",
        "--conditions",
        "promediate-competing",
        "--mediator",
        "none,generic,social",
        "--runs",
        "2",
        "--seed",
        "7",
        "--model",
        "scripted",
        "--run-name",
        name,
        *extra,
    )


def record(tag: str) -> str:
    """Every episode of the run, its transcript, decisions and thoughts, as one JSON text (times left out)."""
    episodes = Episode.objects.filter(tag=tag).order_by("external_id")
    found = {}
    for episode in episodes:
        key = f"{episode.settings['promediate']['mediator']}-{episode.settings['promediate']['run_id']}"
        found[key] = {
            "settings": {k: v for k, v in episode.settings.items() if k != "run"},
            "turns": list(episode.turns.values_list("index", "seat__position", "content", "model")),
            "decisions": list(
                MediatorDecision.objects.filter(episode=episode).values_list(
                    "after_index",
                    "policy",
                    "model",
                    "engaged",
                    "rating",
                    "reason",
                    "candidates",
                    "chosen",
                    "turn__index",
                    "failed",
                )
            ),
            "thoughts": list(
                PartyThought.objects.filter(episode=episode).values_list(
                    "after_index", "seat__position", "content", "raw_rating", "rating", "selected", "spoken"
                )
            ),
        }
    return json.dumps(found, sort_keys=True)


def test_the_grid_is_modes_by_mediators_by_runs_and_every_episode_keeps_the_rules(case):
    out = grid("pm-a")

    assert "1 scenario(s) × 1 mode(s) × 3 mediator condition(s) (none, generic, social) × 2 run(s) = 6" in out
    episodes = list(Episode.objects.filter(tag="pm-a"))
    assert len(episodes) == 6 and all(e.status == "finished" for e in episodes)
    assert sorted((e.settings["promediate"]["mediator"], e.settings["promediate"]["run_id"]) for e in episodes) == [
        (m, n) for m in ("generic", "none", "social") for n in (1, 2)
    ]
    for episode in episodes:
        options = episode.settings["promediate"]
        assert options["mode"] == "competing" and options["party_model"] == "scripted"
        assert options["prompt_versions"] == {
            "party": "pm-party-1",
            "mediator": "pm-mediator-1",
            "tracker": "pm-tracker-1",
        }
        assert episode.settings["seed"] == 7 + options["run_id"] - 1  # runs are paired across mediators
        seats = {seat.position: seat for seat in episode.seats.all()}
        if options["mediator"] == "none":
            assert 3 not in seats and options["mediator_position"] is None
        else:
            assert seats[3].model == "scripted" and not seats[3].carries_barrier
        assert all(seats[p].carries_barrier for p in (0, 1, 2))
        speakers = list(episode.turns.values_list("seat__position", flat=True))
        assert len(speakers) <= 1 + TURN_CAP
        assert all(a != b for a, b in zip(speakers, speakers[1:], strict=False))
        chances = [i for i, p in enumerate(speakers[:-1]) if p != 3]
        decided = list(MediatorDecision.objects.filter(episode=episode).values_list("after_index", flat=True))
        assert decided == ([] if options["mediator"] == "none" else chances)


def test_the_same_command_twice_gives_byte_identical_negotiations(case):
    grid("pm-first")
    grid("pm-second")
    assert record("pm-first") == record("pm-second")
    assert len(record("pm-first")) > 1000


def test_running_it_again_resumes_instead_of_replaying(case):
    grid("pm-again")
    before = record("pm-again")
    out = grid("pm-again")
    assert "6/6 episodes finished (6 skipped, finished before)" in out
    assert record("pm-again") == before


def test_a_scenario_that_is_not_a_negotiation_is_refused(case):
    make_scenario(codename="kitchen")
    with pytest.raises(CommandError, match="--scenarios: Scenario kitchen is not a negotiation"):
        simulate(
            "--preset",
            "promediate",
            "--scenarios",
            "kitchen",
            "--conditions",
            "promediate-competing",
            "--model",
            "scripted",
        )


def test_an_unknown_mediator_condition_is_refused(case):
    with pytest.raises(CommandError, match="--mediators: Unknown mediator condition"):
        grid("pm-bad", "--mediator", "wise")


def test_mediator_options_need_the_preset(case):
    with pytest.raises(CommandError, match="--mediators: mediators is an option of the 'promediate' preset"):
        simulate("--scenarios", "promediate-case", "--mediator", "social", "--conditions", "none")


def test_a_negotiation_without_the_preset_is_refused_naming_it(case):
    with pytest.raises(
        CommandError,
        match="--scenarios: Scenario promediate-case is a ProMediate negotiation: run "
        r"it with the 'promediate' preset \(simulate --preset promediate, and --mediator",
    ):
        simulate("--scenarios", "promediate-case", "--conditions", "promediate-competing", "--model", "scripted")
    assert not Episode.objects.exists()


def test_every_scenario_without_the_preset_leaves_the_negotiations_out(case):
    make_scenario(codename="kitchen")
    team = Team.objects.get(slug=DEFAULT_TEAM_SLUG)

    plan = plan_run(RunOptions(conditions=("none",)), team, "plain")
    assert {item.scenario.codename for item in plan.episodes()} == {"kitchen"}

    Scenario.objects.filter(codename="kitchen").delete()
    with pytest.raises(RunOptionsError, match="Scenario promediate-case is a ProMediate negotiation"):
        plan_run(RunOptions(conditions=("none",)), team, "plain")


def hmo_social(name: str) -> str:
    return simulate(
        "--preset",
        "promediate",
        "--scenarios",
        "promediate-hmo",
        "--conditions",
        "promediate-competing",
        "--mediator",
        "social",
        "--model",
        "scripted",
        "--runs",
        "2",
        "--seed",
        "7",
        "--run-name",
        name,
    )


def test_pm_a12_the_hmo_case_offline_twice_is_byte_identical_and_keeps_the_floor_rules():
    import_file(HMO)
    out = hmo_social("hmo-first")
    hmo_social("hmo-second")

    assert record("hmo-first") == record("hmo-second")
    assert "ProMediate judges scripted: 2 evaluated" in out  # the run's judge read the consensus trace
    episodes = list(Episode.objects.filter(tag="hmo-first"))
    assert len(episodes) == 2
    for episode in episodes:
        speakers = list(episode.turns.values_list("seat__role__character__first_name", flat=True))
        assert len(speakers) <= 61 and speakers[0] == "Mediator"
        assert all(a != b for a, b in zip(speakers, speakers[1:], strict=False))
        assert Attitude.objects.filter(episode=episode, judge="scripted").exists()
    assert MediatorDecision.objects.filter(episode__tag="hmo-first", engaged=True).count() == 3


@pytest.mark.parametrize("flag", ["--party-model", "--mediator-model", "--articulation-model"])
def test_each_role_model_is_checked_against_the_models_the_team_may_call(case, flag):
    with pytest.raises(CommandError, match=f"{flag}: .*anthropic/claude-sonnet-4"):
        grid("pm-models", flag, "anthropic/claude-sonnet-4")
    assert not Episode.objects.filter(tag="pm-models").exists()


def report(tag: str) -> dict:
    out = io.StringIO()
    call_command(
        "benchmark_report",
        "--analysis",
        "promediate",
        "--format",
        "json",
        "--tag",
        tag,
        "--bootstrap",
        "50",
        stdout=out,
        stderr=io.StringIO(),
    )
    return json.loads(out.getvalue())


def test_pm_a12_the_two_runs_report_the_same_table_1_with_only_competing_social_filled():
    import_file(HMO)
    hmo_social("hmo-a")
    hmo_social("hmo-b")

    first, second = report("hmo-a"), report("hmo-b")
    assert json.dumps(first["table1"], sort_keys=True) == json.dumps(second["table1"], sort_keys=True)
    cells = first["table1"]["cells"]
    assert set(cells) >= {"consensus_change", "topic_level_efficiency", "response_latency"}
    for metric, by_mode in cells.items():
        social = by_mode["competing"]["social"]
        assert not social["missing"] and social["conversations"] == 2, metric
        for condition in ("none", "generic"):
            empty = by_mode["competing"][condition]
            assert empty["missing"] or not empty["defined"], (metric, condition)
            assert empty["mean"] is None
    assert cells["consensus_change"]["competing"]["social"]["n"] == 2


def test_the_persona_reaches_the_mediator_only_when_asked(case):
    grid("pm-persona", "--mediator", "social", "--runs", "1", "--persona-to-mediator")
    episode = Episode.objects.get(tag="pm-persona")
    assert episode.settings["promediate"]["persona_to_mediator"] is True
    assert all(episode.seats.values_list("carries_barrier", flat=True))
