"""Casts: Sotopia's castings file imported as extra casts of its scenarios, and simulated cast by cast."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from benchmark.importing import ImportProblem
from benchmark.models import Cast, CastMember, Character, Episode, Scenario, SimulationRun
from benchmark.runs import control
from benchmark.runs.options import RunOptions, RunOptionsError
from benchmark.runs.planning import plan_run
from tests.benchmark.import_checks import assert_rejected, import_file, row_counts
from tests.builders import default_team, make_cast, make_character, make_researcher, make_scenario, make_team

pytestmark = pytest.mark.django_db

SOTOPIA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sotopia"
CASTINGS = SOTOPIA / "sotopia_env_agent_combos_450.jsonl"
AGENTS = SOTOPIA / "serialized_agent_profiles.jsonl"
ENVIRONMENTS = SOTOPIA / "serialized_environment_profiles.jsonl"


def castings() -> list[dict]:
    return [json.loads(line) for line in CASTINGS.read_text().splitlines() if line.strip()]


def import_profiles(team=None) -> None:
    import_file(AGENTS, team=team)
    import_file(ENVIRONMENTS, team=team)


def write_lines(tmp_path: Path, lines: list[dict], name: str = "castings.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# --- importing ------------------------------------------------------------------------------------

def test_the_real_castings_file_becomes_450_casts_of_90_scenarios_with_40_agents():
    import_profiles()

    result = import_file(CASTINGS)

    assert result.format == "castings"
    assert result.created == {"cast": 450}
    assert result.unchanged == {"scenario": 90, "character": 40}
    assert Cast.objects.count() == 450 and CastMember.objects.count() == 900
    assert Cast.objects.values("scenario").distinct().count() == 90
    assert CastMember.objects.values("character").distinct().count() == 40
    assert set(Cast.objects.values_list("scenario", flat=True).distinct()) == set(
        Scenario.objects.values_list("pk", flat=True)
    )


def test_agent_i_of_a_casting_plays_role_i_of_its_environment():
    import_profiles()
    import_file(CASTINGS)
    line = castings()[0]

    cast = Cast.objects.get(external_id=line["combo_id"])

    assert cast.scenario.external_id == line["env_id"]
    assert {position: character.external_id for position, character in cast.characters().items()} == dict(
        enumerate(line["agent_ids"])
    )


def test_importing_the_castings_twice_changes_nothing():
    import_profiles()
    import_file(CASTINGS)
    before = row_counts()

    result = import_file(CASTINGS)

    assert result.created == {}
    assert result.unchanged["cast"] == 450
    assert row_counts() == before


def test_a_dry_run_counts_the_casts_and_writes_nothing():
    import_profiles()
    before = row_counts()

    result = import_file(CASTINGS, dry_run=True)

    assert result.created == {"cast": 450}
    assert "would create 450 casts" in result.summary()
    assert row_counts() == before


def test_castings_before_the_environments_are_refused_saying_what_to_import_first():
    import_file(AGENTS)
    first = castings()[0]

    assert_rejected(
        CASTINGS,
        f"sotopia_env_agent_combos_450.jsonl, line 1, field env_id: environment {first['env_id']!r} is not in "
        "Parley; import Sotopia's environment profiles (serialized_environment_profiles.jsonl)",
    )


def test_castings_before_the_agents_are_refused_naming_the_agent():
    import_file(ENVIRONMENTS)
    first = castings()[0]

    assert_rejected(
        CASTINGS,
        f"line 1, field agent_ids[0]: agent {first['agent_ids'][0]!r} is not in Parley; import Sotopia's "
        "environment profiles",
    )


def test_another_teams_profiles_do_not_resolve_a_casting():
    import_profiles(team=make_team())

    with pytest.raises(ImportProblem, match="is not in Parley"):
        import_file(CASTINGS)
    assert Cast.objects.count() == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"agent_ids": ["01H5TNE5PAATSHM0K9ACWKN79P"]}, "field agent_ids: a casting names at least two agents, got 1"),
        (
            {"agent_ids": ["01H5TNE5PAATSHM0K9ACWKN79P", "01H5TNE5PAATSHM0K9ACWKN79P"]},
            "field agent_ids[1]: agent '01H5TNE5PAATSHM0K9ACWKN79P' plays two roles",
        ),
        ({"agent_ids": "01H5TNE5PAATSHM0K9ACWKN79P"}, "field agent_ids: expected a list, got string"),
        ({"combo_id": ""}, "field combo_id: must not be empty"),
    ],
)
def test_a_bad_casting_is_refused_naming_line_and_field(tmp_path, change, message):
    import_profiles()
    path = write_lines(tmp_path, [castings()[0], {**castings()[1], **change}])

    assert_rejected(path, f"castings.jsonl, line 2, {message}")


def test_a_casting_given_twice_is_refused_naming_both_lines(tmp_path):
    import_profiles()
    path = write_lines(tmp_path, [castings()[0], castings()[1], castings()[0]])

    assert_rejected(path, f"line 3, field combo_id: casting {castings()[0]['combo_id']!r} appears twice in this file "
                          "(first at line 1)")


def test_a_casting_naming_more_agents_than_roles_is_refused(tmp_path):
    import_profiles()
    line = castings()[0]
    third = next(a for a in Character.objects.values_list("external_id", flat=True) if a not in line["agent_ids"])
    path = write_lines(tmp_path, [{**line, "agent_ids": [*line["agent_ids"], third]}])

    assert_rejected(path, f"line 1, field agent_ids: environment {line['env_id']!r} has 2 roles; the cast names 3")


def test_a_cast_in_parley_with_other_characters_is_kept_and_noted(tmp_path):
    import_profiles()
    line = castings()[0]
    import_file(write_lines(tmp_path, [line]))
    swapped = {**line, "agent_ids": line["agent_ids"][::-1]}

    result = import_file(write_lines(tmp_path, [swapped], "swapped.jsonl"))

    assert result.unchanged["cast"] == 1
    assert "is in Parley with other characters than the file's; Parley's were kept" in result.summary()
    cast = Cast.objects.get(external_id=line["combo_id"])
    assert cast.characters()[0].external_id == line["agent_ids"][0]


# --- simulating -----------------------------------------------------------------------------------

def simulate(**options) -> None:
    call_command("simulate", conditions="none", agent_model="scripted", partner_model="scripted",
                 judge_model="none", turn_cap=4, concurrency=2, **options)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the run's tasks see commits only
def test_simulate_plays_each_cast_of_an_imported_scenario_with_its_characters():
    import_profiles()
    import_file(CASTINGS)
    scenario = Scenario.objects.get(external_id=castings()[0]["env_id"])
    expected = {
        line["combo_id"]: line["agent_ids"] for line in castings() if line["env_id"] == scenario.external_id
    }

    simulate(scenarios=str(scenario.pk), casts="all", run_name="casts")

    episodes = Episode.objects.filter(tag="casts")
    assert episodes.count() == len(expected) == 5
    assert set(episodes.values_list("status", flat=True)) == {Episode.Status.FINISHED}
    played = {
        episode.settings["cast"]: [seat.character.external_id for seat in episode.seats.order_by("position")]
        for episode in episodes.prefetch_related("seats__character")
    }
    assert played == expected


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the run's tasks see commits only
def test_a_cast_run_resumes_without_playing_anything_twice(capsys):
    import_profiles()
    import_file(CASTINGS)
    scenario = Scenario.objects.get(external_id=castings()[0]["env_id"])
    simulate(scenarios=str(scenario.pk), casts="all", run_name="again")
    turns = {episode.pk: episode.turns.count() for episode in Episode.objects.filter(tag="again")}

    simulate(scenarios=str(scenario.pk), casts="all", run_name="again")

    assert {episode.pk: episode.turns.count() for episode in Episode.objects.filter(tag="again")} == turns
    assert "5 skipped, finished before" in capsys.readouterr().out


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the run's tasks see commits only
def test_a_scenario_without_default_characters_cannot_be_played_by_default():
    import_profiles()
    import_file(CASTINGS)
    scenario = Scenario.objects.get(external_id=castings()[0]["env_id"])

    with pytest.raises(CommandError, match="has a role without a default character; cast the role, or play"):
        simulate(scenarios=str(scenario.pk))


def test_default_and_all_casts_each_get_their_own_cells_with_stable_distinct_ids():
    scenario = make_scenario()
    first, second = make_cast(scenario), make_cast(scenario)

    plan = plan_run(RunOptions(conditions=("none", "semantic"), casts=("default", "all")), default_team(), "cells")
    planned = plan.episodes()

    assert plan.total == len(planned) == 6
    assert [item.cast for item in planned] == [None, None, first, first, second, second]
    assert len({item.external_id for item in planned}) == 6
    assert planned[0].external_id == f"cells-s{scenario.pk}-none-0"  # the default cast keeps the old ids
    assert planned[2].external_id == f"cells-s{scenario.pk}-c{first.pk}-none-0"
    again = plan_run(RunOptions(conditions=("none", "semantic"), casts=("default", "all")), default_team(), "cells")
    assert [item.external_id for item in again.episodes()] == [item.external_id for item in planned]


def test_casts_named_by_id_choose_their_scenarios():
    scenario, other = make_scenario(), make_scenario()
    make_cast(scenario)
    wanted = make_cast(other, external_id="combo-7")

    plan = plan_run(RunOptions(conditions=("none",), casts=("combo-7",)), default_team(), "named")

    assert [(item.scenario, item.cast) for item in plan.episodes()] == [(other, wanted)]


def test_another_teams_cast_is_unknown():
    make_scenario()
    foreign = make_cast(make_scenario(team=make_team()))

    with pytest.raises(RunOptionsError, match=f"No cast of the team has the id or external id '{foreign.pk}'"):
        plan_run(RunOptions(conditions=("none",), casts=(str(foreign.pk),)), default_team(), "foreign")


def test_another_teams_casts_are_not_played_under_all():
    scenario = make_scenario()
    make_cast(make_scenario(team=make_team()))

    with pytest.raises(RunOptionsError, match="has no casts; add 'default'"):
        plan_run(RunOptions(scenarios=(str(scenario.pk),), conditions=("none",), casts=("all",)), default_team())


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the run's tasks see commits only
def test_results_count_a_scenario_played_by_several_casts_once(client):
    scenario = make_scenario()
    make_cast(scenario), make_cast(scenario)
    call_command("simulate", conditions="none,semantic", agent_model="scripted", partner_model="scripted",
                 judge_model="scripted", turn_cap=4, casts="default,all", run_name="three-casts")
    client.force_login(make_researcher())

    page = client.get(reverse("benchmark:results"), {"tag": "three-casts"})
    report = client.get(reverse("benchmark:results-json"), {"tag": "three-casts"}).json()

    assert page.status_code == 200
    assert report["counts"]["episodes"] == 6
    assert report["counts"]["scenarios"] == 1


def test_a_cast_may_not_use_another_teams_character():
    from django.core.exceptions import ValidationError

    scenario = make_scenario()
    cast = make_cast(scenario)
    member = cast.members.first()
    member.character = make_character(team=make_team())

    with pytest.raises(ValidationError, match="scenario's team"):
        member.full_clean()


# --- the run form ---------------------------------------------------------------------------------

RUN_FORM = {
    "tag": "", "difficulty": "", "scenarios": "", "conditions": ["none"], "agent_model": "scripted",
    "partner_model": "scripted", "judge_model": "scripted", "strategy": "default", "episodes_per_cell": "1",
    "turn_cap": "6", "temperature": "0.7", "concurrency": "4", "seed": "0",
}


@pytest.fixture
def spawned(monkeypatch):
    """The run's work is not queued: only the runs that would be are recorded."""
    calls = []
    monkeypatch.setattr(control, "queue_run", lambda run: calls.append(run.pk))
    return calls


def test_the_run_form_takes_casts_and_the_run_page_shows_them(client, spawned):
    scenario = make_scenario()
    make_cast(scenario), make_cast(scenario)
    client.force_login(make_researcher())

    response = client.post(reverse("benchmark:run-new"), {**RUN_FORM, "tag": "with-casts", "casts": "default,all"})

    run = SimulationRun.objects.get(tag="with-casts")
    assert response.status_code == 302 and run.options["casts"] == ["default", "all"] and run.total == 3
    page = client.get(reverse("benchmark:run", args=[run.pk])).text
    assert "Casts" in page and "default, all" in page


def test_another_teams_cast_is_refused_beside_the_field(client, spawned):
    make_scenario()
    foreign = make_cast(make_scenario(team=make_team()))
    client.force_login(make_researcher())

    response = client.post(reverse("benchmark:run-new"), {**RUN_FORM, "casts": str(foreign.pk)})

    assert response.status_code == 200 and spawned == []
    assert response.context["form"].errors["casts"] == [
        f"No cast of the team has the id or external id '{foreign.pk}'."
    ]
