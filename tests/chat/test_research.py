"""Researchers' chat pages: who may open them, the list, the study form, the live monitor, transcripts, CSV."""

import csv
import io
import re
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from benchmark.instruments.presets import CHAT_PRESET
from benchmark.models import Barrier, Seat, Turn
from chat.exports import COLUMNS
from chat.models import ChatStudy, Participant
from chat.questionnaire import default_instrument
from tests.builders import default_team, make_researcher, make_scenario, make_team, make_user
from tests.chat.builders import chat_until, give_answers, make_chat_study, make_participant

pytestmark = pytest.mark.django_db

STAGE = Participant.Stage


@pytest.fixture
def researcher():
    return make_user(staff=True, username="owner")


@pytest.fixture
def study(researcher):
    return make_chat_study(slug="pilot", title="Pilot chat", created_by=researcher)


@pytest.fixture
def chatting(study):
    """A participant mid-chat whose last turn tries to inject a script."""
    participant = make_participant(study, participant_id="pid-<b>bold</b>", stage=STAGE.CHAT)
    agent = participant.episode.seats.get(player=Seat.Player.AGENT)
    human = participant.episode.seats.get(player=Seat.Player.HUMAN)
    Turn.objects.create(episode=participant.episode, index=0, seat=agent, content="Hello there, neighbour.")
    Turn.objects.create(episode=participant.episode, index=1, seat=human, content="<script>alert('x')</script> hi")
    return participant


def add_turns(participant, contents):
    seats = list(participant.episode.seats.order_by("position"))
    start = participant.episode.turns.count()
    for offset, content in enumerate(contents):
        index = start + offset
        Turn.objects.create(episode=participant.episode, index=index, seat=seats[index % 2], content=content)


PAGES = [
    ("index", lambda s, p: []),
    ("study-create", lambda s, p: []),
    ("monitor", lambda s, p: [s.slug]),
    ("monitor-live", lambda s, p: [s.slug]),
    ("study-edit", lambda s, p: [s.slug]),
    ("export", lambda s, p: [s.slug]),
    ("transcript", lambda s, p: [s.slug, p.pk]),
]
PAGE_IDS = [name for name, _ in PAGES]
STUDY_PAGES = PAGES[2:]


def page_url(name, args, study, participant):
    return reverse(f"chat:{name}", args=args(study, participant))


# Who may open what


@pytest.mark.parametrize(("name", "args"), PAGES, ids=PAGE_IDS)
def test_anonymous_visitors_are_sent_to_log_in(client, study, chatting, name, args):
    response = client.get(page_url(name, args, study, chatting))

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


@pytest.mark.parametrize(("name", "args"), PAGES, ids=PAGE_IDS)
def test_annotators_are_refused(client, study, chatting, name, args):
    annotator = make_user(username="annotator")
    annotator.groups.add(Group.objects.get_or_create(name="annotators")[0])
    client.force_login(annotator)

    assert client.get(page_url(name, args, study, chatting)).status_code == 403


@pytest.mark.parametrize(("name", "args"), PAGES, ids=PAGE_IDS)
def test_the_researcher_who_made_the_study_opens_every_page(client, study, chatting, researcher, name, args):
    client.force_login(researcher)

    assert client.get(page_url(name, args, study, chatting)).status_code == 200


@pytest.mark.parametrize(("name", "args"), STUDY_PAGES, ids=PAGE_IDS[2:])
def test_another_teams_study_is_not_found(client, study, chatting, name, args):
    client.force_login(make_researcher(make_team()))

    assert client.get(page_url(name, args, study, chatting)).status_code == 404


@pytest.mark.parametrize(("name", "args"), STUDY_PAGES, ids=PAGE_IDS[2:])
def test_every_researcher_of_the_team_opens_its_studies(client, study, chatting, name, args):
    client.force_login(make_researcher(study.team))

    assert client.get(page_url(name, args, study, chatting)).status_code == 200


@pytest.mark.parametrize(("name", "args"), STUDY_PAGES, ids=PAGE_IDS[2:])
def test_a_superuser_opens_every_study(client, study, chatting, name, args):
    client.force_login(make_user(superuser=True))

    assert client.get(page_url(name, args, study, chatting)).status_code == 200


def test_members_of_the_researchers_group_are_researchers_too(client, study):
    member = make_researcher()
    study.created_by = member
    study.save()
    client.force_login(member)

    assert client.get(reverse("chat:monitor", args=[study.slug])).status_code == 200


def test_a_participant_of_another_study_is_not_found_in_this_ones_transcripts(client, study, researcher):
    other = make_chat_study(created_by=researcher)
    stranger = make_participant(other)
    client.force_login(researcher)

    assert client.get(reverse("chat:transcript", args=[study.slug, stranger.pk])).status_code == 404


# The list


def test_the_list_shows_only_the_teams_studies_with_progress(client, study, researcher):
    make_chat_study(title="Someone else's study", team=make_team())
    make_participant(study, stage=STAGE.DONE)
    make_participant(study, stage=STAGE.CHAT)
    client.force_login(researcher)

    response = client.get(reverse("chat:index"))

    assert "Pilot chat" in response.text
    assert "Someone else&#x27;s study" not in response.text
    (row,) = response.context["rows"]
    assert (row.finished, row.in_progress, row.participants, row.target) == (1, 1, 2, 8)  # 2 scenarios × 2 × 2


def test_with_no_studies_the_list_invites_to_create_one(client, researcher):
    make_scenario()
    client.force_login(researcher)

    page = client.get(reverse("chat:index")).text

    assert "Create the first one" in page
    assert f'href="{reverse("chat:study-create")}"' in page


# Creating and editing


def form_data(scenarios, **overrides):
    data = {
        "team": str(default_team().pk), "title": "Barrier chats", "slug": "barrier-chats",
        "scenarios": [s.pk for s in scenarios],
        "human_position": "1", "agent_model": "", "partner_strategy": "default", "turn_cap": "20",
        "inactivity_timeout": "600", "max_message_chars": "1000", "messages_per_minute": "12",
        "min_participant_turns": "3", "consent_text": "Please agree.", "completion_code": "DONE-1",
        "screen_out_code": "SCREEN-1", "technical_problem_code": "TECH-1",
        "return_url": "https://app.prolific.com/submissions/complete?cc={code}", "is_open": "on",
    }
    data["instrument"] = str(default_instrument().pk)
    for barrier in Barrier.objects.all():
        data[f"target_{barrier.key}"] = "0"
    data.update(overrides)
    return data


def test_the_form_offers_a_target_per_barrier_and_the_default_questionnaire(client, researcher):
    Barrier.objects.create(team=default_team(), key="sarcasm", name="Sarcasm", definition="Says the opposite.")
    client.force_login(researcher)

    response = client.get(reverse("chat:study-create"))

    form = response.context["form"]
    assert {f"target_{b.key}" for b in Barrier.objects.all()} <= set(form.fields)
    assert form["target_semantic"].initial == 5
    assert form["target_sarcasm"].initial == 0
    assert form["instrument"].initial == default_instrument().pk


def test_creating_a_study_stores_scenarios_conditions_and_the_owner(client, researcher):
    scenarios = [make_scenario(), make_scenario()]
    make_scenario(roles=3)  # not offered: a chat has two roles
    client.force_login(researcher)

    response = client.post(
        reverse("chat:study-create"), form_data(scenarios, target_none="2", target_semantic="3", turn_cap="16")
    )

    assert response.status_code == 302
    study = ChatStudy.objects.get(slug="barrier-chats")
    assert response.url == reverse("chat:monitor", args=[study.slug])
    assert study.created_by == researcher
    assert set(study.scenarios.all()) == set(scenarios)
    assert dict(study.conditions.values_list("barrier__key", "target")) == {"none": 2, "semantic": 3}
    assert study.turn_cap == 16
    assert (study.instrument.team, study.instrument.preset) == (None, CHAT_PRESET)


def test_seat_models_are_checked_with_the_runs_reading_and_stored_as_text(client, researcher):
    client.force_login(researcher)
    scenario = make_scenario(roles=3)
    url = reverse("chat:study-create")

    bad = client.post(url, form_data([scenario], seat_models="0=a/model, keeper", target_none="2"))
    theirs = client.post(url, form_data([scenario], seat_models="1=a/model", target_none="2"))
    missing = client.post(url, form_data([scenario], seat_models="3=a/model", target_none="2"))
    good = client.post(url, form_data([scenario], seat_models=" 0=openai/a-model , receiver=scripted", target_none="2"))

    assert "'keeper' is not SEAT=MODEL" in bad.context["form"].errors["seat_models"][0]
    assert theirs.context["form"].errors["seat_models"] == ["Seat 1 is the participant's; name the agents' seats only."]
    assert missing.context["form"].errors["seat_models"] == ["None of the chosen scenarios has a role at position 3."]
    assert good.status_code == 302
    assert ChatStudy.objects.get(slug="barrier-chats").seat_models == "0=openai/a-model,receiver=scripted"


def test_scenarios_with_an_uncast_role_are_not_offered(client, researcher):
    chat_ready = make_scenario()
    three_roles = make_scenario(roles=3)
    uncast = make_scenario(roles=[{}, {}, {"character": None}])
    client.force_login(researcher)

    offered = set(client.get(reverse("chat:study-create")).context["form"].fields["scenarios"].queryset)

    assert chat_ready in offered and three_roles in offered and uncast not in offered


def test_a_study_needs_at_least_one_condition(client, researcher):
    client.force_login(researcher)

    response = client.post(reverse("chat:study-create"), form_data([make_scenario()]))

    assert "Give at least one condition a target above 0" in response.text
    assert not ChatStudy.objects.exists()


def test_the_form_offers_the_teams_own_instruments_and_the_presets_participants_can_answer(client, researcher):
    own = make_chat_study(questions=[{"key": "calm", "kind": "text", "prompt": "How calm?"}]).instrument
    spans = make_chat_study(questions=[{"key": "why", "kind": "text", "prompt": "Why?", "scope": "seat"}]).instrument
    client.force_login(researcher)

    offered = list(client.get(reverse("chat:study-create")).context["form"].fields["instrument"].queryset)

    assert own in offered and default_instrument() in offered
    assert spans not in offered  # asked per seat: a participant answers once about their own chat


def test_a_picked_instrument_is_what_participants_answer(client, researcher):
    own = make_chat_study(questions=[{"key": "agreed", "kind": "yes_no", "prompt": "Did you agree?"}]).instrument
    client.force_login(researcher)

    response = client.post(reverse("chat:study-create"),
                           form_data([make_scenario()], target_none="1", instrument=str(own.pk)))

    assert response.status_code == 302
    assert ChatStudy.objects.get(slug="barrier-chats").instrument == own


def test_no_instrument_asks_no_questions(client, researcher):
    client.force_login(researcher)

    client.post(reverse("chat:study-create"), form_data([make_scenario()], target_none="1", instrument=""))

    assert ChatStudy.objects.get(slug="barrier-chats").instrument is None


def test_an_instrument_of_another_team_is_not_a_choice(client, researcher):
    theirs = make_chat_study(team=make_team(), questions=[{"key": "x", "kind": "text", "prompt": "X?"}]).instrument
    client.force_login(researcher)

    response = client.post(reverse("chat:study-create"),
                           form_data([make_scenario()], target_none="1", instrument=str(theirs.pk)))

    assert "Select a valid choice" in " ".join(response.context["form"].errors["instrument"])
    assert not ChatStudy.objects.filter(slug="barrier-chats").exists()


def test_an_answered_instrument_stays_and_its_new_version_can_be_picked(client, study, researcher):
    from benchmark.instruments.versions import freeze, new_version

    first = study.instrument
    freeze(first)
    newer = new_version(first)
    client.force_login(researcher)

    client.post(reverse("chat:study-edit", args=[study.slug]),
                form_data(list(study.scenarios.all()), slug=study.slug, target_none="2", instrument=str(newer.pk)))

    study.refresh_from_db()
    assert study.instrument == newer
    assert first.questions.count() == newer.questions.count()


def test_an_instrument_of_another_team_or_asked_per_seat_is_refused(study):
    from django.core.exceptions import ValidationError

    from benchmark.instruments.presets import install_preset
    from benchmark.models import Instrument

    study.instrument = Instrument.objects.create(name="Theirs", team=make_team())
    with pytest.raises(ValidationError, match="belongs to another team"):
        study.full_clean()
    study.instrument = install_preset("sotopia-eval")
    with pytest.raises(ValidationError, match="asked once per seat"):
        study.full_clean()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("slug", "new", "reserved"),
    ("return_url", "https://example.org/?cc={token}", "only placeholder"),
    ("agent_model", "gpt 4", "no spaces"),
    ("turn_cap", "1", "greater than or equal to 2"),
])
def test_bad_settings_are_refused_with_a_message(client, researcher, field, value, message):
    client.force_login(researcher)
    data = form_data([make_scenario()], target_none="1", **{field: value})

    response = client.post(reverse("chat:study-create"), data)

    assert message in " ".join(response.context["form"].errors[field])


def test_editing_changes_targets_and_drops_conditions_set_to_zero(client, study, researcher):
    client.force_login(researcher)
    data = form_data(list(study.scenarios.all()), slug=study.slug, target_none="4", target_semantic="0")

    response = client.post(reverse("chat:study-edit", args=[study.slug]), data)

    assert response.status_code == 302
    assert dict(study.conditions.values_list("barrier__key", "target")) == {"none": 4}


def test_the_edit_form_shows_the_studys_current_values(client, researcher):
    questions = [{"key": "only", "kind": "text", "prompt": "Say anything", "required": False,
                  "options": {"max_length": 300}}]
    study = make_chat_study(slug="own-questions", created_by=researcher, questions=questions)
    client.force_login(researcher)

    form = client.get(reverse("chat:study-edit", args=[study.slug])).context["form"]

    assert form["target_none"].initial == 2
    assert form["target_emotional"].initial == 0
    assert form["instrument"].value() == study.instrument.pk
    assert study.instrument.questions.get().options == {"max_length": 300}


def test_the_slug_cannot_change_once_participants_used_the_link(client, study, researcher):
    make_participant(study, stage=STAGE.CONSENT)
    client.force_login(researcher)
    data = form_data(list(study.scenarios.all()), slug="renamed", target_none="2")

    response = client.post(reverse("chat:study-edit", args=[study.slug]), data)

    assert "can no longer change" in response.text
    assert ChatStudy.objects.filter(slug="pilot").exists()


def test_another_teams_researcher_cannot_edit_the_study(client, study):
    client.force_login(make_researcher(make_team()))
    data = form_data(list(study.scenarios.all()), slug=study.slug, title="Taken over", target_none="1")

    assert client.post(reverse("chat:study-edit", args=[study.slug]), data).status_code == 404
    study.refresh_from_db()
    assert study.title == "Pilot chat"


# The monitor


def test_the_monitor_shows_the_study_link_with_prolifics_placeholders(client, study, researcher):
    client.force_login(researcher)

    page = client.get(reverse("chat:monitor", args=[study.slug])).text

    assert "http://testserver/s/pilot/" in page
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in page


def test_the_live_part_polls_every_three_seconds(client, study, researcher):
    client.force_login(researcher)

    page = client.get(reverse("chat:monitor", args=[study.slug])).text

    assert f'hx-get="{reverse("chat:monitor-live", args=[study.slug])}"' in page
    assert 'hx-trigger="every 3s"' in page


def test_active_sessions_show_stage_cell_turns_and_the_last_words(client, study, chatting, researcher):
    client.force_login(researcher)

    response = client.get(reverse("chat:monitor-live", args=[study.slug]))

    (row,) = response.context["sessions"]
    assert row.participant == chatting
    assert row.turn_count == 2
    assert row.last_turn_at is not None
    assert row.snippet == "<script>alert('x')</script> hi"
    human = chatting.episode.seats.get(player=Seat.Player.HUMAN)
    assert row.speaker == human.character.name  # who said it: a group chat has several agents
    assert f"<strong>{human.character.name}:</strong>" in response.text
    assert str(chatting.scenario) in response.text
    assert chatting.barrier.name in response.text


def test_the_poll_refreshes_all_participants_with_the_active_sessions(client, study, chatting, researcher):
    client.force_login(researcher)
    client.get(reverse("chat:monitor", args=[study.slug]))
    add_turns(chatting, ["Sure.", "Fine, see you."])  # the chat goes on after the page loaded

    response = client.get(reverse("chat:monitor-live", args=[study.slug]))

    assert 'id="all-participants"' in response.text
    (row,) = response.context["sessions"]
    (listed,) = response.context["participants"]
    assert listed == chatting and (listed.turn_count, listed.stage) == (row.turn_count, row.participant.stage)
    assert listed.turn_count == 4


def test_user_text_on_the_monitor_is_shown_as_text(client, study, chatting, researcher):
    client.force_login(researcher)

    page = client.get(reverse("chat:monitor-live", args=[study.slug])).text

    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; hi" in page
    assert "pid-&lt;b&gt;bold&lt;/b&gt;" in page


def test_finished_and_declined_participants_are_not_active(client, study, researcher):
    make_participant(study, stage=STAGE.DONE)
    make_participant(study, stage=STAGE.DECLINED)
    reading = make_participant(study, stage=STAGE.BRIEFING)
    client.force_login(researcher)

    sessions = client.get(reverse("chat:monitor-live", args=[study.slug])).context["sessions"]

    assert [row.participant for row in sessions] == [reading]


def quiet_past_the_timeout(participant, study):
    Participant.objects.filter(pk=participant.pk).update(
        last_seen_at=timezone.now() - timedelta(seconds=study.inactivity_timeout + 1)
    )


@pytest.mark.parametrize("page", ["monitor", "monitor-live"])
def test_a_get_of_the_monitor_changes_no_row(client, study, chatting, researcher, page):
    chat_until(chatting, study.min_participant_turns)
    quiet_past_the_timeout(chatting, study)
    client.force_login(researcher)

    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse(f"chat:{page}", args=[study.slug]))

    assert response.status_code == 200
    writes = [q["sql"] for q in queries if q["sql"].lstrip().split()[0].upper() in {"INSERT", "UPDATE", "DELETE"}]
    assert writes == []
    chatting.refresh_from_db()
    assert chatting.stage == STAGE.CHAT


def test_the_monitor_shows_a_chat_quiet_past_the_timeout_as_idle(client, study, chatting, researcher):
    quiet_past_the_timeout(chatting, study)
    client.force_login(researcher)

    response = client.get(reverse("chat:monitor-live", args=[study.slug]))

    (row,) = response.context["sessions"]
    assert row.participant == chatting and row.idle
    assert "(idle)" in response.text


def test_design_cells_count_finished_in_progress_and_target(client, researcher):
    scenario = make_scenario(codename="bus-stop")
    study = make_chat_study(created_by=researcher, scenarios=[scenario], conditions=["none"], target=3)
    make_participant(study, stage=STAGE.DONE)
    make_participant(study, stage=STAGE.CHAT)
    client.force_login(researcher)

    response = client.get(reverse("chat:monitor-live", args=[study.slug]))

    (row,) = response.context["grid"]["rows"]
    (cell,) = row["cells"]
    assert (cell.finished, cell.in_progress, cell.target) == (1, 1, 3)
    assert "1 / 1 / 3" in response.text


def test_the_live_part_costs_the_same_queries_for_one_or_many_sessions(client, study, researcher):
    client.force_login(researcher)
    url = reverse("chat:monitor-live", args=[study.slug])
    add_turns(make_participant(study, stage=STAGE.CHAT), ["one", "two"])
    client.get(url)
    with CaptureQueriesContext(connection) as one:
        client.get(url)
    for _ in range(4):
        add_turns(make_participant(study, stage=STAGE.CHAT), ["one", "two", "three"])
    with CaptureQueriesContext(connection) as five:
        client.get(url)

    assert len(five) == len(one)


def test_the_annotate_button_opens_the_annotation_form_prefilled_for_finished_chats(client, study, researcher):
    make_participant(study, stage=STAGE.DONE)
    client.force_login(researcher)

    response = client.get(reverse("chat:monitor", args=[study.slug]))

    assert response.context["finished_episodes"] == 1
    link = urlsplit(response.context["annotate_url"])
    assert link.path == reverse("annotator:study-create")
    query = parse_qs(link.query)
    assert query["tag"] == ["chat:pilot"]
    assert query["status"] == ["finished"]
    assert query["source"] == ["human_chat"]
    assert "Annotate these episodes" in response.text


def test_without_finished_chats_there_is_nothing_to_annotate_yet(client, study, researcher):
    client.force_login(researcher)

    page = client.get(reverse("chat:monitor", args=[study.slug])).text

    assert "no chat has finished yet" in page


# Transcripts


def test_the_transcript_shows_seats_turns_the_human_seat_end_reason_and_answers(client, study, researcher):
    participant = make_participant(study, participant_id="reader", stage=STAGE.DONE)
    add_turns(participant, ["Good evening.", "Evening <i>to you</i>."])
    give_answers(participant, {"goal": "4", "comment": "<img src=x>"})
    client.force_login(researcher)

    response = client.get(reverse("chat:transcript", args=[study.slug, participant.pk]))

    page = response.text
    human = participant.episode.seats.get(player=Seat.Player.HUMAN)
    assert human.character.name in page
    assert "<strong>the participant</strong>" in page
    assert "Good evening." in page
    assert "Evening &lt;i&gt;to you&lt;/i&gt;." in page
    assert "a side left" in page
    assert "How well did you reach your character&#x27;s goal?" in page
    assert "&lt;img src=x&gt;" in page


def test_a_participant_without_an_episode_has_an_empty_transcript(client, study, researcher):
    participant = make_participant(study, stage=STAGE.CONSENT)
    client.force_login(researcher)

    response = client.get(reverse("chat:transcript", args=[study.slug, participant.pk]))

    assert "No turns yet." in response.text


# CSV


def test_the_csv_has_a_row_per_participant_with_their_answers(client, study, researcher):
    earlier = make_participant(study, participant_id="earlier", stage=STAGE.DONE)
    study.instrument = make_chat_study(questions=[
        {"key": "goal", "kind": "slider", "prompt": "Goal?", "options": {"min": 1, "max": 5, "step": 1}},
        {"key": "old_question", "kind": "text", "prompt": "Asked before."},
    ]).instrument
    study.save()
    give_answers(earlier, {"goal": "2", "old_question": "kept"})  # answered an earlier questionnaire
    study.instrument = default_instrument()
    study.save()
    done = make_participant(study, participant_id="finisher", stage=STAGE.DONE, prolific_pid="finisher")
    add_turns(done, ["a", "b", "c"])
    give_answers(done, {"goal": "5", "unresolved_confusion": "4", "mutual_understanding": "3",
                        "comment": "fine, \"really\""})
    make_participant(study, participant_id="decliner", stage=STAGE.DECLINED)
    client.force_login(researcher)

    response = client.get(reverse("chat:export", args=[study.slug]))

    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="pilot-participants.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    header = list(rows[0])
    assert header == [*COLUMNS, "goal", "unresolved_confusion", "mutual_understanding", "comment", "old_question"]
    by_id = {row["participant_id"]: row for row in rows}
    finisher = by_id["finisher"]
    assert (finisher["stage"], finisher["turns"], finisher["participant_turns"]) == ("done", "3", "1")
    assert (finisher["goal"], finisher["comment"], finisher["old_question"]) == ("5", 'fine, "really"', "")
    assert finisher["condition"] == done.barrier.key
    assert finisher["episode"] == done.episode.external_id
    before = by_id["earlier"]
    assert (before["goal"], before["old_question"], before["comment"]) == ("2", "kept", "")
    decliner = by_id["decliner"]
    assert (decliner["stage"], decliner["scenario"], decliner["goal"]) == ("declined", "", "")


def test_the_csv_joins_the_labels_of_a_multi_label_answer(client, researcher):
    study = make_chat_study(created_by=researcher, questions=[{"key": "topics", "kind": "multi_label", "prompt": "?",
        "options": {"choices": [{"value": v, "label": v} for v in ("money", "time", "family")]}}])
    give_answers(make_participant(study, stage=STAGE.DONE), {"topics": "money"})
    participant = Participant.objects.get(study=study)
    question = study.instrument.questions.get()
    participant.response.answers.create(question=question, value="family")
    client.force_login(researcher)

    row = next(csv.DictReader(io.StringIO(client.get(reverse("chat:export", args=[study.slug])).content.decode())))

    assert row["topics"] == "money; family"


def test_the_csv_quotes_answers_and_ids_a_spreadsheet_would_run_as_formulas(client, researcher):
    planted = '=HYPERLINK("http://evil.example","click")'
    study = make_chat_study(created_by=researcher, questions=[
        {"key": "mood", "kind": "slider", "prompt": "Mood?", "options": {"min": -1, "max": 1, "step": 0.5}},
        {"key": "comment", "kind": "text", "prompt": "Anything?"},
    ])
    participant = make_participant(study, participant_id="@SUM(1+1)", stage=STAGE.DONE)
    give_answers(participant, {"mood": "-0.5", "comment": planted})
    client.force_login(researcher)

    response = client.get(reverse("chat:export", args=[study.slug]))

    row = next(csv.DictReader(io.StringIO(response.content.decode())))
    assert row["participant_id"] == "'@SUM(1+1)"
    assert row["comment"] == "'" + planted
    assert row["mood"] == "-0.5"  # numbers stay numbers


# Admin


def test_the_admin_lists_and_opens_chat_studies_and_participants(client, study, chatting):
    client.force_login(make_user(superuser=True))

    for url in [
        reverse("admin:chat_chatstudy_changelist"),
        reverse("admin:chat_chatstudy_change", args=[study.pk]),
        reverse("admin:chat_participant_changelist"),
        reverse("admin:chat_participant_change", args=[chatting.pk]),
    ]:
        assert client.get(url).status_code == 200


def test_the_admin_refuses_a_questionnaire_participants_cannot_answer(client, study):
    from benchmark.instruments.presets import install_preset

    client.force_login(make_user(superuser=True))
    form_class = client.get(reverse("admin:chat_chatstudy_change", args=[study.pk])).context["adminform"].form.__class__
    data = {
        "team": study.team_id, "slug": study.slug, "title": study.title, "created_by": study.created_by_id,
        "scenarios": [s.pk for s in study.scenarios.all()], "human_position": 1, "partner_strategy": "default",
        "turn_cap": 20, "inactivity_timeout": 600, "max_message_chars": 1000, "messages_per_minute": 12,
        "consent_text": "ok", "instrument": install_preset("shrec-spans").pk, "completion_code": "C",
        "screen_out_code": "S", "min_participant_turns": 3,
    }

    form = form_class(data, instance=study)

    assert not form.is_valid()
    assert "which participants cannot answer after a chat" in form.errors["instrument"][0]


def test_the_transcript_numbers_turns_from_one(client, study, researcher):
    participant = make_participant(study, participant_id="counter", stage=STAGE.DONE)
    add_turns(participant, ["Good evening.", "Evening."])
    client.force_login(researcher)

    page = client.get(reverse("chat:transcript", args=[study.slug, participant.pk])).text

    assert re.findall(r'<span class="turn__index">(?:<span class="visually-hidden">Turn </span>)?(\d+)</span>',
                      page) == ["1", "2"]


