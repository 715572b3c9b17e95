"""An AgentSense grid offline, end to end through the commands a researcher types.

``simulate`` plays every cast of both demo templates with the scripted model (random order after a
greeting, cap 15), interviews the agents and has the judge answer every goal; ``evaluate --blind``
adds the blind test; ``benchmark_report --analysis agentsense`` then reports every analysis of the
paper on what the commands stored, nothing else.
"""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from benchmark.demo.group_templates import TEMPLATE_TURN_CAP, TEMPLATES
from benchmark.demo.install import install_template_instances
from benchmark.evaluation.interviews.instruments import GOALS_PRESET
from benchmark.models import Episode, Goal, Response
from tests.builders import default_team

pytestmark = pytest.mark.django_db


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # a run's chunk reads on a thread of its own
def test_simulate_evaluate_and_report_run_an_agentsense_grid_offline():
    team = default_team()
    instances = [made.scenario for spec in TEMPLATES for made in install_template_instances(spec, team)]
    codenames = ",".join(scenario.codename for scenario in instances)
    quiet = {"stdout": StringIO(), "stderr": StringIO()}

    call_command("simulate", "--scenarios", codenames, "--conditions", "none", "--run-name", "grid",
                 "--seat-models", "sender=scripted,receiver=scripted", "--judge-model", "scripted",
                 "--interview", **quiet)
    call_command("evaluate", "--tag", "grid", "--blind", **quiet)

    episodes = Episode.objects.filter(tag="grid")
    assert episodes.count() == len(instances) == 3 * len(TEMPLATES)
    assert all(episode.turns.count() <= TEMPLATE_TURN_CAP for episode in episodes)
    goals = Goal.objects.filter(role__scenario__in=instances).count()
    judged = Response.objects.filter(episode__in=episodes, instrument__preset=GOALS_PRESET, seat_position=None)
    assert sum(response.answers.count() for response in judged) == goals  # one judge, every goal once
    blind = Response.objects.filter(episode__in=episodes, respondent__prompt_version__startswith="scripted-blind")
    assert blind.exists()

    out = StringIO()
    call_command("benchmark_report", "--analysis", "agentsense", "--tag", "grid", "--format", "json",
                 "--bootstrap", "200", stdout=out, stderr=StringIO())
    report = json.loads(out.getvalue())

    assert report["counts"]["episodes"] == len(instances)
    for view in ("self", "other", "judges_majority"):
        cell = report["completion"][view]["scripted"]
        assert 0 <= cell["mean"] <= 1 and cell["ci95"] is not None
    assert set(report["completion_by_erg"]["scripted"]) == {"existence", "relatedness", "growth"}
    assert set(report["reasoning"]) == {"attacker", "defender", "blind"}
    psi = report["psi"]["goal_completion.self"]["scripted"]
    assert (psi["templates"], psi["scenarios"]) == (len(TEMPLATES), len(instances))
    assert {(c["sender_model"], c["receiver_model"]) for c in report["pairings"]["cells"]} == {("scripted", "scripted")}
