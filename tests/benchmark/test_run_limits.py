"""What keeps one run from wasting work or the server: a refused key stops it; a team's runs are capped."""

import pytest

from benchmark.models import Episode, SimulationRun
from tests.benchmark.test_runs import cast_scenario, execute, llm_options, speak

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_configured_models(settings):
    settings.PARLEY_MODELS = {"agent": "", "partner": "", "judge": "", "neutralizer": ""}


@pytest.mark.parametrize("status", [401, 403])
def test_a_run_stops_at_the_first_authentication_error(fake_llm, status):
    for number in range(4):
        cast_scenario(f"scenario-{number}", names=(f"Ana Number{number}", f"Ben Number{number}"))
    for _ in range(20):
        fake_llm.enqueue(status=status)

    summary = execute(llm_options(conditions=("none",), concurrency=1, judge_model="none"))

    assert len(fake_llm.requests) == 1  # a 401 or 403 is not retried, and no other episode is started
    run = SimulationRun.objects.get(tag="test-run")
    assert (summary.status, run.status) == ("failed", "failed")
    assert "stopped at the first authentication error" in run.message and f"HTTP {status}" in run.message
    statuses = sorted(Episode.objects.filter(tag="test-run").values_list("status", flat=True))
    assert statuses == ["failed", "pending", "pending", "pending"]  # the rest stay to be resumed with a good key


def test_other_client_errors_fail_their_episode_only(fake_llm):
    cast_scenario("first", names=("Ana First", "Ben First"))
    cast_scenario("second", names=("Ana Second", "Ben Second"))
    fake_llm.enqueue(status=400)
    fake_llm.reply_when("role-playing", speak("Fine."))

    summary = execute(llm_options(conditions=("none",), concurrency=1, judge_model="none"))

    assert (summary.finished, summary.failed) == (1, 1)
