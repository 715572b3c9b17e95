"""The scenario editor: a whole scenario in one submit, bad input named by row and field, played scenarios kept."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from benchmark.models import Barrier, Goal, Probe, Scenario, ScenarioBarrier
from tests.builders import get_barrier, make_character, make_episode, make_researcher, make_scenario, make_team

pytestmark = pytest.mark.django_db


def management(prefix: str, total: int, initial: int = 0) -> dict[str, Any]:
    return {f"{prefix}-TOTAL_FORMS": str(total), f"{prefix}-INITIAL_FORMS": str(initial),
            f"{prefix}-MIN_NUM_FORMS": "0", f"{prefix}-MAX_NUM_FORMS": "1000"}


def new_scenario_post(characters, **overrides: Any) -> dict[str, Any]:
    """A two-role scenario with one goal, one probe and one barrier row, as the page posts it."""
    data = {
        "codename": "charity_donation", "external_id": "", "source": "socialveil",
        "context": "Two colleagues talk about a donation drive.", "difficulty": "standard", "category": "",
        "relationship": "2", "turn_taking": "round_robin", "greeter_position": "", "turn_cap": "12",
        **management("roles", 3, 2),
        "roles-0-character": str(characters[0].pk), "roles-0-reason": "Wants to help.",
        "roles-1-character": str(characters[1].pk),
        **management("goals", 2),
        "goals-0-role": "1", "goals-0-text": "Convince the other to donate.", "goals-0-goal_type": "cooperation",
        "goals-0-tags": "persuasion, hard",
        **management("probes", 1),
        "probes-0-about": "1", "probes-0-topic": "goal", "probes-0-text": "What does role 1 want?",
        "probes-0-options": "a donation\na loan\nnothing", "probes-0-correct": "1", "probes-0-asked_of": "others",
        **management("barriers", 1),
    }
    data.update(overrides)
    return data


@pytest.fixture
def researcher():
    team = make_team()
    user = make_researcher(team)
    user.test_team = team
    return user


@pytest.fixture
def browser(client, researcher):
    client.force_login(researcher)
    return client


def characters_of(team, n=2):
    return [make_character(team=team) for _ in range(n)]


def test_a_new_scenario_is_written_in_one_submit(browser, researcher):
    team = researcher.test_team
    people = characters_of(team)
    semantic = get_barrier("semantic")
    data = new_scenario_post(people, **{
        "barriers-0-barrier": str(semantic.pk), "barriers-0-seats": ["2"],
        "barriers-0-style_directive": "Speak in riddles.", "barriers-0-trait_note": "Vague.",
    })
    response = browser.post(reverse("benchmark:scenario-new"), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    scenario = Scenario.objects.get(team=team)
    assert [role.character for role in scenario.roles.order_by("position")] == people
    goal = Goal.objects.get(role__scenario=scenario)
    assert (goal.role.position, goal.goal_type, goal.tags) == (0, "cooperation", ["persuasion", "hard"])
    probe = Probe.objects.get(scenario=scenario)
    assert (probe.about.position, probe.options, probe.correct) == (0, ["a donation", "a loan", "nothing"], 0)
    prompt = ScenarioBarrier.objects.get(scenario=scenario)
    assert (prompt.barrier, prompt.barrier_positions) == (semantic, [1])
    assert scenario.turn_cap == 12


def test_a_probe_whose_correct_option_does_not_exist_is_named(browser, researcher):
    data = new_scenario_post(characters_of(researcher.test_team), **{"probes-0-correct": "5"})
    response = browser.post(reverse("benchmark:scenario-new"), data)
    assert response.status_code == 200
    assert "There are 3 options: pick a number from 1 to 3." in response.content.decode()
    assert not Scenario.objects.filter(team=researcher.test_team).exists()


def test_a_probe_with_one_option_is_refused(browser, researcher):
    data = new_scenario_post(characters_of(researcher.test_team), **{"probes-0-options": "only one"})
    body = browser.post(reverse("benchmark:scenario-new"), data).content.decode()
    assert "A probe needs at least two options, one a line." in body


def test_one_role_is_not_a_scenario(browser, researcher):
    people = characters_of(researcher.test_team)
    data = new_scenario_post(people, **{"roles-1-character": "", **management("roles", 2, 1)})
    body = browser.post(reverse("benchmark:scenario-new"), data).content.decode()
    assert "A scenario needs at least two roles" in body


def test_a_role_left_without_a_character_is_named(browser, researcher):
    data = new_scenario_post(characters_of(researcher.test_team), **{"roles-1-character": ""})
    body = browser.post(reverse("benchmark:scenario-new"), data).content.decode()
    assert "Choose the character who plays this role." in body
    assert not Scenario.objects.filter(team=researcher.test_team).exists()


def test_a_goal_for_a_removed_role_is_named(browser, researcher):
    data = new_scenario_post(characters_of(researcher.test_team), **{"goals-0-role": "3"})
    body = browser.post(reverse("benchmark:scenario-new"), data).content.decode()
    assert "Role 3 is removed or left empty; choose another." in body


def test_another_teams_character_is_not_offered(browser, researcher):
    stranger = make_character(team=make_team(), first_name="Strangerqz")
    people = characters_of(researcher.test_team)
    data = new_scenario_post(people, **{"roles-1-character": str(stranger.pk)})
    body = browser.post(reverse("benchmark:scenario-new"), data).content.decode()
    assert "Choose one of your team&#x27;s characters." in body
    assert "Strangerqz" not in body


def test_a_greeter_under_round_robin_is_refused(browser, researcher):
    data = new_scenario_post(characters_of(researcher.test_team), greeter_position="0")
    body = browser.post(reverse("benchmark:scenario-new"), data).content.decode()
    assert "Only random order after a greeting and a negotiation have a greeter." in body


def test_a_turn_cap_of_zero_is_named(browser, researcher):
    data = new_scenario_post(characters_of(researcher.test_team), turn_cap="0")
    body = browser.post(reverse("benchmark:scenario-new"), data).content.decode()
    assert "A turn cap is at least 1; leave it empty to use the run&#x27;s cap." in body


def test_an_empty_new_goal_row_is_skipped(browser, researcher):
    data = new_scenario_post(characters_of(researcher.test_team), **{"goals-1-role": "", "goals-1-text": "",
                                                                      "goals-1-goal_type": "", "goals-1-tags": ""})
    assert browser.post(reverse("benchmark:scenario-new"), data).status_code == 302
    assert Goal.objects.filter(role__scenario__team=researcher.test_team).count() == 1


def test_a_goal_without_its_role_is_named(browser, researcher):
    data = new_scenario_post(characters_of(researcher.test_team), **{"goals-1-role": "", "goals-1-text": "Win."})
    body = browser.post(reverse("benchmark:scenario-new"), data).content.decode()
    assert "Choose the role it is for." in body


def test_a_removed_role_takes_its_goals_and_the_next_role_moves_up(browser, researcher):
    scenario = make_scenario(team=researcher.test_team, roles=3)
    third = scenario.roles.get(position=2).character
    data = edit_post(scenario, **{"roles-0-DELETE": "on", "goals-0-DELETE": "on"})
    data.update({"goals-1-role": "2", "goals-2-role": "3"})
    response = browser.post(reverse("benchmark:scenario-edit", args=[scenario.pk]), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    roles = list(scenario.roles.order_by("position"))
    assert len(roles) == 2 and roles[1].character == third
    assert [goal.text for goal in roles[1].goals.all()] == ["Reach goal 3."]


def test_another_teams_scenario_cannot_be_posted_to(browser):
    scenario = make_scenario(team=make_team(), context="Theirs.")
    response = browser.post(reverse("benchmark:scenario-edit", args=[scenario.pk]), edit_post(scenario, context="x"))
    assert response.status_code == 404
    scenario.refresh_from_db()
    assert scenario.context == "Theirs."


def test_an_external_id_the_team_has_is_named(browser, researcher):
    make_scenario(team=researcher.test_team, external_id="sv-1")
    data = new_scenario_post(characters_of(researcher.test_team), external_id="sv-1")
    body = browser.post(reverse("benchmark:scenario-new"), data).content.decode()
    assert "Another of the team&#x27;s scenarios has this external id." in body


def edit_post(scenario: Scenario, **overrides: Any) -> dict[str, Any]:
    """The edit page's form as it comes, with ``overrides``."""
    from benchmark.authoring.scenario_forms import ScenarioEditor

    editor = ScenarioEditor(make_researcher(scenario.team), scenario)
    data: dict[str, Any] = {}
    for form in [editor.fields, *(form for formset in editor.formsets for form in formset)]:
        for field in form:
            value = field.value()
            if value is None:
                continue
            data[field.html_name] = [str(v) for v in value] if isinstance(value, list) else str(value)
    for formset in editor.formsets:
        data.update(management(formset.prefix, formset.total_form_count(), formset.initial_form_count()))
    data.update(overrides)
    return data


def test_an_unplayed_scenario_changes_in_place(browser, researcher):
    scenario = make_scenario(team=researcher.test_team)
    response = browser.post(reverse("benchmark:scenario-edit", args=[scenario.pk]),
                            edit_post(scenario, context="A new context.", **{"goals-1-text": "A new goal."}))
    assert response.status_code == 302
    scenario.refresh_from_db()
    assert scenario.context == "A new context."
    assert list(Goal.objects.filter(role__scenario=scenario).values_list("text", flat=True)) == [
        "Reach goal 1.", "A new goal."]


def test_a_played_scenario_keeps_what_its_agents_were_told(browser, researcher):
    scenario = make_scenario(team=researcher.test_team, context="As played.")
    make_episode(scenario=scenario)
    response = browser.post(reverse("benchmark:scenario-edit", args=[scenario.pk]),
                            edit_post(scenario, context="Rewritten."))
    assert response.status_code == 200
    assert "1 episode was played on this scenario" in response.content.decode()
    scenario.refresh_from_db()
    assert scenario.context == "As played."


def test_a_played_scenario_takes_a_new_label_in_place(browser, researcher):
    scenario = make_scenario(team=researcher.test_team, codename="old-name")
    make_episode(scenario=scenario)
    response = browser.post(reverse("benchmark:scenario-edit", args=[scenario.pk]),
                            edit_post(scenario, codename="new-name", source="mine"))
    assert response.status_code == 302
    scenario.refresh_from_db()
    assert (scenario.codename, scenario.source) == ("new-name", "mine")


def test_a_played_scenario_saved_as_new_is_a_copy_with_the_edits(browser, researcher):
    scenario = make_scenario(team=researcher.test_team, context="As played.", external_id="sv-7")
    make_episode(scenario=scenario)
    response = browser.post(reverse("benchmark:scenario-edit", args=[scenario.pk]),
                            edit_post(scenario, context="Rewritten.", save_as_new="1"))
    assert response.status_code == 302
    copy = Scenario.objects.exclude(pk=scenario.pk).get(team=researcher.test_team)
    assert (copy.context, copy.external_id, copy.roles.count()) == ("Rewritten.", None, 2)
    scenario.refresh_from_db()
    assert scenario.context == "As played."


def test_a_barrier_of_another_team_is_refused(browser, researcher):
    theirs = Barrier.objects.create(team=make_team(), key="theirs", name="Theirs", definition="x")
    data = new_scenario_post(characters_of(researcher.test_team), **{
        "barriers-0-barrier": str(theirs.pk), "barriers-0-seats": ["1"], "barriers-0-style_directive": "x"})
    body = browser.post(reverse("benchmark:scenario-new"), data).content.decode()
    assert "Choose a built-in barrier or one of your team&#x27;s." in body


def test_another_teams_scenario_is_not_found(browser):
    scenario = make_scenario(team=make_team())
    assert browser.get(reverse("benchmark:scenario-edit", args=[scenario.pk])).status_code == 404


def test_the_edit_page_shows_the_stored_rows(browser, researcher):
    scenario = make_scenario(team=researcher.test_team, context="Stairwell talk.")
    body = browser.get(reverse("benchmark:scenario-edit", args=[scenario.pk])).content.decode()
    assert "Stairwell talk." in body and "Reach goal 2." in body
