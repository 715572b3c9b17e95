"""A researcher imports Sotopia's agent profiles from the browser: upload, dry run, import, summary.

Served by daphne (``asgi_page``) against the test database; the page queues each step as a task, which the
tests' queue (immediate mode, inherited by daphne) runs once the request commits, and the page polls the
job as it would in use.
"""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import expect

from benchmark.models import Character, ImportJob
from tests.builders import make_user

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

SOTOPIA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "sotopia"
PROFILES = SOTOPIA / "serialized_agent_profiles.jsonl"


def page_url(page) -> str:
    page.goto("/")
    return page.url


def test_researcher_uploads_profiles_sees_the_dry_run_and_imports_them(asgi_page, screenshot):
    page = asgi_page
    signed_in = Client()  # daphne has the default password hashers, not the tests' fast one: log in by session
    signed_in.force_login(make_user(staff=True, username="researcher"))
    cookie = signed_in.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": page_url(page)}])
    page.goto("/")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Import").click()
    expect(page.get_by_role("heading", name="Import episodes", level=1)).to_be_visible()
    page.get_by_label("Files").set_input_files(str(PROFILES))
    screenshot(page, "import-01-form")
    page.get_by_role("button", name="Upload and check").click()

    expect(page).to_have_url(re.compile(r"/benchmark/import/\d+/$"))
    job = page.locator("#import-job")
    expect(job).to_contain_text("Dry run finished: nothing was saved.", timeout=30_000)
    expect(job.locator("dl")).to_contain_text("Would create")
    expect(job.locator("dl")).to_contain_text("40 characters")
    assert Character.objects.count() == 0
    screenshot(page, "import-02-dry-run")

    page.get_by_role("button", name="Import 1 file for real").click()
    expect(job).to_contain_text("Imported 1 file.", timeout=30_000)
    expect(job.locator("dl")).to_contain_text("Created")
    expect(job.locator("dl")).to_contain_text("40 characters")
    expect(page.get_by_role("button", name=re.compile("for real"))).to_have_count(0)
    screenshot(page, "import-03-imported")

    assert Character.objects.filter(team__slug="default").count() == 40
    assert ImportJob.objects.get().status == ImportJob.Status.IMPORTED
