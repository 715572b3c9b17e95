"""The jobs page: each team's long work on the task queue, its errors, retrying, and the queue's state."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from huey.contrib.djhuey import db_task

from benchmark.jobs import queue
from benchmark.jobs.queue import HUEY, QueueUnavailable, enqueue, retryable
from benchmark.models import Job, Team
from tests.builders import make_researcher, make_team, make_user
from tests.consumers import available_kinds

pytestmark = pytest.mark.django_db

BROKEN = {"now": True}


@retryable
@db_task(name="tests.jobs_page.flaky")
def flaky(number: int) -> int:
    if BROKEN["now"]:
        raise ConnectionError(f"the model at {number} did not answer")
    return number


@pytest.fixture
def team() -> Team:
    return make_team(name="Lab", slug="lab")


@pytest.fixture
def researcher(team):
    return make_researcher(team, username="ana")


@pytest.fixture
def browser(client, researcher):
    client.force_login(researcher)
    return client


def make_job(team: Team | None, **fields) -> Job:
    fields.setdefault("task", "tests.jobs_page.flaky")
    fields.setdefault("label", "Run pilot")
    return Job.objects.create(team=team, task_id=uuid.uuid4().hex, **fields)


def failed_job(team: Team | None, **fields) -> Job:
    fields = {"arguments": [5], "error": "ConnectionError: refused", "attempts": 3, **fields}
    return make_job(team, status=Job.Status.FAILED, **fields)


def jobs_page(browser, **query):
    return browser.get(reverse("benchmark:jobs"), query)


# Who sees what


def test_a_researcher_sees_their_teams_jobs_and_not_another_teams_nor_upkeep(browser, team):
    make_job(team, label="Our run", link="/benchmark/runs/1/")
    make_job(make_team(), label="Their import")
    make_job(None, label="Close idle chats")

    response = jobs_page(browser)

    assert response.status_code == 200
    assert '<a href="/benchmark/runs/1/">Our run</a>' in response.text
    assert "Their import" not in response.text
    assert "Close idle chats" not in response.text
    assert "upkeep (no team)" not in response.text  # no team column for a researcher


def test_a_superuser_sees_every_teams_jobs_and_upkeep_with_the_team_named(client, team):
    make_job(team, label="Our run")
    make_job(make_team(name="Other lab"), label="Their import")
    make_job(None, label="Close idle chats")
    client.force_login(make_user(superuser=True))

    text = jobs_page(client).text

    for shown in ("Our run", "Their import", "Close idle chats", "<td>Other lab</td>", "<td>upkeep (no team)</td>"):
        assert shown in text


def test_an_annotator_cannot_open_the_page(client, team):
    client.force_login(make_user())
    assert jobs_page(client).status_code == 403


def test_the_navigation_links_the_page_for_researchers_only(browser, client):
    assert f'href="{reverse("benchmark:jobs")}" aria-current="page">Jobs</a>' in jobs_page(browser).text
    client.force_login(make_user())
    assert reverse("benchmark:jobs") not in client.get(reverse("home")).text


# What a row shows


def test_rows_are_newest_first_and_filtered_by_status(browser, team):
    make_job(team, label="older finished", status=Job.Status.FINISHED)
    failed_job(team, label="newer failed")

    everything = jobs_page(browser).text
    failed = jobs_page(browser, status="failed").text

    assert everything.index("newer failed") < everything.index("older finished")
    assert "newer failed" in failed and "older finished" not in failed
    assert "older finished" in jobs_page(browser, status="nonsense").text  # an unknown status filters nothing


def test_a_row_shows_status_attempts_worker_and_times(browser, team):
    job = make_job(team, status=Job.Status.RETRYING, attempts=2, worker="node-2:4711", error="Timeout: slow")

    text = jobs_page(browser).text

    assert '<span class="badge badge--status-retrying">failed, will retry</span>' in text
    assert '<td class="num">2</td>' in text
    assert "node-2:4711" in text
    assert f'datetime="{job.created_at.isoformat()}"' in text
    assert "Timeout: slow" in text


def test_an_error_is_escaped(browser, team):
    failed_job(team, label="<b>bold</b> run", error='ValueError: <script>alert("x")</script>')

    text = jobs_page(browser).text

    assert "<script>alert" not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in text
    assert "&lt;b&gt;bold&lt;/b&gt; run" in text


def test_a_long_error_is_folded_under_its_first_line(browser, team):
    failed_job(team, error="RuntimeError: the chunk failed\nTraceback line 1\nTraceback line 2")
    failed_job(team, error="ValueError: " + "x" * 400)

    text = jobs_page(browser).text

    assert "<details class=\"job-error\"><summary>RuntimeError: the chunk failed</summary>" in text
    assert "<pre>RuntimeError: the chunk failed\nTraceback line 1\nTraceback line 2</pre>" in text
    assert "<summary>ValueError: " + "x" * 147 + "…</summary>" in text


def test_a_finished_jobs_old_error_is_not_shown(browser, team):
    make_job(team, status=Job.Status.FINISHED, error="ConnectionError: the first attempt")
    assert "the first attempt" not in jobs_page(browser).text


def test_only_a_link_on_this_site_is_linked(browser, team):
    make_job(team, label="Odd link", link="javascript:alert(1)")
    make_job(team, label="Far link", link="//elsewhere.example/x")

    text = jobs_page(browser).text

    assert "javascript:" not in text and "elsewhere.example" not in text
    assert "Odd link" in text and "Far link" in text


def test_the_list_costs_the_same_queries_for_many_rows(browser, team, django_assert_max_num_queries):
    failed_job(team, created_by=make_researcher(team))
    with CaptureQueriesContext(connection) as one:
        jobs_page(browser)
    for number in range(30):
        failed_job(team, created_by=make_researcher(team), label=f"job {number}")
        make_job(team, status=Job.Status.RUNNING, label=f"running {number}")

    with django_assert_max_num_queries(len(one)):
        response = jobs_page(browser)

    assert response.status_code == 200
    assert response.text.count('<tr id="job-') == 50  # a full page


def test_pages_keep_the_status_filter(browser, team):
    for number in range(55):
        failed_job(team, label=f"job {number}")

    text = jobs_page(browser, status="failed").text

    assert "?status=failed&amp;page=2" in text


# Polling


def test_the_page_polls_while_a_job_is_at_work_and_stops_when_none_is(browser, team):
    job = make_job(team, status=Job.Status.QUEUED)
    assert 'hx-trigger="every 2s"' in jobs_page(browser).text
    for status in (Job.Status.RUNNING, Job.Status.RETRYING):
        Job.objects.filter(pk=job.pk).update(status=status)
        assert 'hx-trigger="every 2s"' in jobs_page(browser).text

    Job.objects.filter(pk=job.pk).update(status=Job.Status.FINISHED)

    assert "hx-trigger" not in jobs_page(browser).text


def test_the_poll_gets_only_the_list(browser, team):
    make_job(team, status=Job.Status.RUNNING)

    response = browser.get(reverse("benchmark:jobs"), {"status": "running"}, headers={"HX-Request": "true"})

    assert response.status_code == 200
    assert response.text.lstrip().startswith('<div id="job-list"')
    assert 'hx-get="/benchmark/jobs/?status=running"' in response.text
    assert "<html" not in response.text


# The queue's state


def test_the_page_shows_the_queues_counts(browser, monkeypatch):
    monkeypatch.setattr(HUEY, "pending_count", lambda: 3)
    monkeypatch.setattr(HUEY, "scheduled_count", lambda: 1)

    text = jobs_page(browser).text

    assert "3 tasks\n      waiting for a worker, 1 scheduled for later" in text


def test_a_queue_that_cannot_be_reached_is_said_plainly(browser, team, monkeypatch):
    def down() -> None:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as error:
            raise QueueUnavailable("The task queue (redis) cannot be reached") from error

    monkeypatch.setattr(queue, "check_queue", down)
    failed_job(team, label="Waiting run")

    response = jobs_page(browser)

    assert response.status_code == 200
    assert "cannot be reached just now (ConnectionRefusedError)" in response.text
    assert "Waiting run" in response.text  # the jobs are still listed
    assert "Retry</button>" not in response.text  # nothing can be queued again until it is back


def test_a_queue_whose_counts_fail_is_said_plainly_too(browser, monkeypatch):
    def broken() -> int:
        raise OSError("disk I/O error")

    monkeypatch.setattr(HUEY, "scheduled_count", broken)

    assert "cannot be reached just now (OSError)" in jobs_page(browser).text


# Retrying


def test_retry_queues_the_task_again_as_a_new_job_that_runs(browser, team, django_capture_on_commit_callbacks):
    BROKEN["now"] = True
    with django_capture_on_commit_callbacks(execute=True):
        first = enqueue(flaky, 7, team=team, label="Flaky 7", link="/benchmark/runs/7/")
    first.refresh_from_db()
    assert first.status == Job.Status.FAILED and "did not answer" in first.error
    assert '<button type="submit">Retry</button>' in jobs_page(browser).text

    BROKEN["now"] = False
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = browser.post(reverse("benchmark:job-retry", args=[first.pk]), follow=True)
    finally:
        BROKEN["now"] = True

    again = Job.objects.exclude(pk=first.pk).get()
    assert (again.status, again.arguments, again.label, again.link, again.team) == (
        Job.Status.FINISHED, [7], "Flaky 7", "/benchmark/runs/7/", team
    )
    assert again.created_by.username == "ana"
    assert f"“Flaky 7” queued again as job {again.pk}" in response.text
    first.refresh_from_db()
    assert first.status == Job.Status.FAILED  # the failed one stays as it was


def test_another_teams_job_cannot_be_retried(browser):
    theirs = failed_job(make_team())

    response = browser.post(reverse("benchmark:job-retry", args=[theirs.pk]))

    assert response.status_code == 404
    assert Job.objects.count() == 1


def test_retry_is_a_post(browser, team):
    job = failed_job(team)
    assert browser.get(reverse("benchmark:job-retry", args=[job.pk])).status_code == 405
    assert Job.objects.count() == 1


def test_a_superuser_may_retry_any_teams_job(client, django_capture_on_commit_callbacks):
    job = failed_job(make_team())
    client.force_login(make_user(superuser=True))

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("benchmark:job-retry", args=[job.pk]))

    assert response.status_code == 302
    assert Job.objects.count() == 2


def test_only_a_failed_job_whose_task_is_known_can_be_retried(browser, team):
    finished = make_job(team, status=Job.Status.FINISHED, label="Done run")
    unknown = failed_job(team, task="tests.jobs_page.gone", label="Gone run")

    text = jobs_page(browser).text
    refused_finished = browser.post(reverse("benchmark:job-retry", args=[finished.pk]), follow=True).text
    refused_unknown = browser.post(reverse("benchmark:job-retry", args=[unknown.pk]), follow=True).text

    assert "Retry</button>" not in text
    assert "“Done run” cannot be retried: it is finished, not failed." in refused_finished
    assert "“Gone run” cannot be retried: its task is not one this Parley can start again." in refused_unknown
    assert Job.objects.count() == 2


def test_retry_with_the_queue_down_says_so_and_queues_nothing(browser, team, monkeypatch):
    job = failed_job(team)

    def down() -> None:
        raise QueueUnavailable("The task queue (postgres) cannot be reached, so nothing was started: OperationalError.")

    monkeypatch.setattr(queue, "check_queue", down)

    response = browser.post(reverse("benchmark:job-retry", args=[job.pk]), follow=True)

    assert "cannot be reached, so nothing was started: OperationalError." in response.text
    assert Job.objects.count() == 1


# The admin


@pytest.fixture
def admin_client(client):
    client.force_login(make_user(superuser=True))
    return client


def test_the_job_admin_lists_and_searches_and_is_read_only(admin_client, team):
    job = failed_job(team, label="Judge pass", error="RateLimitError: slow down")
    make_job(team, label="Import of profiles.jsonl", status=Job.Status.FINISHED)
    changelist = reverse("admin:benchmark_job_changelist")

    found = admin_client.get(changelist, {"q": "RateLimitError"})
    by_status = admin_client.get(changelist, {"status__exact": "finished"})

    assert "Judge pass" in found.text and "Import of profiles.jsonl" not in found.text
    assert "Import of profiles.jsonl" in by_status.text and "Judge pass" not in by_status.text
    assert admin_client.get(reverse("admin:benchmark_job_add")).status_code == 403
    assert admin_client.get(reverse("admin:benchmark_job_change", args=[job.pk])).status_code == 200
    assert admin_client.get(reverse("admin:benchmark_job_delete", args=[job.pk])).status_code == 403


def test_the_job_admin_costs_the_same_queries_for_more_rows(admin_client, team):
    url = reverse("admin:benchmark_job_changelist")
    failed_job(team)
    with CaptureQueriesContext(connection) as few:
        admin_client.get(url)
    for _ in range(10):
        failed_job(make_team())

    with CaptureQueriesContext(connection) as many:
        admin_client.get(url)

    assert len(many) == len(few)


def test_hueys_dashboard_renders_in_the_admin_with_what_ran(admin_client, team, django_capture_on_commit_callbacks):
    BROKEN["now"] = False
    try:
        with django_capture_on_commit_callbacks(execute=True):
            job = enqueue(flaky, 1, team=team, label="Flaky 1")
    finally:
        BROKEN["now"] = True
    HUEY._stats._flush()  # what its writer thread does every half second

    response = admin_client.get(reverse("admin:hueystats_hueydashboard_changelist"))
    fragment = admin_client.get(reverse("admin:hueystats_dashboard_fragment"))
    events = admin_client.get(reverse("admin:hueystats_dashboard_events"), {"q": job.task_id})

    assert response.status_code == 200 and fragment.status_code == 200 and events.status_code == 200
    assert "flaky" in fragment.text
    assert {"executing", "complete"} <= {event["signal"] for event in events.context["events"]}
    assert f'title="{job.task_id}"' in events.text
    # The refresh comes from Parley's static file: an inline script would be refused by the CSP.
    assert '<script src="/static/hueystats/dashboard.js" type="module"></script>' in response.text
    assert "setInterval" not in response.text
    # Its danger zone asks through that file too: Huey's inline onsubmit= would be refused, and not ask.
    assert "onsubmit" not in response.text
    assert 'data-confirm="Flush queue? This cannot be undone."' in response.text


def test_hueys_dashboard_is_for_superusers_only(client, researcher):
    client.force_login(researcher)
    response = client.get(reverse("admin:hueystats_hueydashboard_changelist"))
    assert response.status_code == 302 and "/admin/login/" in response.url


STATS_PROBE = (
    "import json, django; django.setup(); from django.apps import apps; from huey.contrib.djhuey import HUEY; "
    "stats = getattr(HUEY, '_stats', None); "
    "print(json.dumps({'installed': apps.is_installed('huey.contrib.djhuey.stats'), "
    "'database': stats and stats.db.database}))"
)


def test_hueys_stats_are_kept_in_the_var_directory(tmp_path):
    from tests.test_settings import loaded

    assert Path(HUEY._stats.db.database) == settings.VAR_DIR / "huey-stats.sqlite3"  # this process's recorder
    fresh = loaded(tmp_path, STATS_PROBE)
    assert fresh == {"installed": True, "database": str(tmp_path / "huey-stats.sqlite3")}
    assert (tmp_path / "huey-stats.sqlite3").exists()


def test_hueys_stats_may_be_kept_in_one_database_for_every_machine(tmp_path):
    from tests.test_settings import loaded

    shared = tmp_path / "shared" / "stats.db"
    shared.parent.mkdir()
    fresh = loaded(tmp_path, STATS_PROBE, PARLEY_TASK_STATS_URL=f"sqlite:///{shared}")
    assert fresh == {"installed": True, "database": str(shared)}
    assert not (tmp_path / "huey-stats.sqlite3").exists()


def test_hueys_dashboard_and_its_recorder_can_be_left_out(tmp_path):
    from tests.test_settings import loaded

    assert loaded(tmp_path, STATS_PROBE, PARLEY_TASK_STATS="false") == {"installed": False, "database": None}


# The page's counts and Huey's dashboard on each queue a deployment may name


def real_queue(kind: str, tmp_path: Path) -> tuple:
    """A queue of ``kind`` of its own (its own file, tables or name), and how to clear it away."""
    import huey

    name = f"jobspage-{uuid.uuid4().hex[:8]}"
    if kind == "sqlite":
        return huey.SqliteHuey(name, filename=str(tmp_path / "tasks.sqlite3")), lambda: None
    if kind == "postgres":
        params = connection.settings_dict
        instance = huey.PostgresHuey(name, table_prefix="jobspage_test", dbname=params["NAME"], user=params["USER"],
                                     password=params["PASSWORD"], host=params["HOST"], port=params["PORT"] or None)

        def drop() -> None:
            for table in ("kv", "schedule", "task", "counter"):
                instance.storage.sql(f"drop table if exists jobspage_test_{table}", commit=True)
            instance.storage.close()

        return instance, drop
    instance = huey.RedisHuey(name, url=settings.REDIS_URL)
    return instance, instance.storage.flush_all


# The kinds this session reaches, as the consumer tests take them: every kind in CI, whose session refuses
# to start without PostgreSQL and Redis (tests/conftest.py), so none is ever skipped there.
@pytest.mark.parametrize("kind", available_kinds())
def test_the_counts_and_the_dashboard_read_each_kind_of_queue(kind, tmp_path, monkeypatch):
    from huey.contrib.stats import live_counts, pending_tasks, scheduled_tasks

    instance, clear = real_queue(kind, tmp_path)
    try:
        @instance.task(name="tests.jobs_page.counted")
        def counted(number: int) -> int:
            return number

        counted(1)
        instance.add_schedule(counted.s(2, delay=3600))  # where a consumer puts a task with a later eta
        monkeypatch.setattr(queue, "HUEY", instance)

        state = queue_state_now()
        live = live_counts(instance)

        assert (state.pending, state.scheduled, state.problem) == (1, 1, "")
        assert (live["pending"], live["scheduled"]) == (1, 1)
        assert [task["task"] for task in pending_tasks(instance)] == ["tests.jobs_page.counted"]
        assert [task["task"] for task in scheduled_tasks(instance)] == ["tests.jobs_page.counted"]
    finally:
        clear()


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "redis"])
def test_a_queue_that_is_really_down_is_said_plainly(kind, tmp_path, monkeypatch):
    import huey

    down = {
        "sqlite": lambda: huey.SqliteHuey("down", filename=str(tmp_path / "no-such-directory" / "tasks.sqlite3")),
        "postgres": lambda: huey.PostgresHuey("down", dsn="postgresql://parley@127.0.0.1:9/parley",
                                              create_tables=False, connect_timeout=2),
        "redis": lambda: huey.RedisHuey("down", url="redis://127.0.0.1:9/0"),
    }
    try:
        instance = down[kind]()
    except Exception as error:  # SQLite may refuse at once, creating its tables in a directory that is not there
        assert kind == "sqlite", error
        return
    monkeypatch.setattr(queue, "HUEY", instance)

    state = queue_state_now()

    assert (state.pending, state.scheduled) == (None, None)
    assert state.problem.startswith(f"The task queue ({queue.describe_queue()}) cannot be reached just now (")


def queue_state_now():
    from benchmark.jobs.listing import queue_state

    return queue_state()
