"""Two writers racing to store the same judge's response: the database keeps one, on SQLite and PostgreSQL."""

import time

import pytest
from django.db import IntegrityError, transaction

from benchmark.evaluation.judge_questions import judge_instruments
from benchmark.models import Respondent, Response
from tests.builders import make_episode
from tests.concurrency import at_once

pytestmark = [pytest.mark.concurrency, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def test_the_same_judge_response_written_twice_at_once_is_stored_once():
    episode = make_episode()
    instrument = judge_instruments()[0]
    judge = Respondent.objects.create(kind="judge", model="openai/racer", prompt_version="v1")

    def store() -> Response:
        with transaction.atomic():
            response = Response.objects.create(episode=episode, respondent=judge, instrument=instrument)
            time.sleep(0.2)  # still uncommitted while the other writer tries
            return response

    outcomes = at_once(store, store)

    assert sorted(type(outcome).__name__ for outcome in outcomes) == ["IntegrityError", "Response"]
    assert any(isinstance(outcome, IntegrityError) for outcome in outcomes)
    assert Response.objects.filter(episode=episode, respondent=judge).count() == 1
