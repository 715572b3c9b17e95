"""Reading AgentSense's answers from the database into the analyses' records."""

import pytest

from benchmark.models import Answer, Episode
from benchmark.results.agentsense.records import AgentSenseFilters, build_agentsense
from tests.benchmark.agentsense_data import agentsense_episode, agentsense_scenario
from tests.builders import default_team, make_scenario, make_team

pytestmark = pytest.mark.django_db


def report_for(team, **filters):
    return build_agentsense(AgentSenseFilters(**filters), Episode.objects.of_team(team), resamples=50)


def test_self_other_and_judge_answers_become_perspectives():
    team = default_team()
    scenario = agentsense_scenario(team)
    # Agents say yes about their own goals and no about the others'; judge-a says yes to seat 0's goal only.
    agentsense_episode(scenario, ["m-1", "m-2", "m-2"],
                       verdict=lambda who, seat: who == "self" or (who == "judge-a" and seat == 0))

    report, goals, probes = report_for(team)

    assert sorted(goals["perspective"].value_counts().items()) == [("judge", 6), ("other", 6), ("self", 3)]
    assert report["completion"]["self"]["m-1"]["mean"] == 1.0
    assert report["completion"]["other"]["m-2"]["mean"] == 0.0
    assert report["completion"]["judge:judge-a"]["m-1"]["mean"] == 1.0
    assert report["completion"]["judge:judge-b"]["m-1"]["mean"] == 0.0
    assert report["completion"]["judges_majority"]["m-1"]["mean"] == 1.0  # a tie counts as yes
    assert report["completion"]["judges_majority"]["m-2"]["mean"] == 0.0
    assert report["completion_by_erg"]["m-1"] == {"existence": report["completion"]["judges_majority"]["m-1"]}
    assert report["overestimation"]["self"]["by_model"]["m-2"]["mean"] == 1.0


def test_probe_answers_give_attackers_defenders_and_the_blind_test():
    team = default_team()
    scenario = agentsense_scenario(team)
    # Seat 0 guesses everything right, the others guess nothing right; blind answers follow the same rule.
    agentsense_episode(scenario, ["m-1", "m-2", "m-2"], guesses=lambda seat, about: seat == 0, blind=True)

    report, _, probes = report_for(team)

    assert len(probes) == 12  # 3 seats x 2 probes about the others, with and without the conversation
    assert report["reasoning"]["attacker"]["m-1"]["mean"] == 1.0
    assert report["reasoning"]["attacker"]["m-2"]["mean"] == 0.0
    assert report["reasoning"]["defender"]["m-1"]["mean"] == 1.0  # nobody guessed seat 0's secret
    assert report["reasoning"]["defender"]["m-2"]["mean"] == 0.5  # seat 0 guessed theirs, the other seat did not
    assert report["reasoning"]["blind"]["m-1"]["mean"] == 1.0


def test_filters_and_teams_choose_the_episodes():
    team, other_team = default_team(), make_team()
    template = make_scenario(team=team, is_template=True, codename="market")
    for _ in range(2):
        agentsense_episode(agentsense_scenario(team, template=template), ["m-1", "m-2", "m-2"], tag="run-1")
    agentsense_episode(agentsense_scenario(team, category="large_society"), ["m-3", "m-3", "m-3"], tag="run-2")
    agentsense_episode(agentsense_scenario(other_team), ["secret-model"] * 3)

    assert report_for(team)[0]["models"] == ["m-1", "m-2", "m-3"]
    assert report_for(team, tag="run-2")[0]["models"] == ["m-3"]
    assert report_for(team, model="m-3")[0]["counts"]["episodes"] == 1
    assert report_for(team, category="large_society")[0]["categories"] == ["large_society"]
    by_template, _, _ = report_for(team, template=str(template.pk))
    assert by_template["counts"]["scenarios"] == 2
    assert by_template["psi"]["goal_completion.self"]["m-1"]["templates"] == 1
    assert report_for(other_team)[0]["models"] == ["secret-model"]


def test_sender_receiver_pairings_come_from_the_roles_labels():
    team = default_team()
    agentsense_episode(agentsense_scenario(team), ["strong", "weak", "weak"])
    agentsense_episode(agentsense_scenario(team), ["weak", "strong", "strong"])

    pairings = report_for(team)[0]["pairings"]

    assert [(c["sender_model"], c["receiver_model"]) for c in pairings["cells"]] == [("strong", "weak"),
                                                                                    ("weak", "strong")]
    assert pairings["view"] == "judges_majority"


def test_no_answers_gives_an_empty_report_that_says_what_to_run():
    report, goals, probes = report_for(default_team())

    assert report["models"] == []
    assert goals.empty and probes.empty
    assert any("evaluate --interview" in note for note in report["notes"])


def test_a_scripted_interview_is_read_as_self_other_and_attacker_answers(settings):
    from asgiref.sync import async_to_sync

    from benchmark.agents import llm
    from benchmark.demo.content import GROUP_SCENARIOS
    from benchmark.demo.install import beats_of, install_scenario
    from benchmark.evaluation.interviews.running import interview_episode
    from benchmark.runs.simulation import create_episode, run_episode
    from tests.builders import get_barrier

    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}
    spec = GROUP_SCENARIOS[0]
    scenario = install_scenario(spec, default_team())
    episode = create_episode(scenario, get_barrier("none"), models=dict.fromkeys(range(3), llm.SCRIPTED),
                             turn_cap=scenario.turn_cap)
    episode = async_to_sync(run_episode)(episode, seed=1, beats=beats_of(spec))
    async_to_sync(interview_episode)(episode.pk)

    report, goals, probes = report_for(default_team())

    goal_count = sum(role.goals.count() for role in scenario.roles.all())
    assert (goals["perspective"] == "self").sum() == goal_count
    assert (goals["perspective"] == "other").sum() == 2 * goal_count
    assert set(report["completion"]) == {"self", "other"}
    assert report["completion"]["self"][llm.SCRIPTED]["n"] == 3
    assert scenario.probes.exists()  # the demo's group scenario has probes about its characters
    assert len(probes) and not probes["blind"].any()
    stored = Answer.objects.filter(response__episode=episode, response__instrument__preset="scenario-probes")
    assert len(probes) == stored.count()  # answers about oneself too; the statistics leave those out
    assert report["reasoning"]["attacker"][llm.SCRIPTED]["n"] == 3
    assert llm.SCRIPTED in report["reasoning"]["attacker"]
