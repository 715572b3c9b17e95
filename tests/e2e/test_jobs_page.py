"""The jobs page and Huey's dashboard in a real Chromium: they refresh themselves within the
Content-Security-Policy, the jobs page stops asking once nothing is at work, and the dashboard
still asks before it flushes (Huey's own inline handler for that is refused by the policy)."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from benchmark.models import Job
from tests.builders import PASSWORD, default_team, make_user
from tests.e2e.test_content_security_policy import PolicyWatch, log_in

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_the_jobs_page_polls_until_its_job_is_done(browser_page):
    page = browser_page
    researcher = make_user(staff=True, username="jo")
    job = Job.objects.create(team=default_team(), task="benchmark.example", task_id=uuid.uuid4().hex,
                             label="Polled run", status=Job.Status.RUNNING)
    watch = PolicyWatch(page)
    log_in(page, researcher)

    with page.expect_response(re.compile(r"/benchmark/jobs/$")):  # one poll swapped in
        page.goto("/benchmark/jobs/")
    expect(page.locator("#job-list .badge")).to_have_text("running")
    Job.objects.filter(pk=job.pk).update(status=Job.Status.FINISHED)

    expect(page.locator("#job-list .badge")).to_have_text("finished")  # the next poll brought it
    expect(page.locator("#job-list")).not_to_have_attribute("hx-trigger", re.compile("every"))
    watch.assert_none("jobs page")


def test_hueys_dashboard_refreshes_within_the_policy(browser_page):
    page = browser_page
    make_user(superuser=True, username="root")
    page.route("**/favicon.ico", lambda route: route.fulfill(status=204))  # the admin's pages name no icon
    watch = PolicyWatch(page)
    page.goto("/admin/login/?next=/admin/hueystats/hueydashboard/")
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    expect(page.get_by_role("heading", name="Huey")).to_be_visible()
    with page.expect_response(re.compile(r"/admin/hueystats/hueydashboard/fragment/$")):  # its five-second refresh
        pass
    expect(page.locator("#hs-content")).to_be_visible()
    watch.assert_none("Huey's dashboard")


def test_hueys_dashboard_asks_before_flushing_the_queue(browser_page):
    page = browser_page
    make_user(superuser=True, username="root")
    page.route("**/favicon.ico", lambda route: route.fulfill(status=204))
    page.goto("/admin/login/?next=/admin/hueystats/hueydashboard/")
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    asked: list[str] = []
    posted: list[str] = []
    page.on("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: request.method == "POST" and posted.append(request.url))

    page.get_by_role("button", name="Flush queue").click()

    expect(page.get_by_role("button", name="Flush queue")).to_be_visible()
    assert asked == ["Flush queue? This cannot be undone."]
    assert posted == []  # dismissed: nothing was sent
