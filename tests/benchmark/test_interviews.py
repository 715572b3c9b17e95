"""Interviews of agents after an episode: every goal, self and other, and the probes each may be asked."""

import json
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.urls import reverse

from benchmark.agents import llm
from benchmark.demo.content import GROUP_SCENARIOS
from benchmark.demo.install import beats_of, install_scenario
from benchmark.evaluation.answer_groups import answer_groups
from benchmark.evaluation.interviews import blind
from benchmark.evaluation.interviews import scripted as scripted_answers
from benchmark.evaluation.interviews.asking import load_interviews
from benchmark.evaluation.interviews.instruments import (
    GOALS_PRESET,
    goals_instrument,
    may_be_asked,
    probes_instrument,
)
from benchmark.evaluation.interviews.running import CACHED, FAILED, INTERVIEWED, interview_episode
from benchmark.models import (
    Answer,
    Episode,
    Instrument,
    Probe,
    Question,
    Respondent,
    Response,
    Seat,
    SimulationRun,
)
from benchmark.runs import control
from benchmark.runs.simulation import create_episode, run_episode
from tests.builders import default_team, get_barrier, make_episode, make_researcher, make_team, make_user
from tests.fake_llm import FAKE_MODEL

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


def group_episode(model: str = llm.SCRIPTED, condition: str = "none") -> Episode:
    """The three-party demo scenario, played by the scripted model; its seats then set to ``model``."""
    spec = GROUP_SCENARIOS[0]
    scenario = install_scenario(spec, default_team())
    episode = create_episode(scenario, get_barrier(condition), models=dict.fromkeys(range(3), llm.SCRIPTED),
                             turn_cap=scenario.turn_cap)
    episode = async_to_sync(run_episode)(episode, seed=1, beats=beats_of(spec))
    episode.seats.update(model=model)
    return episode


def interview(episode: Episode, **options):
    return async_to_sync(interview_episode)(episode.pk, **options)


def answers_of(episode: Episode, seat: int) -> dict[str, list[tuple[str, str]]]:
    rows = Answer.objects.filter(response__episode=episode, response__seat_position=seat).select_related(
        "question__instrument", "goal"
    )
    found: dict[str, list[tuple[str, str]]] = {}
    for answer in rows:
        what = answer.goal.text if answer.goal_id else answer.question.prompt
        found.setdefault(answer.question.instrument.preset, []).append((what, answer.value))
    return found


# --- the scripted model -----------------------------------------------------------------------------


def test_every_seat_answers_every_goal_and_the_probes_it_may_be_asked():
    episode = group_episode()
    result = interview(episode)

    assert (result.outcome, result.responses) == (INTERVIEWED, 6)
    respondent = Respondent.objects.get()
    assert (respondent.kind, respondent.model, respondent.prompt_version) == (
        "agent", "scripted", scripted_answers.VERSION
    )
    spec = GROUP_SCENARIOS[0]
    goals = [goal.text for role in spec.roles for goal in role.goals]
    for seat in range(3):
        answers = answers_of(episode, seat)
        assert sorted(text for text, _ in answers[GOALS_PRESET]) == sorted(goals)
        assert {value for _, value in answers[GOALS_PRESET]} <= {"yes", "no"}
        asked = {probe.text for probe in spec.probes if probe.asked_of == "anyone" or probe.about != seat}
        assert {text for text, _ in answers["scenario-probes"]} == asked
    reasons = Answer.objects.values_list("reasoning", flat=True)
    assert all(reason.startswith(scripted_answers.DISCLAIMER) for reason in reasons)


def test_a_seat_knows_the_answer_about_itself_and_picks_what_the_other_said_about_others():
    episode = group_episode()
    interview(episode)
    probes = {probe.text: probe for probe in Probe.objects.filter(scenario=episode.scenario)}
    for answer in Answer.objects.filter(goal__isnull=True).select_related("question", "response"):
        probe = probes[answer.question.prompt]
        if probe.about.position == answer.response.seat_position:
            assert answer.value == str(probe.correct)
    # Ifeoma said the landlord called her radiator faulty: the others pick that option
    radiator = probes["What had the landlord told Ifeoma about the radiator in her room?"]
    picked = Answer.objects.filter(question__prompt=radiator.text).values_list("value", flat=True)
    assert set(picked) == {str(radiator.correct)}


def test_the_scripted_answers_are_the_same_every_time():
    episode = group_episode(condition="emotional")
    interview(episode)
    first = sorted(Answer.objects.values_list("question__prompt", "goal__text", "value", "reasoning"))
    interview(episode, force=True)
    assert sorted(Answer.objects.values_list("question__prompt", "goal__text", "value", "reasoning")) == first


def test_a_stored_interview_is_kept_unless_forced():
    episode = group_episode()
    interview(episode)
    responses = set(Response.objects.values_list("pk", flat=True))
    again = interview(episode)
    assert (again.outcome, again.responses, again.cached) == (CACHED, 0, 6)
    assert set(Response.objects.values_list("pk", flat=True)) == responses
    forced = interview(episode, force=True)
    assert forced.responses == 6 and Response.objects.count() == 6
    assert not set(Response.objects.values_list("pk", flat=True)) & responses


def test_a_human_seat_is_not_interviewed():
    episode = group_episode()
    episode.seats.filter(position=1).update(player=Seat.Player.HUMAN, model="")
    interview(episode)
    assert sorted(Response.objects.values_list("seat_position", flat=True)) == [0, 0, 2, 2]


def test_an_episode_without_turns_is_not_interviewed():
    episode = make_episode(turns=0, seat_fields={"model": llm.SCRIPTED})
    result = interview(episode)
    assert result.outcome == FAILED and "has no turns to ask about" in result.error
    assert not Response.objects.exists()


def test_a_scenario_without_probes_is_asked_only_about_the_goals():
    episode = make_episode(turns=4, seat_fields={"model": llm.SCRIPTED})
    interview(episode)
    assert set(Response.objects.values_list("instrument__preset", flat=True)) == {GOALS_PRESET}
    assert Answer.objects.count() == 2 * 2  # two seats, each asked about both roles' goals


# --- the instruments ----------------------------------------------------------------------------------


def test_the_goals_preset_is_shared_frozen_and_asks_yes_or_no_per_goal():
    instrument = goals_instrument()
    assert instrument.team is None and instrument.frozen
    question = instrument.questions.get()
    assert (question.kind, question.scope) == (Question.Kind.YES_NO, Question.Scope.GOAL)
    assert [choice["value"] for choice in question.options["choices"]] == ["yes", "no"]
    assert Instrument.objects.filter(preset=GOALS_PRESET).count() == 1  # made by the migration, found again


def test_the_probes_instrument_is_built_once_and_versioned_when_the_probes_change():
    episode = group_episode()
    scenario = episode.scenario
    first = probes_instrument(scenario)
    assert first.frozen and first.team == scenario.team and first.scenario == scenario
    question = first.questions.get(position=1)
    assert question.kind == Question.Kind.MULTIPLE_CHOICE
    assert question.options["correct"] == "1"
    assert [c["label"] for c in question.options["choices"]][1] == "A smart thermostat he would set up"
    assert probes_instrument(scenario) == first

    interview(episode)
    scenario.probes.filter(position=0).update(text="How much of the bill was daytime heating?")
    second = probes_instrument(scenario)
    assert (second.version, second.name) == (2, first.name)
    assert Response.objects.filter(instrument=first).count() == 3  # answers keep the questions they answered


def test_who_may_be_asked_a_probe():
    episode = group_episode()
    probes = {probe.asked_of: probe for probe in Probe.objects.filter(scenario=episode.scenario)}
    others = probes["others"]
    assert not may_be_asked(others, others.about.position)
    assert may_be_asked(others, (others.about.position + 1) % 3)
    assert may_be_asked(probes["anyone"], probes["anyone"].about.position)
    others.asked_of = Probe.AskedOf.SELF
    assert may_be_asked(others, others.about.position) and not may_be_asked(others, others.about.position + 1)


# --- a language model, through the gateway --------------------------------------------------------


def test_a_model_is_asked_what_its_seat_knew_and_its_answers_are_stored(fake_llm):
    episode = group_episode(FAKE_MODEL)
    interviews = load_interviews(episode.pk)
    mei = interviews.seats[0]
    fake_llm.reply_when("was it achieved", json.dumps(
        {item.key: {"answer": "No", "reasoning": "Not quite."} for item in mei.goals}
    ))
    fake_llm.reply_when("choose the most likely option", json.dumps(
        {item.key: {"answer": "b.", "reasoning": "It came up."} for item in mei.probes}
    ))
    episode.seats.exclude(position=0).update(player=Seat.Player.HUMAN)

    result = interview(episode)

    assert result.outcome == INTERVIEWED and len(fake_llm.requests) == 2
    goals_prompt, probes_prompt = (request["messages"][1]["content"] for request in fake_llm.requests)
    assert "Pay no more than 200 euros of the heating bill." in goals_prompt  # her own goal
    assert "the goal of Callum Reid): Get the others to agree to a smart thermostat" in goals_prompt
    assert "What only you knew: The meter app shows" in goals_prompt
    assert "faulty and uses more than the others" not in goals_prompt.split("The conversation")[0]  # Ifeoma's secret
    assert "What had the landlord told Ifeoma about the radiator in her room?" in probes_prompt
    assert "  B. It is faulty and uses more than the others" in probes_prompt
    assert "By Mei's meter app" not in probes_prompt  # a probe about herself, asked of others only
    assert "correct" not in probes_prompt.lower()
    response = Response.objects.get(instrument__preset=GOALS_PRESET)
    assert response.respondent.model == FAKE_MODEL and response.respondent.prompt_version == "interview-1"
    assert response.prompt_tokens and response.latency_ms is not None
    assert set(response.answers.values_list("value", "reasoning")) == {("no", "Not quite.")}
    assert set(Answer.objects.filter(goal__isnull=True).values_list("value", flat=True)) == {"1"}  # B


def test_an_answer_out_of_range_is_repaired_once(fake_llm):
    episode = group_episode(FAKE_MODEL)
    episode.seats.exclude(position=0).update(player=Seat.Player.HUMAN)
    mei = load_interviews(episode.pk).seats[0]
    fake_llm.enqueue(text=json.dumps({item.key: {"answer": "maybe"} for item in mei.goals}))
    fake_llm.enqueue(text=json.dumps({item.key: {"answer": "yes", "reasoning": ""} for item in mei.goals}))
    fake_llm.reply_when("choose the most likely option", json.dumps(
        {item.key: {"answer": "A", "reasoning": "Guess."} for item in mei.probes}
    ))
    assert interview(episode).outcome == INTERVIEWED
    repair = fake_llm.requests[1]["messages"][-1]["content"]
    assert "'g1' answer 'maybe' is not one of 'yes', 'no'" in repair
    assert set(Answer.objects.filter(goal__isnull=False).values_list("value", flat=True)) == {"yes"}


def test_a_model_that_cannot_answer_fails_the_interview_with_the_reason(fake_llm, settings):
    settings.PARLEY_JUDGE_RETRIES = 1
    episode = group_episode(FAKE_MODEL)
    fake_llm.reply_when("was it achieved", "I would rather not say.")
    result = interview(episode)
    assert result.outcome == FAILED and "seat 1 (openai/fake-model)" in result.error
    assert "after 2 attempts" in result.error and len(fake_llm.requests) == 2 * 2  # each with its repair
    assert not Response.objects.exists()


def test_an_interview_whose_repair_fails_is_asked_again_as_the_judge_would_be(fake_llm, settings):
    settings.PARLEY_JUDGE_RETRIES = 1
    episode = group_episode(FAKE_MODEL)
    episode.seats.exclude(position=0).update(player=Seat.Player.HUMAN)
    mei = load_interviews(episode.pk).seats[0]
    for _ in range(2):  # the first request and its repair
        fake_llm.enqueue(text="I would rather not say.")
    fake_llm.enqueue(text=json.dumps({item.key: {"answer": "no", "reasoning": "Not yet."} for item in mei.goals}))
    fake_llm.reply_when("choose the most likely option", json.dumps(
        {item.key: {"answer": "A", "reasoning": "Guess."} for item in mei.probes}
    ))

    assert interview(episode).outcome == INTERVIEWED
    assert set(Answer.objects.filter(goal__isnull=False).values_list("value", flat=True)) == {"no"}


# --- where interviews are asked for and shown ----------------------------------------------------


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the run's tasks see commits only
def test_simulate_with_interview_asks_the_agents_after_the_run():
    install_scenario(GROUP_SCENARIOS[0], default_team())
    out = StringIO()
    call_command("simulate", "--scenarios", "heating-bill", "--conditions", "none", "--run-name", "asked",
                 "--interview", stdout=out)
    assert "Interviews: 1 episode(s) interviewed, 0 already interviewed, 0 failed." in out.getvalue()
    assert "Goal judges scripted: 1 judged, 0 already judged, 0 failed." in out.getvalue()
    episode = Episode.objects.get(tag="asked")
    assert episode.responses.filter(respondent__kind=Respondent.Kind.AGENT).count() == 6
    verdict = episode.responses.get(respondent__kind=Respondent.Kind.JUDGE, instrument__preset=GOALS_PRESET)
    assert verdict.seat_position is None
    assert verdict.answers.count() == sum(len(role.goals) for role in GROUP_SCENARIOS[0].roles)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the run's tasks see commits only
def test_a_run_without_a_judge_interviews_the_agents_but_judges_no_goal():
    install_scenario(GROUP_SCENARIOS[0], default_team())
    out = StringIO()
    call_command("simulate", "--scenarios", "heating-bill", "--conditions", "none", "--run-name", "unjudged",
                 "--interview", "--judge-model", "none", stdout=out)
    assert "Goal judges" not in out.getvalue()
    assert not Response.objects.filter(respondent__kind=Respondent.Kind.JUDGE).exists()
    assert Response.objects.filter(respondent__kind=Respondent.Kind.AGENT).count() == 6


@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the run's tasks see commits only
def test_simulate_without_interview_asks_nobody():
    install_scenario(GROUP_SCENARIOS[0], default_team())
    call_command("simulate", "--scenarios", "heating-bill", "--conditions", "none", "--run-name", "quiet",
                 stdout=StringIO())
    assert not Response.objects.filter(respondent__kind=Respondent.Kind.AGENT).exists()


def test_the_run_form_can_ask_for_interviews(client, monkeypatch, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    monkeypatch.setattr(control, "queue_run", lambda run: None)
    install_scenario(GROUP_SCENARIOS[0], default_team())
    client.force_login(make_researcher())
    form = {
        "tag": "web-asked", "difficulty": "", "scenarios": "heating-bill", "conditions": ["none"],
        "agent_model": "scripted", "partner_model": "scripted", "judge_model": "scripted", "strategy": "default",
        "episodes_per_cell": "1", "turn_cap": "6", "temperature": "0.7", "concurrency": "4",
        "seed": "0", "barrier_seats": "0, 2", "interview": "on",
    }
    response = client.post(reverse("benchmark:run-new"), form)
    assert response.status_code == 302
    options = SimulationRun.objects.get(tag="web-asked").options
    assert options["interview"] is True and options["barrier_seats"] == ["0", "2"]


def test_the_episode_page_shows_each_seats_interview_to_its_teams_researchers(client):
    episode = group_episode()
    interview(episode)
    groups = [group for group in answer_groups(episode) if group.kind == Respondent.Kind.AGENT]
    assert sorted((group.interviewed_seat, group.instrument.split(" (")[0].split(" v")[0]) for group in groups) == [
        (name, instrument) for name in ("Callum Reid", "Ifeoma Nwosu", "Mei Tanaka")
        for instrument in ("AgentSense goals", f"Probes of {episode.scenario.external_id}")
    ]
    mei = [group for group in groups if group.interviewed_seat == "Mei Tanaka"]
    goals = next(group.rows for group in mei if group.instrument.startswith("AgentSense"))
    probes = next(group.rows for group in mei if group.instrument.startswith("Probes"))
    assert "Mei Tanaka's goal: Pay no more than 200 euros of the heating bill." in [row.target for row in goals]
    assert {row.value for row in goals} <= {"Yes", "No"}
    assert all(row.value.endswith(("(correct)", "(wrong)")) for row in probes)

    client.force_login(make_researcher())
    page = client.get(reverse("benchmark:episode", args=[episode.pk])).content.decode()
    assert "speaking as Mei Tanaka" in page and "AgentSense goals" in page
    assert "Ifeoma Nwosu&#x27;s goal: Take over managing the flat&#x27;s bills from now on." in page
    assert "It is faulty and uses more than the others (correct)" in page
    assert scripted_answers.DISCLAIMER.replace("'", "&#x27;") in page

    client.force_login(make_researcher(team=make_team()))
    assert client.get(reverse("benchmark:episode", args=[episode.pk])).status_code == 404
    client.force_login(make_user())
    assert client.get(reverse("benchmark:episode", args=[episode.pk])).status_code == 403


# --- the blind test: the probes before any interaction -------------------------------------------------


def blind_test(episode: Episode, **options):
    return async_to_sync(blind.blind_test_episode)(episode.pk, **options)


def test_the_blind_test_asks_every_seat_its_probes_and_stores_them_as_blind_answers():
    episode = group_episode()
    result = blind_test(episode)

    assert (result.outcome, result.responses) == (INTERVIEWED, 3)
    respondent = Respondent.objects.get()
    assert (respondent.kind, respondent.model, respondent.prompt_version) == ("agent", "scripted", "scripted-blind-1")
    spec = GROUP_SCENARIOS[0]
    for seat in range(3):
        asked = {probe.text for probe in spec.probes if probe.asked_of == "anyone" or probe.about != seat}
        assert {text for text, _ in answers_of(episode, seat)["scenario-probes"]} == asked
    assert all(reason.startswith(scripted_answers.DISCLAIMER) for reason in Answer.objects.values_list("reasoning",
                                                                                                      flat=True))
    assert not Response.objects.filter(instrument__preset=GOALS_PRESET).exists()


def test_blind_scripted_answers_follow_what_the_seat_knew_not_the_stored_answer():
    episode = group_episode()
    scenario = episode.scenario
    Probe.objects.filter(scenario=scenario).delete()
    about_callum = scenario.roles.get(position=2)
    # Mei (seat 0) knows about the meter app; the correct option shares no word with what she can see
    scenario.roles.filter(position=0).update(private_knowledge="The meter app shows the radiator readings.")
    Probe.objects.create(scenario=scenario, about=about_callum, position=0, topic=Probe.Topic.PRIVATE_INFO,
                         text="What does Callum keep quiet?", options=["Nothing at all", "The radiator readings app"],
                         correct=0, asked_of=Probe.AskedOf.ANYONE)
    blind_test(episode)
    mei = Answer.objects.get(response__seat_position=0)
    assert mei.value == "1" and "shares" in mei.reasoning  # the wrong option, by word overlap


def test_a_stored_blind_test_is_kept_unless_forced_and_is_apart_from_the_interview():
    episode = group_episode()
    interview(episode)
    blind_test(episode)
    responses = set(Response.objects.values_list("pk", flat=True))
    assert len(responses) == 6 + 3
    again = blind_test(episode)
    assert (again.outcome, again.cached) == (CACHED, 3)
    forced = blind_test(episode, force=True)
    assert forced.responses == 3 and Response.objects.count() == 9
    assert len(set(Response.objects.values_list("pk", flat=True)) & responses) == 6  # the interview is untouched


def test_a_scenario_without_probes_has_no_blind_test():
    episode = make_episode(turns=2, seat_fields={"model": llm.SCRIPTED})
    result = blind_test(episode)
    assert result.outcome == FAILED and "has no probes to ask" in result.error


def test_a_model_takes_the_blind_test_without_the_transcript(fake_llm):
    episode = group_episode(FAKE_MODEL)
    episode.seats.exclude(position=0).update(player=Seat.Player.HUMAN)
    mei = load_interviews(episode.pk).seats[0]
    fake_llm.reply_when("choose the most likely option", json.dumps(
        {item.key: {"answer": "A", "reasoning": "A hunch."} for item in mei.probes}
    ))

    assert blind_test(episode).outcome == INTERVIEWED
    [request] = fake_llm.requests
    system, prompt = (message["content"] for message in request["messages"])
    assert "Before it begins" in system
    assert "The conversation has not begun" in prompt and "What only you know: The meter app shows" in prompt
    said = [turn.content for turn in episode.turns.exclude(content="")]
    assert said and not any(line in prompt for line in said)
    assert "What had the landlord told Ifeoma about the radiator in her room?" in prompt
    response = Response.objects.get()
    assert (response.respondent.prompt_version, response.seat_position) == ("blind-1", 0)
    assert set(response.answers.values_list("value", flat=True)) == {"0"}
