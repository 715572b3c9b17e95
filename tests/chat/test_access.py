"""Who is who: the session's participant per study, platform ids from the link, researchers' own studies."""

import pytest
from django.contrib.sessions.backends.db import SessionStore

from benchmark.models import Episode
from benchmark.recruiting import InvalidId, ids_from_query
from chat.access import (
    SESSION_KEY,
    claim,
    page_for,
    participant_for,
    researcher_chat_studies,
    settle_stage,
)
from chat.models import Participant
from tests.builders import make_researcher, make_team, make_user
from tests.chat.builders import make_chat_study, make_participant

STAGE = Participant.Stage


# Ids from the study link


def test_prolific_ids_are_read_from_the_link():
    ids = ids_from_query({"PROLIFIC_PID": "60a1", "STUDY_ID": "s9", "SESSION_ID": "x7"})

    assert (ids.participant_id, ids.prolific_pid, ids.prolific_study_id, ids.prolific_session_id) == (
        "60a1", "60a1", "s9", "x7"
    )


def test_the_prolific_id_wins_over_a_generic_one():
    assert ids_from_query({"participant_id": "generic", "PROLIFIC_PID": "prolific"}).participant_id == "prolific"


def test_a_link_without_an_id_or_with_a_blank_one_carries_none():
    assert ids_from_query({}) is None
    assert ids_from_query({"PROLIFIC_PID": "  ", "STUDY_ID": "s9"}) is None


@pytest.mark.parametrize("bad", ["two words", "x" * 101, "<script>", "naïve"])
def test_ids_that_cannot_be_used_are_refused_by_name(bad):
    with pytest.raises(InvalidId, match="PROLIFIC_PID"):
        ids_from_query({"PROLIFIC_PID": bad})


def test_a_malformed_platform_session_id_is_dropped_not_fatal():
    assert ids_from_query({"PROLIFIC_PID": "ok", "SESSION_ID": "not ok"}).prolific_session_id == ""


# The session


@pytest.mark.django_db
def test_a_session_remembers_one_participant_per_study():
    first, second = make_chat_study(), make_chat_study()
    a = make_participant(first, stage=STAGE.CONSENT)
    b = make_participant(second, stage=STAGE.CONSENT)
    session = SessionStore()

    claim(session, a)
    claim(session, b)

    assert participant_for(session, first) == a
    assert participant_for(session, second) == b
    assert session[SESSION_KEY] == {str(first.pk): a.pk, str(second.pk): b.pk}


@pytest.mark.django_db
def test_a_participant_id_from_another_study_in_the_session_is_ignored():
    first, second = make_chat_study(), make_chat_study()
    a = make_participant(first, stage=STAGE.CONSENT)
    session = {SESSION_KEY: {str(second.pk): a.pk}}  # tampered or stale: a's id filed under the other study

    assert participant_for(session, second) is None


@pytest.mark.django_db
def test_an_empty_session_has_no_participant():
    assert participant_for({}, make_chat_study()) is None


@pytest.mark.django_db
@pytest.mark.parametrize(("stage", "page"), [
    (STAGE.CONSENT, "consent"), (STAGE.BRIEFING, "briefing"), (STAGE.CHAT, "chat"),
    (STAGE.QUESTIONNAIRE, "questionnaire"), (STAGE.DONE, "done"), (STAGE.SCREENED_OUT, "screened-out"),
    (STAGE.DECLINED, "declined"),
])
def test_each_stage_has_its_page(stage, page):
    study = make_chat_study(slug="staged")

    assert page_for(make_participant(study, stage=stage)) == f"/s/staged/{page}/"


@pytest.mark.django_db
def test_a_chat_whose_episode_ended_elsewhere_moves_on_to_the_questions():
    participant = make_participant(make_chat_study(), stage=STAGE.CHAT)
    Episode.objects.filter(pk=participant.episode_id).update(status=Episode.Status.FAILED)

    assert settle_stage(participant).stage == STAGE.QUESTIONNAIRE


@pytest.mark.django_db
def test_a_running_chat_stays_a_chat():
    participant = make_participant(make_chat_study(), stage=STAGE.CHAT)

    assert settle_stage(participant).stage == STAGE.CHAT


# Researchers


@pytest.mark.django_db
def test_researchers_manage_their_teams_chat_studies_and_superusers_all():
    other_team = make_team()
    owner, colleague, other = make_user(staff=True), make_researcher(), make_researcher(other_team)
    mine = make_chat_study(created_by=owner)
    theirs = make_chat_study(created_by=other, team=other_team)

    assert list(researcher_chat_studies(owner)) == [mine]
    assert list(researcher_chat_studies(colleague)) == [mine]
    assert list(researcher_chat_studies(other)) == [theirs]
    assert set(researcher_chat_studies(make_user(superuser=True))) == {mine, theirs}
