"""A study's life in a real Chromium: a researcher with no admin access pauses a study, edits k, invites an
annotator by username, closes and reopens it; the invited annotator accepts on their own page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.models import Membership, Study, StudyEvent
from tests.annotator.builders import make_study
from tests.builders import make_researcher, make_team, make_user
from tests.e2e.test_content_security_policy import PolicyWatch, log_in

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_a_researcher_pauses_edits_k_invites_closes_and_reopens_a_study(browser_page, screenshot):
    page = browser_page
    team = make_team(name="Lab", slug="lab")
    researcher = make_researcher(team, username="rosa")
    assert not researcher.is_staff and not researcher.is_superuser
    study = make_study(team=team, title="Barrier study", slug="barrier-study", items=3, overlap=2,
                       annotators=2, created_by=researcher)
    make_user(username="kim")
    watch = PolicyWatch(page)
    log_in(page, researcher)

    page.goto(f"/annotate/studies/{study.slug}/")
    page.get_by_role("button", name="Pause").click()
    expect(page.locator(".study-lifecycle .badge")).to_have_text("paused")

    page.get_by_role("link", name="Settings").click()
    page.get_by_label("Overlap k").fill("3")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator(".messages")).to_contain_text("Overlap k: 2 → 3")
    expect(page.locator(".lead")).to_contain_text("k = 3")

    page.get_by_role("link", name="Annotators and invitations").click()
    page.get_by_label("Username").fill("nobody-here")
    page.get_by_role("button", name="Invite").click()
    expect(page.locator("#field-username")).to_contain_text("No one has the username")
    page.get_by_label("Username").fill("kim")
    page.get_by_role("button", name="Invite").click()
    expect(page.locator("main")).to_contain_text("kim is invited")
    expect(page.get_by_role("heading", name="Invitations not yet accepted")).to_be_visible()
    screenshot(page, "study-pool")

    page.get_by_role("link", name=f"← {study.title}").click()
    page.get_by_role("button", name="Close").click()
    expect(page.locator(".study-lifecycle .badge")).to_have_text("closed")
    page.get_by_role("button", name="Reopen").click()
    expect(page.locator(".study-lifecycle .badge")).to_have_text("open")
    log = page.locator("section[aria-labelledby=log-heading]")
    for action in ("reopen", "close", "invited", "settings"):
        expect(log).to_contain_text(action)
    screenshot(page, "study-dashboard-lifecycle")

    study.refresh_from_db()
    assert (study.phase, study.overlap) == ("open", 3)
    assert list(StudyEvent.objects.filter(study=study).order_by("pk").values_list("action", flat=True)) == [
        "pause", "settings", "invited", "close", "reopen"]
    watch.assert_none("the study's pages")

    page.context.clear_cookies()
    log_in(page, Study.objects.get(pk=study.pk).invitations.get().user)
    page.goto("/annotate/")
    page.get_by_role("button", name="Accept and join").click()
    expect(page.get_by_role("heading", name="Barrier study")).to_be_visible()
    assert Membership.objects.filter(study=study, annotator__username="kim").exists()
