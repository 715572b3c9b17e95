"""The minimum of participant turns: leaving or going quiet before it screens out (screen-out code,
no questions, the design cell freed); every other end, and any end after it, earns the completion code."""

from datetime import timedelta
from uuid import uuid4

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from benchmark.models import ActionType, Episode, Seat, Turn, TurnTaking
from chat import state_machine
from chat.forms import ChatStudyForm
from chat.lifecycle import end_episode
from chat.models import ChatStudy, Participant
from chat.turns import submit_human_turn
from tests.builders import make_scenario
from tests.chat.builders import chat_until, join, make_chat_study

STAGE = Participant.Stage
ANSWERS = {"goal": "4", "unresolved_confusion": "2", "mutual_understanding": "5"}


def url(name, study):
    return reverse(f"chat:{name}", args=[study.slug])


def one_cell_study(**fields):
    fields.setdefault("completion_code", "C0DE-42")
    fields.setdefault("screen_out_code", "SCREEN-7")
    fields.setdefault("return_url", "https://example.org/done?cc={code}")
    fields.setdefault("scenarios", 1)
    return make_chat_study(conditions=["none"], target=1, **fields)


def chatting(client, study, participant_id="quick", *, turns=0):
    participant = join(client, study, participant_id, stage=STAGE.CHAT)
    chat_until(participant, turns)
    return participant


def leave(participant):
    """The participant leaves, as the socket stores it and moves on."""
    submit_human_turn(participant.pk, client_id=uuid4().hex, action_type="leave", content="")
    state_machine.next_step(participant.pk)
    participant.refresh_from_db()


# Leaving


@pytest.mark.django_db
def test_leaving_before_the_minimum_shows_the_screen_out_code_not_the_completion_code(client):
    study = one_cell_study()
    participant = chatting(client, study, turns=2)

    leave(participant)
    response = client.get(url("entry", study), follow=True)

    assert response.redirect_chain[-1][0] == url("screened-out", study)
    assert "SCREEN-7" in response.text and "C0DE-42" not in response.text
    assert 'href="https://example.org/done?cc=SCREEN-7"' in response.text
    assert "at least 3 messages" in response.text
    for page in ("questionnaire", "done"):
        assert client.get(url(page, study)).url == url("screened-out", study)
    assert participant.stage == STAGE.SCREENED_OUT and participant.finished_at is not None
    assert participant.episode.status == Episode.Status.ABANDONED
    assert participant.episode.end_reason == Episode.EndReason.LEAVE


@pytest.mark.django_db
def test_leaving_after_the_minimum_goes_on_to_the_questions_and_the_completion_code(client):
    study = one_cell_study()
    participant = chatting(client, study, turns=3)

    leave(participant)
    client.post(url("questionnaire", study), ANSWERS)
    page = client.get(url("done", study)).text

    assert participant.stage == STAGE.QUESTIONNAIRE
    assert participant.episode.status == Episode.Status.FINISHED
    assert "C0DE-42" in page and "SCREEN-7" not in page


@pytest.mark.django_db
def test_without_a_minimum_leaving_at_once_still_earns_the_completion_code(client):
    study = one_cell_study(min_participant_turns=0)
    participant = chatting(client, study)

    leave(participant)

    assert participant.stage == STAGE.QUESTIONNAIRE


@pytest.mark.django_db
def test_the_agent_leaving_before_the_minimum_is_not_the_participants_doing(client):
    study = one_cell_study()
    participant = chatting(client, study, turns=1)
    agent = participant.episode.seats.get(player=Seat.Player.AGENT)
    human = participant.episode.seats.get(player=Seat.Player.HUMAN)
    index = participant.episode.turns.count()
    Turn.objects.create(episode=participant.episode, index=index, seat=human, content="Hm.")
    Turn.objects.create(episode=participant.episode, index=index + 1, seat=agent, action_type=ActionType.LEAVE)

    state_machine.next_step(participant.pk)

    participant.refresh_from_db()
    assert participant.stage == STAGE.QUESTIONNAIRE


@pytest.mark.django_db
def test_a_model_failure_before_the_minimum_gives_the_technical_problem_code_not_the_completion_code(client):
    study = one_cell_study()
    participant = chatting(client, study)

    end_episode(participant, Episode.EndReason.MODEL_ERROR, status=Episode.Status.FAILED)

    assert participant.stage == STAGE.TECHNICAL_PROBLEM


# Going quiet


def gone_quiet(participant):
    Participant.objects.filter(pk=participant.pk).update(
        last_seen_at=timezone.now() - timedelta(seconds=participant.study.inactivity_timeout + 5)
    )


@pytest.mark.django_db
def test_going_quiet_before_the_minimum_screens_out(client):
    study = one_cell_study()
    participant = chatting(client, study, turns=1)
    gone_quiet(participant)

    response = client.get(url("chat", study), follow=True)

    assert response.redirect_chain[-1][0] == url("screened-out", study)
    assert "long pause" in response.text and "SCREEN-7" in response.text
    participant.refresh_from_db()
    assert (participant.stage, participant.episode.end_reason) == (STAGE.SCREENED_OUT, Episode.EndReason.TIMEOUT)


@pytest.mark.django_db
def test_going_quiet_after_the_minimum_goes_on_to_the_questions(client):
    study = one_cell_study()
    participant = chatting(client, study, turns=3)
    gone_quiet(participant)

    response = client.get(url("chat", study))

    assert response.url == url("questionnaire", study)


# The design cell


@pytest.mark.django_db
def test_a_screened_out_participant_gives_their_cell_back(client):
    study = one_cell_study()
    leave(chatting(client, study, "farmer", turns=0))
    newcomer = Client()

    join(newcomer, study, "newcomer", stage=STAGE.BRIEFING)

    assert Participant.objects.get(participant_id="newcomer").stage == STAGE.BRIEFING
    assert newcomer.get(url("briefing", study)).status_code == 200


@pytest.mark.django_db
def test_a_participant_who_reached_the_minimum_keeps_their_place(client):
    study = one_cell_study()
    leave(chatting(client, study, "keeper", turns=3))
    newcomer = Client()

    join(newcomer, study, "newcomer", stage=STAGE.BRIEFING)

    assert Participant.objects.get(participant_id="newcomer").stage == STAGE.CONSENT
    assert "All places in this study are taken" in newcomer.post(url("consent", study), {"decision": "agree"}).text


# What researchers see


@pytest.mark.django_db
def test_the_monitor_and_the_csv_show_who_got_which_code(client):
    study = one_cell_study()
    study.conditions.update(target=2)
    leave(chatting(client, study, "screened", turns=1))
    completer = Client()
    leave(chatting(completer, study, "completer", turns=3))
    completer.post(url("questionnaire", study), ANSWERS)
    staff = Client()
    staff.force_login(study.created_by)

    monitor = staff.get(reverse("chat:monitor", args=[study.slug])).text
    rows = staff.get(reverse("chat:export", args=[study.slug])).content.decode().splitlines()

    assert "screen-out code" in monitor and "completion code" in monitor
    assert "SCREEN-7" in monitor
    header = rows[0].split(",")
    outcomes = {row.split(",")[0]: row.split(",")[header.index("outcome")] for row in rows[1:]}
    assert outcomes == {"screened": "screened_out", "completer": "completed"}


# The study's settings


@pytest.mark.django_db
def test_a_new_study_gets_a_screen_out_code_of_its_own():
    first, second = make_chat_study(), make_chat_study()

    assert first.screen_out_code and first.screen_out_code != first.completion_code
    assert first.screen_out_code != second.screen_out_code


@pytest.mark.django_db
def test_the_study_form_offers_the_minimum_and_the_screen_out_code_with_help(client):
    study = one_cell_study()
    client.force_login(study.created_by)

    form = client.get(reverse("chat:study-edit", args=[study.slug])).context["form"]

    assert form["min_participant_turns"].value() == 3
    assert "screen-out code" in form.fields["min_participant_turns"].help_text
    assert "Prolific" in form.fields["screen_out_code"].help_text


def edit_study(client, study, **changes):
    client.force_login(study.created_by)
    data = {
        "title": study.title, "slug": study.slug, "scenarios": [s.pk for s in study.scenarios.all()],
        "human_position": "1", "agent_model": "scripted", "partner_strategy": "default", "turn_cap": "20",
        "inactivity_timeout": "600", "max_message_chars": "1000", "messages_per_minute": "12",
        "min_participant_turns": "3", "consent_text": "Please agree.", "instrument": str(study.instrument_id or ""),
        "completion_code": study.completion_code, "screen_out_code": study.screen_out_code,
        "technical_problem_code": study.technical_problem_code, "return_url": "", "is_open": "on", "target_none": "1",
    }
    data.update(changes)
    return client.post(reverse("chat:study-edit", args=[study.slug]), data)


@pytest.mark.django_db
def test_a_minimum_the_turn_cap_never_allows_is_refused(client):
    study = one_cell_study()

    response = edit_study(client, study, turn_cap="6", min_participant_turns="4")

    assert response.status_code == 200
    assert "With a turn cap of 6 the participant has at most 3 turns" in response.text
    assert ChatStudy.objects.get(pk=study.pk).min_participant_turns == 3


@pytest.mark.django_db
def test_the_minimum_follows_a_group_scenarios_round_robin_order(client):
    """Three seats taking turns: the participant in the second seat has 3 of 9 turns, not the 4 or 5 of two."""
    study = one_cell_study(scenarios=[make_scenario(roles=3, turn_taking=TurnTaking.ROUND_ROBIN)])

    refused = edit_study(client, study, turn_cap="9", min_participant_turns="4")
    accepted = edit_study(client, study, turn_cap="9", min_participant_turns="3")

    assert "With a turn cap of 9 the participant has at most 3 turns in scenario" in refused.text
    assert "min_participant_turns" not in accepted.context["form"].errors


@pytest.mark.django_db
def test_the_minimum_under_random_order_is_checked_against_the_expected_count(client):
    """After Ana's greeting each of 11 turns goes to one of the two who did not just speak: the second seat
    can expect 0 + 1/2 + 1/4 + 3/8 + ... = about 3.8 turns of 12, which the help text says is what is used."""
    scenario = make_scenario(roles=3, turn_taking=TurnTaking.RANDOM_AFTER_GREETING, greeter_position=0)
    study = one_cell_study(scenarios=[scenario])

    refused = edit_study(client, study, turn_cap="12", min_participant_turns="4")
    accepted = edit_study(client, study, turn_cap="12", min_participant_turns="3")

    assert "the participant can expect 3.8 turns in scenario" in refused.text
    assert "min_participant_turns" not in accepted.context["form"].errors
    assert "random order after a greeting, the number they can expect" in ChatStudyForm(
        user=study.created_by
    ).fields["min_participant_turns"].help_text


@pytest.mark.django_db
def test_the_screen_out_code_must_differ_from_the_completion_code(client):
    study = one_cell_study()

    response = edit_study(client, study, screen_out_code="C0DE-42")

    assert "The screen-out code must differ from the completion code." in response.text


@pytest.mark.django_db
def test_the_briefing_tells_the_participant_about_the_minimum(client):
    study = one_cell_study()
    join(client, study, "reader", stage=STAGE.BRIEFING)

    page = client.get(url("briefing", study)).text

    assert "Send at least 3 messages" in page
    assert "screen-out code instead of the completion code" in page


# Over the socket


async def test_leaving_early_tells_the_page_it_is_screened_out(chat_factory, sockets, reload):
    chat = await chat_factory(human_position=0)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    await page.act("Hello.")
    await page.receive_until("turn", index=1)
    await page.act("", action_type="leave")
    ended = await page.receive_until("ended")

    assert ended["outcome"] == "screened_out"
    assert "You left before the conversation was long enough for the study" in ended["message"]
    assert (await reload(chat.participant)).stage == STAGE.SCREENED_OUT
    again = sockets(chat)
    assert await again.connect()
    assert (await again.receive_until("history"))["ended"]["outcome"] == "screened_out"


async def test_going_quiet_with_the_page_open_screens_out(chat_factory, sockets, reload):
    chat = await chat_factory(human_position=0, inactivity_timeout=1)
    page = sockets(chat)
    await page.connect()
    await page.receive_until("history")

    ended = await page.receive_until("ended")

    assert (ended["reason"], ended["outcome"]) == ("timeout", "screened_out")
    assert (await reload(chat.episode)).status == Episode.Status.ABANDONED
