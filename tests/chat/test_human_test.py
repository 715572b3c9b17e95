"""AgentSense's human test after a chat: the participant's own goals (yes/no) and the probes about the others."""

import csv
import io

import pytest
from django.urls import reverse

from benchmark.evaluation.interviews.instruments import GOALS_PRESET, PROBES_PRESET
from benchmark.models import Answer, Probe, Respondent, Response, TurnTaking
from chat.human_test import human_test_for
from chat.models import Participant
from tests.builders import make_researcher, make_scenario, make_team
from tests.chat.builders import make_chat_study, make_participant, sign_in

pytestmark = pytest.mark.django_db

FAVOUR = {"key": "favour", "kind": "yes_no", "prompt": "Would you chat again?"}


def three_party_study(**fields):
    scenario = make_scenario(
        roles=[{"goal": ["Book the hall."]}, {"goal": ["Get a quiet date.", "Keep the budget secret."]},
               {"goal": ["Invite the band."]}],
        turn_taking=TurnTaking.RANDOM_AFTER_GREETING, greeter_position=0,
    )
    roles = {role.position: role for role in scenario.roles.all()}
    probe = {"topic": Probe.Topic.PRIVATE_INFO, "options": ["Red", "Green", "Blue"]}
    Probe.objects.create(scenario=scenario, about=roles[0], position=0, text="Which hall colour does Ana want?",
                         correct=2, **probe)
    Probe.objects.create(scenario=scenario, about=roles[1], position=1, text="What is the participant's budget?",
                         correct=0, **probe)  # about the participant's own role: not theirs to answer
    Probe.objects.create(scenario=scenario, about=roles[2], position=2, text="Which band does Cleo like?",
                         correct=1, asked_of=Probe.AskedOf.ANYONE, **probe)
    study = make_chat_study(scenarios=[scenario], conditions=["none"], human_position=1, questions=[FAVOUR], **fields)
    return study, scenario


def at_the_questions(client, study):
    participant = make_participant(study, stage=Participant.Stage.QUESTIONNAIRE)
    sign_in(client, participant)
    return participant


def test_the_page_asks_the_participants_own_goals_and_the_probes_they_may_be_asked(client):
    study, _ = three_party_study()
    participant = at_the_questions(client, study)

    page = client.get(reverse("chat:questionnaire", args=[study.slug]))

    form = page.context["test_form"]
    assert [field.label for field in form.goal_fields] == ["Get a quiet date.", "Keep the budget secret."]
    assert [field.label for field in form.probe_fields] == ["Which hall colour does Ana want?",
                                                           "Which band does Cleo like?"]
    assert [field.field.choices for field in form.probe_fields] == [[("0", "Red"), ("1", "Green"), ("2", "Blue")]] * 2
    html = page.content.decode()
    assert "Book the hall." not in html and "budget?" not in html  # the others' goals, the probe about oneself
    assert "correct" not in html.lower()
    assert human_test_for(participant).seat_position == 1


def test_submitting_stores_goals_probes_and_questionnaire_together(client):
    study, scenario = three_party_study()
    participant = at_the_questions(client, study)
    test = human_test_for(participant)
    goals = test.goals
    keys = [question.key for question, _ in test.probes]

    response = client.post(reverse("chat:questionnaire", args=[study.slug]), {
        f"goal-{goals[0].pk}": "yes", f"goal-{goals[1].pk}": "no",
        f"probe-{keys[0]}": "2", f"probe-{keys[1]}": "0", "favour": "yes",
    })

    assert response.status_code == 302
    participant.refresh_from_db()
    assert participant.stage == Participant.Stage.DONE
    stored = Response.objects.filter(episode=participant.episode).select_related("instrument", "respondent")
    by_preset = {r.instrument.preset: r for r in stored}
    assert len(stored) == 3 and {GOALS_PRESET, PROBES_PRESET} < set(by_preset)
    goals_response, probes_response = by_preset[GOALS_PRESET], by_preset[PROBES_PRESET]
    for answered in (goals_response, probes_response):
        assert answered.respondent.kind == Respondent.Kind.PARTICIPANT
        assert answered.respondent.label == participant.participant_id
        assert answered.seat_position == 1
    assert sorted(Answer.objects.filter(response=goals_response).values_list("goal__text", "value")) == [
        ("Get a quiet date.", "yes"), ("Keep the budget secret.", "no")
    ]
    assert list(Answer.objects.filter(response=probes_response).values_list("question__prompt", "value")) == [
        ("Which hall colour does Ana want?", "2"), ("Which band does Cleo like?", "0")
    ]
    assert probes_response.instrument.scenario == scenario
    assert participant.response.answers.get().value == "yes"


def test_a_missing_answer_stores_nothing_and_names_the_question(client):
    study, _ = three_party_study()
    participant = at_the_questions(client, study)
    test = human_test_for(participant)
    goals = test.goals

    page = client.post(reverse("chat:questionnaire", args=[study.slug]), {
        f"goal-{goals[0].pk}": "yes", f"goal-{goals[1].pk}": "no", f"probe-{test.probes[0][0].key}": "7",
        "favour": "yes",
    })

    assert page.status_code == 200
    errors = page.context["test_form"].errors
    assert "Question 1 about the others: choose one of: Red, Green, Blue." in str(errors)
    assert "Please answer question 2 about the others" in str(errors)
    assert not Response.objects.filter(episode=participant.episode).exists()
    participant.refresh_from_db()
    assert participant.stage == Participant.Stage.QUESTIONNAIRE


def test_a_two_party_study_without_probes_asks_as_before(client):
    study = make_chat_study(scenarios=1, conditions=["none"], questions=[FAVOUR])
    participant = at_the_questions(client, study)

    page = client.get(reverse("chat:questionnaire", args=[study.slug]))

    assert human_test_for(participant) is None
    assert not page.context["test_form"].fields
    assert "Your goals" not in page.content.decode()


def test_a_two_party_scenario_with_probes_about_the_other_asks_them():
    scenario = make_scenario()
    agent_role = scenario.roles.get(position=0)
    Probe.objects.create(scenario=scenario, about=agent_role, position=0, topic=Probe.Topic.GOAL,
                         text="What does the neighbour want?", options=["Quiet", "Money"], correct=0)
    study = make_chat_study(scenarios=[scenario], conditions=["none"], human_position=1)

    test = human_test_for(make_participant(study, stage=Participant.Stage.QUESTIONNAIRE))

    assert [probe.text for _, probe in test.probes] == ["What does the neighbour want?"]
    assert [goal.text for goal in test.goals] == ["Reach goal 2."]


# What the researcher reads back


def finish_the_test(client, study):
    """A participant who answered: goal 1 yes, goal 2 no; the hall colour right (Blue), Cleo's band wrong (Red)."""
    participant = at_the_questions(client, study)
    test = human_test_for(participant)
    keys = [question.key for question, _ in test.probes]
    client.post(reverse("chat:questionnaire", args=[study.slug]), {
        f"goal-{test.goals[0].pk}": "yes", f"goal-{test.goals[1].pk}": "no",
        f"probe-{keys[0]}": "2", f"probe-{keys[1]}": "0", "favour": "yes",
    })
    participant.refresh_from_db()
    assert participant.stage == Participant.Stage.DONE
    return participant


def test_the_live_monitor_shows_each_participants_own_goals_and_probe_answers(client):
    study, _ = three_party_study()
    finish_the_test(client, study)
    client.force_login(study.created_by)

    page = client.get(reverse("chat:monitor-live", args=[study.slug])).content.decode()

    assert "1 of 2 own goals reached; 1 of 2 probes right" in page
    assert "Goal “Get a quiet date.”: <strong>yes</strong>" in page
    assert "Goal “Keep the budget secret.”: <strong>no</strong>" in page
    assert "Which hall colour does Ana want? <strong>Blue</strong> <span class=\"muted\">(correct)</span>" in page
    assert "Which band does Cleo like? <strong>Red</strong> <span class=\"muted\">(wrong)</span>" in page


def test_the_transcript_page_shows_them_beside_the_questionnaire(client):
    study, _ = three_party_study()
    participant = finish_the_test(client, study)
    client.force_login(study.created_by)

    page = client.get(reverse("chat:transcript", args=[study.slug, participant.pk])).content.decode()

    assert "Own goals and probes" in page and "1 of 2 own goals reached; 1 of 2 probes right" in page


def test_the_participants_csv_has_the_goal_and_probe_answers(client):
    study, _ = three_party_study()
    participant = finish_the_test(client, study)
    client.force_login(study.created_by)

    rows = list(csv.DictReader(io.StringIO(client.get(reverse("chat:export", args=[study.slug])).content.decode())))

    assert len(rows) == 1 and rows[0]["participant_id"] == participant.participant_id
    assert {key: rows[0][key] for key in ("goals", "goals_reached", "probes", "probes_correct", "favour")} == {
        "goals": "2", "goals_reached": "1", "probes": "2", "probes_correct": "1", "favour": "yes",
    }
    assert rows[0]["goal_answers"] == "Get a quiet date. = yes; Keep the budget secret. = no"
    assert rows[0]["probe_answers"] == (
        "Which hall colour does Ana want? = Blue (correct); Which band does Cleo like? = Red (wrong)"
    )


def test_a_participant_without_the_test_has_empty_test_columns(client):
    study = make_chat_study(scenarios=1, conditions=["none"], questions=[FAVOUR])
    make_participant(study, stage=Participant.Stage.DONE)
    client.force_login(study.created_by)

    rows = list(csv.DictReader(io.StringIO(client.get(reverse("chat:export", args=[study.slug])).content.decode())))

    assert [rows[0][key] for key in ("goals", "goals_reached", "goal_answers", "probes", "probe_answers")] == [""] * 5


def test_another_teams_researcher_reads_none_of_them(client):
    study, _ = three_party_study()
    finish_the_test(client, study)
    client.force_login(make_researcher(make_team()))

    for name in ("chat:monitor-live", "chat:export"):
        assert client.get(reverse(name, args=[study.slug])).status_code == 404
