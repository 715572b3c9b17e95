"""The participant's pages: study link, consent, briefing, chat, questionnaire, completion — and who reaches what."""

import re
from datetime import timedelta
from functools import partial

import pytest
from django.conf import settings
from django.template import TemplateDoesNotExist
from django.template.loader import get_template
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from benchmark.models import Episode, Relationship, Response, Seat
from chat.access import SESSION_KEY
from chat.models import ChatStudy, Participant
from tests.builders import make_character, make_scenario, make_user
from tests.chat.builders import (
    answers_of,
    chat_until,
    entry_url,
    join,
    make_chat_study,
    make_participant,
    sign_in,
)
from tests.concurrency import at_once

pytestmark = pytest.mark.django_db

STAGE = Participant.Stage
PAGES = ["consent", "briefing", "chat", "questionnaire", "done", "screened-out", "declined"]
PAGE_OF_STAGE = {
    STAGE.CONSENT: "consent", STAGE.BRIEFING: "briefing", STAGE.CHAT: "chat",
    STAGE.QUESTIONNAIRE: "questionnaire", STAGE.DONE: "done", STAGE.SCREENED_OUT: "screened-out",
    STAGE.DECLINED: "declined",
}


@pytest.fixture(autouse=True)
def chat_template(settings, tmp_path):
    """chat/chat.html belongs to the socket work; where it is missing, a stand-in renders the context."""
    try:
        get_template("chat/chat.html")
    except TemplateDoesNotExist:
        (tmp_path / "chat").mkdir()
        (tmp_path / "chat" / "chat.html").write_text("stand-in chat page {{ ws_path }}")
        engine = settings.TEMPLATES[0]
        settings.TEMPLATES = [{**engine, "DIRS": [*engine["DIRS"], tmp_path]}, *settings.TEMPLATES[1:]]


@pytest.fixture
def study():
    return make_chat_study(slug="pilot", completion_code="C0DE-42", return_url="https://example.org/done?cc={code}")


def url(name, study):
    return reverse(f"chat:{name}", args=[study.slug])


# The study link


def test_a_prolific_link_creates_the_participant_at_consent_with_the_platform_ids(client, study):
    response = client.get(entry_url(study, "5f0a1b", STUDY_ID="st-1", SESSION_ID="se-1"))

    assert response.status_code == 302
    assert response.url == url("consent", study)
    participant = Participant.objects.get(study=study)
    assert (participant.participant_id, participant.prolific_pid) == ("5f0a1b", "5f0a1b")
    assert (participant.prolific_study_id, participant.prolific_session_id) == ("st-1", "se-1")
    assert participant.stage == STAGE.CONSENT
    assert client.session[SESSION_KEY] == {str(study.pk): participant.pk}


@pytest.mark.parametrize("parameter", ["participant_id", "PARTICIPANT_ID"])
def test_a_generic_participant_id_is_accepted(client, study, parameter):
    response = client.get(f"{url('entry', study)}?{parameter}=lab-007")

    assert response.url == url("consent", study)
    participant = Participant.objects.get(study=study)
    assert (participant.participant_id, participant.prolific_pid) == ("lab-007", "")


def test_a_link_without_any_id_asks_for_one_and_creates_no_one(client, study):
    response = client.get(url("entry", study))

    assert response.status_code == 200
    assert 'name="participant_id"' in response.text
    assert "participant id" in response.text
    assert not Participant.objects.exists()


def test_an_unusable_id_is_refused_with_a_message_saying_why(client, study):
    response = client.get(entry_url(study, "has spaces<script>"))

    assert response.status_code == 400
    assert "cannot be used" in response.text
    assert "<script>" not in response.text
    assert not Participant.objects.exists()


def test_an_unknown_study_link_is_not_found(client):
    assert client.get(reverse("chat:entry", args=["no-such-study"])).status_code == 404


def test_a_closed_study_turns_new_participants_away_kindly(client, study):
    study.is_open = False
    study.save()

    response = client.get(entry_url(study, "newcomer"))

    assert response.status_code == 200
    assert "not taking new participants" in response.text
    assert not Participant.objects.exists()


def test_a_closed_study_lets_people_who_started_finish(client, study):
    participant = make_participant(study, participant_id="early", stage=STAGE.BRIEFING)
    study.is_open = False
    study.save()

    response = client.get(entry_url(study, "early"))

    assert response.url == url("briefing", study)
    assert client.get(response.url).status_code == 200
    participant.refresh_from_db()
    assert participant.stage == STAGE.BRIEFING


def test_a_returning_participant_resumes_at_their_stage_in_the_same_browser(client, study):
    join(client, study, "returner", stage=STAGE.CHAT)

    response = client.get(entry_url(study, "returner"))

    assert response.url == url("chat", study)


def test_the_session_remembers_the_participant_when_the_link_loses_its_id(client, study):
    join(client, study, "remembered", stage=STAGE.BRIEFING)

    response = client.get(url("entry", study))

    assert response.url == url("briefing", study)


def test_the_same_id_cannot_start_a_second_episode(client, study):
    first = join(client, study, "twice", stage=STAGE.BRIEFING)
    Participant.objects.filter(pk=first.pk).update(stage=STAGE.CONSENT)  # as if "I agree" were pressed again

    client.post(url("consent", study), {"decision": "agree"})

    assert Participant.objects.filter(study=study).count() == 1
    assert Episode.objects.count() == 1
    assert Participant.objects.get().episode_id == first.episode_id


# Consent


def test_the_consent_text_is_shown_escaped_with_its_line_breaks(client, study):
    study.consent_text = "First paragraph <b>bold?</b>\n\nSecond paragraph"
    study.save()
    join(client, study, "reader", stage=STAGE.CONSENT)

    page = client.get(url("consent", study)).text

    assert "First paragraph &lt;b&gt;bold?&lt;/b&gt;</p>" in page
    assert "<p>Second paragraph</p>" in page


def test_agreeing_assigns_a_cell_and_an_episode_and_opens_the_briefing(client, study):
    join(client, study, "agreeable", stage=STAGE.CONSENT)

    response = client.post(url("consent", study), {"decision": "agree"})

    assert response.url == url("briefing", study)
    participant = Participant.objects.get()
    assert participant.stage == STAGE.BRIEFING
    assert participant.consented_at is not None
    assert participant.episode.source == Episode.Source.HUMAN_CHAT
    assert participant.episode.tag == "chat:pilot"
    assert (participant.scenario_id, participant.barrier_id) == (
        participant.episode.scenario_id, participant.episode.barrier_id
    )


def test_declining_records_it_and_thanks_the_participant(client, study):
    join(client, study, "decliner", stage=STAGE.CONSENT)

    response = client.post(url("consent", study), {"decision": "decline"})

    assert response.url == url("declined", study)
    assert "chose not to take part" in client.get(response.url).text
    participant = Participant.objects.get()
    assert participant.stage == STAGE.DECLINED
    assert participant.episode is None


def test_someone_who_declined_cannot_agree_afterwards(client, study):
    join(client, study, "decliner", stage=STAGE.CONSENT)
    client.post(url("consent", study), {"decision": "decline"})

    response = client.post(url("consent", study), {"decision": "agree"})

    assert response.url == url("declined", study)
    assert not Episode.objects.exists()


def test_consent_without_a_decision_asks_again(client, study):
    join(client, study, "undecided", stage=STAGE.CONSENT)

    response = client.post(url("consent", study), {})

    assert response.status_code == 200
    assert "Please choose whether you agree" in response.text
    assert Participant.objects.get().stage == STAGE.CONSENT


def test_a_full_study_says_so_and_starts_no_episode(client):
    study = make_chat_study(scenarios=1, conditions=["none"], target=1)
    make_participant(study, stage=STAGE.DONE)
    join(client, study, "late", stage=STAGE.CONSENT)

    response = client.post(url("consent", study), {"decision": "agree"})

    assert response.status_code == 200
    assert "All places in this study are taken" in response.text
    assert Episode.objects.count() == 1
    assert Participant.objects.get(participant_id="late").stage == STAGE.CONSENT


def test_a_study_closed_while_someone_reads_the_consent_starts_no_episode(client, study):
    join(client, study, "reader", stage=STAGE.CONSENT)
    ChatStudy.objects.filter(pk=study.pk).update(is_open=False)

    response = client.post(url("consent", study), {"decision": "agree"})

    assert "not taking new participants" in response.text
    assert not Episode.objects.exists()


# Briefing


def briefing_study(relationship, **fields):
    me = make_character(first_name="Mira", last_name="Okafor", occupation="baker", secret="Mira hides a debt.")
    them = make_character(
        first_name="Tomas", last_name="Lind", occupation="pilot", age=51, public_info="Flies cargo routes.",
        secret="Tomas is moving away.",
    )
    scenario = make_scenario(
        relationship=relationship,
        context="Two people meet at a bus stop in the rain.",
        roles=[
            {"character": them, "goal": "Borrow an umbrella.", "reason": "Has an interview.",
             "private_knowledge": "The bus is cancelled."},
            {"character": me, "goal": "Keep your umbrella.", "reason": "It was a gift.",
             "private_knowledge": "There is a shop nearby."},
        ],
    )
    return make_chat_study(scenarios=[scenario], conditions=["semantic"], human_position=1, **fields)


def test_the_briefing_shows_the_situation_and_the_participants_own_side(client):
    study = briefing_study(Relationship.FRIEND)
    join(client, study, "briefed")

    page = client.get(url("briefing", study)).text

    for text in ["Two people meet at a bus stop", "You are Mira Okafor", "baker", "Mira hides a debt.",
                 "Keep your umbrella.", "It was a gift.", "There is a shop nearby."]:
        assert text in page
    for hidden in ["Borrow an umbrella.", "Has an interview.", "The bus is cancelled.", "Tomas is moving away."]:
        assert hidden not in page


def test_the_briefing_gives_the_characters_secret_to_the_participant_as_theirs(client):
    study = briefing_study(Relationship.FRIEND)
    join(client, study, "secret-keeper")

    page = client.get(url("briefing", study)).text

    assert "Your character’s secret (only you know it)" in page
    assert ">Your secret<" not in page


def test_friends_see_the_partners_profile_but_not_their_secret(client):
    study = briefing_study(Relationship.FRIEND)
    join(client, study, "friend")

    page = client.get(url("briefing", study)).text

    assert "Tomas Lind" in page and "pilot" in page and "Flies cargo routes." in page
    assert "Tomas is moving away." not in page


def test_strangers_learn_nothing_about_the_partner(client):
    study = briefing_study(Relationship.STRANGER)
    join(client, study, "stranger")

    page = client.get(url("briefing", study)).text

    assert "Tomas" not in page and "pilot" not in page and "Flies cargo" not in page
    assert "never met the other person" in page


def test_acquaintances_see_only_the_partners_public_face(client):
    study = briefing_study(Relationship.ACQUAINTANCE)
    join(client, study, "acquaintance")

    page = client.get(url("briefing", study)).text

    assert "Tomas Lind" in page and "pilot" in page and "Flies cargo routes." in page
    # the age is not shown (the page's random CSRF token may contain the digits, so look for the field)
    assert "Age" not in page and not re.search(r"\b51\b", page)


def test_the_briefing_never_names_the_condition_or_the_model(client):
    study = briefing_study(Relationship.FRIEND, agent_model="openai/secret-model")
    join(client, study, "blind")
    barrier = Participant.objects.get().barrier

    page = client.get(url("briefing", study)).text.lower()

    for hidden in [barrier.key, barrier.name.lower(), "secret-model", "barrier", "condition"]:
        assert hidden not in page


def test_the_repair_advice_appears_only_with_the_repair_strategy(client):
    plain, repair = briefing_study(Relationship.FRIEND), briefing_study(Relationship.FRIEND, partner_strategy="repair")
    join(client, plain, "plain")
    join(client, repair, "repair")

    assert "A tip for this conversation" not in client.get(url("briefing", plain)).text
    assert "A tip for this conversation" in client.get(url("briefing", repair)).text


def test_the_briefing_explains_the_turn_cap_and_who_speaks_first(client):
    study = briefing_study(Relationship.FRIEND, turn_cap=12)
    join(client, study, "rules")

    page = client.get(url("briefing", study)).text

    assert "after 12 turns in all" in page
    assert "(about 6 of yours)" in page
    assert "Tomas Lind speaks first" in page


def test_starting_the_conversation_opens_the_chat_and_starts_the_episode(client, study):
    join(client, study, "starter")

    response = client.post(url("briefing", study))

    assert response.url == url("chat", study)
    participant = Participant.objects.get()
    assert participant.stage == STAGE.CHAT
    assert participant.episode.status == Episode.Status.RUNNING
    assert participant.episode.started_at is not None


# The chat page


def test_the_chat_page_gets_what_the_chat_template_needs(client, study):
    participant = join(client, study, "chatter", stage=STAGE.CHAT)

    response = client.get(url("chat", study))

    assert response.status_code == 200
    context = response.context
    assert context["participant"] == participant
    assert context["episode"] == participant.episode
    assert context["human_seat"].player == Seat.Player.HUMAN
    assert context["agent_seat"].carries_barrier
    assert context["agent_seat"].character.name
    assert context["ws_path"] == "/ws/chat/pilot/"
    assert context["max_message_chars"] == study.max_message_chars
    assert context["questionnaire_url"] == url("questionnaire", study)
    assert context["briefing"]["goal"] == context["human_seat"].role.goal_text


def test_opening_the_chat_page_counts_as_being_seen(client, study):
    participant = join(client, study, "seen", stage=STAGE.CHAT)
    earlier = timezone.now() - timedelta(seconds=60)
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=earlier)

    client.get(url("chat", study))

    participant.refresh_from_db()
    assert participant.last_seen_at > earlier


def test_a_chat_idle_past_the_timeout_ends_and_goes_on_to_the_questions(client, study):
    participant = join(client, study, "sleepy", stage=STAGE.CHAT)
    chat_until(participant, study.min_participant_turns)  # long enough to count: see test_screen_out.py
    Participant.objects.filter(pk=participant.pk).update(
        last_seen_at=timezone.now() - timedelta(seconds=study.inactivity_timeout + 5)
    )

    response = client.get(url("chat", study))

    assert response.url == url("questionnaire", study)
    participant.refresh_from_db()
    assert participant.stage == STAGE.QUESTIONNAIRE
    assert participant.episode.end_reason == Episode.EndReason.TIMEOUT
    assert "long pause" in client.get(response.url).text


# Every page sends people to their own stage


@pytest.mark.parametrize("stage", list(PAGE_OF_STAGE))
@pytest.mark.parametrize("page", PAGES)
def test_every_page_sends_the_participant_to_the_page_of_their_stage(client, study, stage, page):
    sign_in(client, make_participant(study, participant_id="walker", stage=stage))

    response = client.get(url(page, study))

    if page == PAGE_OF_STAGE[stage]:
        assert response.status_code == 200
    else:
        assert response.status_code == 302
        assert response.url == url(PAGE_OF_STAGE[stage], study)


def test_a_chatting_participant_asking_for_the_questions_goes_back_to_the_chat(client, study):
    join(client, study, "eager", stage=STAGE.CHAT)

    response = client.get(url("questionnaire", study))

    assert response.url == url("chat", study)


def test_the_questions_open_once_the_episode_has_ended(client, study):
    participant = join(client, study, "finisher", stage=STAGE.CHAT)
    Episode.objects.filter(pk=participant.episode_id).update(
        status=Episode.Status.FINISHED, end_reason=Episode.EndReason.LEAVE, finished_at=timezone.now()
    )

    response = client.get(url("questionnaire", study))

    assert response.status_code == 200
    assert Participant.objects.get().stage == STAGE.QUESTIONNAIRE


@pytest.mark.parametrize("page", PAGES)
def test_a_visitor_without_a_participant_is_sent_to_the_study_link(client, study, page):
    make_participant(study, participant_id="someone-else", stage=STAGE.CHAT)

    response = client.get(url(page, study))

    assert response.url == url("entry", study)


@pytest.mark.parametrize("page", PAGES)
def test_a_researcher_is_no_participant_either(client, study, page):
    client.force_login(study.created_by)

    assert client.get(url(page, study)).url == url("entry", study)


def test_participant_b_sees_only_their_own_conversation(study):
    alice, bob = Client(), Client()
    join(alice, study, "alice", stage=STAGE.CHAT)
    join(bob, study, "bob", stage=STAGE.CHAT)
    alice_participant = Participant.objects.get(participant_id="alice")

    response = bob.get(url("chat", study))

    assert response.context["participant"].participant_id == "bob"
    assert response.context["episode"].pk != alice_participant.episode_id
    assert "alice" not in response.text


def test_a_session_for_one_study_is_nothing_in_another(client, study):
    other = make_chat_study()
    join(client, study, "only-here", stage=STAGE.CHAT)

    assert client.get(url("chat", other)).url == url("entry", other)


# Questionnaire


def at_questionnaire(client, study, participant_id="answerer"):
    participant = make_participant(study, participant_id=participant_id, stage=STAGE.QUESTIONNAIRE)
    sign_in(client, participant)
    return participant


def test_the_questionnaire_shows_likert_scales_with_their_end_labels(client, study):
    at_questionnaire(client, study)

    page = client.get(url("questionnaire", study)).text

    assert "How well did you reach your character&#x27;s goal?" in page
    assert page.count('type="radio"') == 15
    assert "1 – not at all" in page and "3 – partly" in page and "5 – completely" in page
    assert "<textarea" in page
    assert "Anything you want to tell us about the conversation? (optional)" in page
    assert '<span class="muted">(optional)</span>' not in page  # the label already says so


def test_missing_required_answers_are_named_by_question(client, study):
    participant = at_questionnaire(client, study)

    response = client.post(url("questionnaire", study), {"goal": "4"})

    assert response.status_code == 200
    assert "Please answer question 2" in response.text
    assert "Please answer question 3" in response.text
    assert "Please answer question 1" not in response.text
    participant.refresh_from_db()
    assert participant.stage == STAGE.QUESTIONNAIRE
    assert participant.response is None


def test_an_answer_off_the_scale_is_refused(client, study):
    at_questionnaire(client, study)

    response = client.post(
        url("questionnaire", study), {"goal": "9", "unresolved_confusion": "3", "mutual_understanding": "3"}
    )

    assert "Question 1: choose a value from 1 to 5." in response.text


def test_submitting_stores_the_answers_and_finishes(client, study):
    participant = at_questionnaire(client, study)

    response = client.post(
        url("questionnaire", study),
        {"goal": "4", "unresolved_confusion": "2", "mutual_understanding": "5", "comment": "It was odd."},
    )

    assert response.url == url("done", study)
    participant.refresh_from_db()
    assert participant.stage == STAGE.DONE
    assert participant.finished_at is not None
    assert answers_of(participant) == {
        "goal": "4", "unresolved_confusion": "2", "mutual_understanding": "5", "comment": "It was odd."
    }
    response = participant.response
    assert (response.respondent.kind, response.respondent.label, response.respondent.user) == (
        "participant", "answerer", None)
    assert (response.episode, response.status, response.instrument) == (participant.episode, "submitted",
                                                                        study.instrument)
    assert sorted(response.answers.values_list("question__key", "number")) == [
        ("comment", None), ("goal", 4.0), ("mutual_understanding", 5.0), ("unresolved_confusion", 2.0)]
    study.instrument.refresh_from_db()
    assert study.instrument.frozen


def test_a_second_submission_changes_nothing(client, study):
    participant = at_questionnaire(client, study)
    answers = {"goal": "4", "unresolved_confusion": "2", "mutual_understanding": "5"}
    client.post(url("questionnaire", study), answers)

    response = client.post(url("questionnaire", study), {**answers, "goal": "1"})

    assert response.url == url("done", study)
    assert answers_of(participant)["goal"] == "4"
    assert Response.objects.filter(respondent__kind="participant").count() == 1


@pytest.mark.concurrency
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_submissions_at_once_store_one_answer_set():
    """Double clicks and open tabs post the form at the same moment (four tabs for each of six
    participants): every post ends on the completion page, and each participant keeps one post's answers, whole."""
    study = make_chat_study(slug="double-click", target=3)
    browsers = [Client() for _ in range(6)]
    participants = [at_questionnaire(browser, study, participant_id=f"p{n}") for n, browser in enumerate(browsers)]
    posts = []
    for browser in browsers:
        for tab in range(1, 5):
            page = Client()  # another tab of the same browser: the same session cookie
            page.cookies[settings.SESSION_COOKIE_NAME] = browser.cookies[settings.SESSION_COOKIE_NAME].value
            answers = {"goal": str(tab), "unresolved_confusion": str(tab), "mutual_understanding": "3"}
            posts.append(partial(page.post, url("questionnaire", study), answers))

    responses = at_once(*posts)

    assert [getattr(response, "url", response) for response in responses] == [url("done", study)] * len(posts)
    for participant in participants:
        participant.refresh_from_db()
        assert participant.stage == STAGE.DONE
        answers = answers_of(participant)
        assert answers["goal"] == answers["unresolved_confusion"]  # one post's, whole


def test_a_custom_choice_question_is_asked_and_stored(client):
    study = make_chat_study(questions=[
        {"key": "side", "kind": "categorical", "prompt": "Who gave in?", "options": {"choices": [
            {"value": value, "label": value.capitalize()} for value in ("me", "them", "nobody")]}},
    ])
    participant = at_questionnaire(client, study)
    assert "Who gave in?" in client.get(url("questionnaire", study)).text

    client.post(url("questionnaire", study), {"side": "nobody"})

    assert answers_of(participant) == {"side": "nobody"}


OTHER_KINDS = [
    {"key": "agreed", "kind": "yes_no", "prompt": "Did you agree?"},
    {"key": "calm", "kind": "slider", "prompt": "How calm were you?",
     "options": {"min": 0, "max": 10, "step": 2, "labels": {"min": "tense", "max": "calm"}}},
    {"key": "minutes", "kind": "slider", "prompt": "Minutes it felt like?",
     "options": {"min": 0, "max": 60, "step": 1}},
    {"key": "topics", "kind": "multi_label", "prompt": "What came up?", "required": False,
     "options": {"choices": [{"value": v, "label": v.title()} for v in ("money", "time", "family")], "max": 2}},
]


def test_yes_no_sliders_and_multi_label_questions_are_asked_and_stored(client):
    study = make_chat_study(questions=OTHER_KINDS)
    participant = at_questionnaire(client, study)

    page = client.get(url("questionnaire", study)).text
    assert "0 – tense" in page and "10 – calm" in page and 'type="number"' in page
    assert page.count('type="checkbox"') == 3

    response = client.post(url("questionnaire", study),
                           {"agreed": "yes", "calm": "6", "minutes": "12", "topics": ["time", "money"]})

    assert response.url == url("done", study)
    assert answers_of(participant) == {"agreed": "yes", "calm": "6", "minutes": "12", "topics": "money; time"}


@pytest.mark.parametrize(("posted", "message"), [
    ({"calm": "5"}, "Question 2: choose a value from 0 to 10."),
    ({"minutes": "61"}, "Question 3: choose a value from 0 to 60."),
    ({"minutes": "1.5"}, "Question 3: choose a whole number from 0 to 60."),
    ({"topics": ["money", "time", "family"]}, "Question 4: pick at most 2 of: Money, Time, Family."),
    ({"agreed": "maybe"}, "Question 1: choose one of: Yes, No."),
])
def test_answers_the_question_does_not_allow_are_refused_by_number(client, posted, message):
    study = make_chat_study(questions=OTHER_KINDS)
    participant = at_questionnaire(client, study)

    response = client.post(url("questionnaire", study), {"agreed": "no", "calm": "4", "minutes": "3", **posted})

    assert message in response.text
    participant.refresh_from_db()
    assert (participant.stage, participant.response) == (STAGE.QUESTIONNAIRE, None)


def test_a_study_without_questions_finishes_without_a_response(client):
    study = make_chat_study(questions=[])
    participant = at_questionnaire(client, study)

    assert "Finish" in client.get(url("questionnaire", study)).text
    client.post(url("questionnaire", study), {})

    participant.refresh_from_db()
    assert (participant.stage, participant.response) == (STAGE.DONE, None)


# Completion


def test_the_completion_page_shows_the_code_and_the_return_link_with_the_code(client, study):
    at_questionnaire(client, study)
    client.post(url("questionnaire", study), {"goal": "4", "unresolved_confusion": "2", "mutual_understanding": "5"})

    page = client.get(url("done", study)).text

    assert "C0DE-42" in page
    assert 'href="https://example.org/done?cc=C0DE-42"' in page


def test_without_a_return_url_the_completion_page_asks_to_copy_the_code(client):
    study = make_chat_study(completion_code="ABC123", return_url="")
    sign_in(client, make_participant(study, participant_id="done", stage=STAGE.DONE))

    page = client.get(url("done", study)).text

    assert "ABC123" in page
    assert "Copy this code" in page
    assert "Return to the study site" not in page


def test_the_completion_code_is_shown_only_to_finished_participants(client, study):
    join(client, study, "impatient", stage=STAGE.CHAT)

    response = client.get(url("done", study))

    assert response.url == url("chat", study)
    assert "C0DE-42" not in client.get(url("chat", study)).text


def test_the_whole_way_from_link_to_code(client, study):
    response = client.get(entry_url(study, "all-the-way"), follow=True)
    assert response.redirect_chain[-1][0] == url("consent", study)
    response = client.post(url("consent", study), {"decision": "agree"}, follow=True)
    assert "Start the conversation" in response.text
    response = client.post(url("briefing", study), follow=True)
    assert response.redirect_chain[-1][0] == url("chat", study)
    Episode.objects.filter(participant__participant_id="all-the-way").update(
        status=Episode.Status.FINISHED, end_reason=Episode.EndReason.LEAVE, finished_at=timezone.now()
    )
    response = client.get(url("entry", study), follow=True)
    assert response.redirect_chain[-1][0] == url("questionnaire", study)
    response = client.post(
        url("questionnaire", study), {"goal": "3", "unresolved_confusion": "3", "mutual_understanding": "3"},
        follow=True,
    )

    assert "C0DE-42" in response.text
    assert Participant.objects.get().stage == STAGE.DONE


def test_participant_pages_are_never_cached(client, study):
    join(client, study, "fresh")

    assert "no-cache" in client.get(url("briefing", study))["Cache-Control"]


def test_an_annotator_account_opens_a_study_link_as_a_participant_like_anyone(client, study):
    client.force_login(make_user(username="annotator-x"))

    response = client.get(entry_url(study, "annotator-x-pid"))

    assert response.url == url("consent", study)
