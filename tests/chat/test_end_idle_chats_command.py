"""``manage.py end_idle_chats`` and the consumer's periodic task (``chat.tasks.end_idle_chats``): ending the chats
gone quiet past their study's timeout."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from benchmark.models import Episode
from chat.models import Participant
from chat.tasks import end_idle_chats
from tests.chat.builders import chat_until, make_chat_study, make_participant

pytestmark = pytest.mark.django_db

STAGE = Participant.Stage


def quiet_for(participant, seconds):
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=timezone.now() - timedelta(seconds=seconds))


def run(*args):
    out = StringIO()
    call_command("end_idle_chats", *args, stdout=out)
    return out.getvalue()


def test_ends_only_chats_quiet_past_their_studys_timeout():
    study = make_chat_study(slug="pilot")
    quiet = make_participant(study, stage=STAGE.CHAT)
    chat_until(quiet, study.min_participant_turns)
    quiet_for(quiet, study.inactivity_timeout + 1)
    talking = make_participant(study, stage=STAGE.CHAT)
    quiet_for(talking, study.inactivity_timeout - 30)

    output = run()

    quiet.refresh_from_db()
    talking.refresh_from_db()
    assert quiet.stage == STAGE.QUESTIONNAIRE
    assert quiet.episode.end_reason == Episode.EndReason.TIMEOUT
    assert talking.stage == STAGE.CHAT
    assert "Ended 1 idle chat" in output
    assert "pilot" in output


def test_a_second_run_ends_nothing_more():
    study = make_chat_study(slug="pilot")
    quiet = make_participant(study, stage=STAGE.CHAT)
    quiet_for(quiet, study.inactivity_timeout + 1)
    run()

    assert "Ended 0 idle chats" in run()


def test_study_option_limits_the_job_to_one_study():
    first, second = make_chat_study(slug="first"), make_chat_study(slug="second")
    ones = [make_participant(study, stage=STAGE.CHAT) for study in (first, second)]
    for participant in ones:
        quiet_for(participant, 10_000)

    run("--study", "first")

    assert [Participant.objects.get(pk=p.pk).stage for p in ones] == [STAGE.SCREENED_OUT, STAGE.CHAT]


def test_an_unknown_study_is_named_in_the_error():
    with pytest.raises(CommandError, match="no chat study with the slug 'nope'"):
        run("--study", "nope")


def test_the_consumers_minutely_upkeep_ends_idle_chats_and_logs_how_many(caplog):
    study = make_chat_study(slug="pilot")
    quiet = make_participant(study, stage=STAGE.CHAT)
    quiet_for(quiet, study.inactivity_timeout + 1)
    talking = make_participant(study, stage=STAGE.CHAT)

    with caplog.at_level("INFO", logger="parley.upkeep"):
        ended = end_idle_chats.call_local()

    assert ended == 1
    assert Participant.objects.get(pk=quiet.pk).stage != STAGE.CHAT
    assert Participant.objects.get(pk=talking.pk).stage == STAGE.CHAT
    assert "Upkeep: ended 1 idle chat(s); pilot: 1" in caplog.text
