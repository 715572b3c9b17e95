"""The demo loader: 12 two-party scenarios and a three-party one × 4 conditions, two templates of three
and four parties with three casts each, ProMediate's HMO negotiation under two conflict modes × three
mediator conditions with its consensus trace, scripted episodes, scores, interviews and accounts, idempotent."""

import json
import re
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import resolve

from benchmark.agents import scripted
from benchmark.demo.content import CONDITIONS, GROUP_SCENARIOS, SCENARIOS
from benchmark.demo.group_templates import TEMPLATES
from benchmark.models import (
    ERG,
    Answer,
    Attitude,
    Character,
    Episode,
    Goal,
    MediatorDecision,
    PairAgreement,
    Probe,
    Relationship,
    Respondent,
    Response,
    Role,
    Scenario,
    TopicTag,
    Turn,
)
from benchmark.scenarios.templates import fits

# The demo is built once per session and laid for this module (tests/worlds.py): ``load_demo --base-url
# https://parley.example.org/`` on an empty database; each test's changes roll back.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo_world")]


def load(*args: str) -> str:
    out = StringIO()
    call_command("load_demo", *args, stdout=out)
    return out.getvalue()


def counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Character, Scenario, Role, Goal, Probe, Episode, Turn, Response, Answer, User, MediatorDecision,
                      PairAgreement, Attitude, TopicTag)
    }


def test_demo_content_is_varied_and_plain_beats_carry_no_barrier_signals():
    assert len(SCENARIOS) >= 12
    assert {s.relationship for s in SCENARIOS} >= {
        Relationship.FAMILY,
        Relationship.FRIEND,
        Relationship.ROMANTIC,
        Relationship.ACQUAINTANCE,
        Relationship.STRANGER,
    }
    assert {s.difficulty for s in SCENARIOS} == {"standard", "hard"}
    for spec in [*SCENARIOS, *GROUP_SCENARIOS]:
        for role in spec.roles:
            assert 6 <= len(role.beats) <= 10, spec.codename
            assert role.character.secret and role.character.big_five and role.goals
            for beat in role.beats:
                assert not any(scripted.barrier_signals(beat).values()), beat
                assert not scripted.is_clarification_request(beat), beat
            assert all(goal.text not in spec.context for goal in role.goals)


def test_the_group_scenario_has_three_parties_two_typed_goals_each_labels_and_probes_about_each():
    (spec,) = GROUP_SCENARIOS
    assert len(spec.roles) == 3
    assert spec.category == "personal_domain"
    assert [role.communication for role in spec.roles] == ["receiver", "sender", "sender"]
    for role in spec.roles:
        assert len(role.goals) == 2
        assert all(goal.goal_type in ERG for goal in role.goals)
    assert {probe.about for probe in spec.probes} == {0, 1, 2}
    assert all(0 <= probe.correct < len(probe.options) for probe in spec.probes)


def test_load_demo_creates_scenarios_episodes_scores_and_accounts(demo_world):
    output = demo_world.output["load_demo"]  # its first run, with --base-url https://parley.example.org/

    demo = Episode.objects.filter(tag="demo")
    assert Scenario.objects.filter(external_id__startswith="demo-scenario-").count() == len(SCENARIOS) + 1 == 13
    assert demo.count() == 4 * len(SCENARIOS) == 48
    for scenario in Scenario.objects.filter(external_id__startswith="demo-scenario-"):
        conditions = sorted(scenario.episodes.values_list("barrier__key", flat=True))
        assert conditions == sorted(CONDITIONS)
    for episode in demo.prefetch_related("turns"):
        assert 8 <= episode.turns.count() <= 20, episode
        assert episode.status == Episode.Status.FINISHED
        assert episode.source == Episode.Source.SIMULATED
        assert episode.end_reason in {Episode.EndReason.LEAVE, Episode.EndReason.TURN_CAP}
        assert {t.model for t in episode.turns.all()} == {"scripted"}
        scripted_answers = Answer.objects.filter(response__episode=episode, response__respondent__model="scripted")
        assert scripted_answers.count() == 2 * 7 + 2  # seven questions per seat, two per episode
    baseline_turns = Turn.objects.filter(episode__tag="demo", episode__barrier__key="none")
    assert not any(scripted.is_clarification_request(t.content) for t in baseline_turns)
    # the two-party demo is as it was: nobody interviewed
    assert not Response.objects.filter(episode__tag="demo", respondent__kind=Respondent.Kind.AGENT).exists()

    groups = Episode.objects.filter(tag="demo-groups", scenario__codename="heating-bill")
    assert groups.count() == 4
    for episode in groups:
        assert episode.status == Episode.Status.FINISHED and episode.seats.count() == 3
        assert set(episode.turns.values_list("seat__position", flat=True)) == {0, 1, 2}
        judged = Answer.objects.filter(response__episode=episode, response__respondent__kind=Respondent.Kind.JUDGE)
        assert judged.filter(goal__isnull=True).count() == 3 * 7 + 2  # seven questions per seat, two per episode
        # and the scripted judge answers each of the six goals (the external perspective)
        assert judged.filter(goal__isnull=False, response__seat_position__isnull=True).count() == 6
        # every seat answers the six goal questions and the probes it may be asked
        agents = episode.responses.filter(respondent__kind=Respondent.Kind.AGENT)
        responses = agents.exclude(respondent__prompt_version__startswith="scripted-blind-")
        assert sorted(responses.values_list("seat_position", flat=True)) == [0, 0, 1, 1, 2, 2]
        # and each seat answers its probes blind too, before the talk (the baseline)
        blind = agents.filter(respondent__prompt_version="scripted-blind-1")
        assert sorted(blind.values_list("seat_position", flat=True)) == [0, 1, 2]
        goal_answers = Answer.objects.filter(response__in=responses, goal__isnull=False)
        assert goal_answers.count() == 3 * 6
        assert set(goal_answers.values_list("value", flat=True)) <= {"yes", "no"}

    researcher = User.objects.get(username="researcher")
    # a researcher of the default team, with no admin rights: the admin is for superusers
    assert not researcher.is_staff and not researcher.is_superuser
    assert list(researcher.groups.values_list("name", flat=True)) == ["researchers"]
    assert not researcher.groups.get().permissions.exists()
    assert list(researcher.team_memberships.values_list("team__slug", "role")) == [("default", "researcher")]
    for name in ("annotator1", "annotator2", "annotator3"):
        annotator = User.objects.get(username=name)
        assert list(annotator.groups.values_list("name", flat=True)) == ["annotators"]
        assert not annotator.is_staff and not annotator.is_superuser

    assert not User.objects.filter(username="admin").exists()  # make demo's demo_logins makes the superuser

    links = re.findall(r"https://parley\.example\.org(/login/\S+)", output)
    assert len(links) == 4
    assert all(resolve(path).url_name == "login-link" for path in links)
    assert output.count("password ") == 4
    assert "shared-car" in output and output.strip().splitlines()[-1].startswith(
        "Demo ready: 13 scenarios, 2 templates, 58 episodes"
    )


def test_the_demo_negotiations_are_played_read_and_reported_per_mode_and_mediator(demo_world):
    """ProMediate's HMO case under Competing and Accommodating × no mediator, generic, social: played by the
    scripted negotiators, read by the scripted evaluation pass, and every Table 1 cell has a conversation."""
    episodes = Episode.objects.filter(tag="demo-promediate").select_related("barrier")
    cells = {(e.barrier.key, e.settings["promediate"]["mediator"]) for e in episodes}
    assert cells == {(mode, mediator) for mode in ("promediate-competing", "promediate-accommodating")
                     for mediator in ("none", "generic", "social")}
    for episode in episodes:
        turns = list(episode.turns.order_by("index").values_list("seat__position", flat=True))
        mediator = episode.settings["promediate"]["mediator_position"]
        assert episode.status == Episode.Status.FINISHED and len(turns) <= 1 + 4 * 3 * 5
        assert episode.seats.count() == (3 if episode.settings["promediate"]["mediator"] == "none" else 4)
        assert not any(a == b == mediator for a, b in zip(turns, turns[1:], strict=False))  # never twice in a row
        assert episode.pair_agreements.filter(judge="scripted").exists()
        if mediator is not None:
            # a chance to intervene after every party turn but the last
            assert episode.mediator_decisions.count() == sum(1 for position in turns[:-1] if position != mediator)
            interventions = len(turns[1:]) - sum(1 for position in turns[1:] if position != mediator)
            rated = Answer.objects.filter(response__episode=episode, response__respondent__kind=Respondent.Kind.JUDGE,
                                          turn__isnull=False)
            assert rated.values("turn").distinct().count() == interventions

    out = StringIO()
    call_command("benchmark_report", "--analysis", "promediate", "--tag", "demo-promediate", "--format", "json",
                 stdout=out)
    table = json.loads(out.getvalue())["table1"]
    for mode in ("competing", "accommodating"):
        for condition in ("none", "generic", "social"):
            assert table["cells"]["consensus_change"][mode][condition]["n"] == 1, (mode, condition)
            mediated = table["cells"]["intervention_frequency"][mode][condition]
            assert mediated["defined"] == (condition != "none") and (condition == "none" or mediated["mean"] > 0)


def test_load_demo_is_idempotent():  # the world is the first run
    before = counts()
    turns = list(Turn.objects.order_by("episode__external_id", "index").values_list("content", flat=True))
    output = load()
    assert counts() == before
    assert list(Turn.objects.order_by("episode__external_id", "index").values_list("content", flat=True)) == turns
    assert "(0 new)" in output
    assert "unchanged" in output


PLACEHOLDER = re.compile(r"\{role(\d+)\}")


def test_the_templates_have_three_or_four_slots_typed_goals_labels_and_probes_with_four_options():
    assert len(TEMPLATES) >= 2
    assert len({template.category for template in TEMPLATES}) >= 2
    needs = set()
    for template in TEMPLATES:
        assert 3 <= len(template.slots) <= 4, template.codename
        assert (template.turn_taking, template.greeter, template.turn_cap) == ("random_after_greeting", 0, 15)
        assert {slot.communication for slot in template.slots} == {"sender", "receiver"}
        for slot in template.slots:
            assert 2 <= len(slot.goals) <= 3
            assert all(goal.goal_type in ERG for goal in slot.goals)
            needs |= {ERG[goal.goal_type] for goal in slot.goals}
            assert slot.private_knowledge and 4 <= len(slot.beats) <= 10
            for beat in slot.beats:
                assert not any(scripted.barrier_signals(beat).values()), beat
                assert not scripted.is_clarification_request(beat), beat
            assert all(goal.text not in template.context for goal in slot.goals)
        # the probes ask about private facts of several roles, four options each, in range
        private = {probe.about for probe in template.probes if probe.topic == "private_info"}
        assert len(private) >= 2
        assert all(len(probe.options) == 4 and 0 <= probe.correct < 4 for probe in template.probes)
        texts = [template.context, template.original_context]
        texts += [text for slot in template.slots for text in (slot.reason, slot.private_knowledge, *slot.beats)]
        texts += [goal.text for slot in template.slots for goal in slot.goals]
        texts += [text for probe in template.probes for text in (probe.text, *probe.options)]
        assert {int(n) for text in texts for n in PLACEHOLDER.findall(text)} <= set(range(len(template.slots)))
    assert needs == {"existence", "relatedness", "growth"}


def test_each_template_is_filled_with_three_casts_that_fit_its_slots_and_carry_its_labels():
    for spec in TEMPLATES:
        template = Scenario.objects.get(external_id=f"demo-template-{spec.codename}")
        assert template.is_template and not template.episodes.exists()
        slots = list(template.roles.order_by("position"))
        instances = list(template.instances.order_by("pk"))
        assert len(instances) == 3
        casts = set()
        for instance in instances:
            roles = list(instance.roles.select_related("character").order_by("position"))
            casts.add(tuple(role.character_id for role in roles))
            assert all(fits(slot, role.character) for slot, role in zip(slots, roles, strict=True))
            assert instance.category == spec.category and instance.turn_cap == 15
            assert [role.communication for role in roles] == [slot.communication for slot in spec.slots]
            goals = Goal.objects.filter(role__scenario=instance).order_by("role__position", "position")
            assert [goal.goal_type for goal in goals] == [g.goal_type for slot in spec.slots for g in slot.goals]
            texts = [instance.context, *(goal.text for goal in goals)]
            texts += [text for probe in instance.probes.all() for text in (probe.text, *probe.options)]
            assert not any(PLACEHOLDER.search(text) for text in texts)
            assert instance.probes.count() == len(spec.probes)
        assert len(casts) == 3


def test_template_episodes_open_with_the_greeter_and_have_self_other_external_probe_and_blind_answers():
    episodes = Episode.objects.filter(tag="demo-groups", scenario__template__isnull=False)
    assert episodes.count() == 3 * len(TEMPLATES)
    assert not Episode.objects.filter(tag="demo", scenario__template__isnull=False).exists()
    for episode in episodes:
        turns = list(episode.turns.select_related("seat").order_by("index"))
        assert episode.status == Episode.Status.FINISHED and len(turns) <= 15
        assert turns[0].seat.position == 0 and turns[0].content.startswith(("Good evening", "Thank you"))
        seats = episode.seats.count()
        assert {turn.seat.position for turn in turns} == set(range(seats))
        goals = Goal.objects.filter(role__scenario=episode.scenario)
        agents = Answer.objects.filter(response__episode=episode, response__respondent__kind=Respondent.Kind.AGENT)
        blind = agents.filter(response__respondent__prompt_version="scripted-blind-1")
        answers = agents.exclude(response__respondent__prompt_version="scripted-blind-1").select_related(
            "response", "goal__role", "question"
        )
        goal_answers = [answer for answer in answers if answer.goal is not None]
        own = [a for a in goal_answers if a.goal.role.position == a.response.seat_position]
        other = [a for a in goal_answers if a.goal.role.position != a.response.seat_position]
        # every seat answers every goal: its own (self) and each other role's (other)
        assert len(own) == goals.count() and len(other) == (seats - 1) * goals.count()
        assert all(a.value in {"yes", "no"} and a.reasoning for a in goal_answers)
        external = Answer.objects.filter(
            response__episode=episode,
            response__respondent__kind=Respondent.Kind.JUDGE,
            goal__isnull=False,
            response__seat_position__isnull=True,
        )
        # and the scripted judge answers each goal once, yes or no with its reasons (external)
        assert sorted(external.values_list("goal_id", flat=True)) == sorted(goals.values_list("pk", flat=True))
        assert all(a.value in {"yes", "no"} and a.reasoning for a in external)
        probe_answers = [answer for answer in answers if answer.goal is None]
        probes = list(episode.scenario.probes.select_related("about"))
        assert len(probe_answers) == sum(seats - 1 for probe in probes)
        assert all(a.value in {"0", "1", "2", "3"} and "correct" in a.question.options for a in probe_answers)
        # the blind test: the same probes, answered from the scenario alone
        assert blind.filter(goal__isnull=True).count() == len(probe_answers) and not blind.filter(goal__isnull=False)
    # across the demo, seats judge their own goals more generously than the others' (AgentSense's finding)
    interviews = Answer.objects.filter(
        response__episode__in=episodes, response__respondent__kind=Respondent.Kind.AGENT, goal__isnull=False
    ).select_related("goal__role", "response")
    own_yes = [a.value == "yes" for a in interviews if a.goal.role.position == a.response.seat_position]
    other_yes = [a.value == "yes" for a in interviews if a.goal.role.position != a.response.seat_position]
    assert 0 < sum(other_yes) / len(other_yes) < sum(own_yes) / len(own_yes) < 1


def test_the_demo_feeds_every_agentsense_analysis_psi_over_the_templates_included():
    out = StringIO()

    call_command("benchmark_report", "--analysis", "agentsense", "--tag", "demo-groups", "--format", "json", stdout=out)

    report = json.loads(out.getvalue())
    assert report["counts"]["episodes"] == 4 + 3 * len(TEMPLATES)
    assert set(report["completion"]) >= {"self", "other", "judges_majority"}
    assert set(report["completion_by_erg"]["scripted"]) == {"existence", "relatedness", "growth"}
    assert set(report["completion_by_category"]["scripted"]) == {"personal_domain", "small_society"}
    assert set(report["reasoning"]) == {"attacker", "defender", "blind"}
    psi = report["psi"]["goal_completion.self"]["scripted"]
    assert (psi["templates"], psi["scenarios"]) == (2, 6)
    assert set(psi["by_template"]) == {template.codename for template in TEMPLATES}
