"""The main pages keep to their Content-Security-Policy in a real Chromium: nothing is refused.

Each page is opened with a listener for ``securitypolicyviolation`` events installed before any of
its own scripts run, and the console is watched for Chromium's "Content Security Policy" errors;
both must stay empty while the page loads, runs its scripts and swaps htmx partials (and, on the
chat page, while its websocket connects). The first test shows that the listener does see a
violation, so an empty list means something.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from benchmark.instruments.presets import install_preset
from benchmark.models import ActionType, SimulationRun
from tests.annotator.builders import make_study
from tests.annotator.test_reports import rated_study
from tests.builders import PASSWORD, default_team, make_character, make_episode, make_scenario, make_user
from tests.chat.builders import make_chat_study

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

LISTEN = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.effectiveDirective} refused ${event.blockedURI || "inline"}`);
});
"""


class PolicyWatch:
    """The CSP violations one page reported, through its events and its console."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.console: list[str] = []
        page.add_init_script(LISTEN)
        page.on("console", self._console)

    def _console(self, message) -> None:
        if "Content Security Policy" in message.text:
            self.console.append(message.text)

    def violations(self) -> list[str]:
        return self.page.evaluate("window.__cspViolations || []") + self.console

    def assert_none(self, where: str) -> None:
        header = self.page.evaluate("() => fetch(location.href).then(r => r.headers.get('content-security-policy'))")
        assert header and "script-src 'self'" in header, f"{where}: no Content-Security-Policy header ({header!r})"
        assert self.violations() == [], f"{where}: {self.violations()}"


@contextmanager
def page_of_its_own(browser_page: Page, base_url: str) -> Iterator[Page]:
    """A page outside ``browser_page``'s error check, for what Chromium logs as an error on purpose
    (a refused script, a 404 or 429 response)."""
    context = browser_page.context.browser.new_context(base_url=base_url)
    try:
        yield context.new_page()
    finally:
        context.close()


def log_in(page: Page, user) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".site-account")).to_contain_text(user.username)


def test_the_watch_sees_an_inline_script_the_policy_refuses(browser_page, live_server):
    with page_of_its_own(browser_page, live_server.url) as page:
        watch = PolicyWatch(page)
        page.goto("/")
        page.evaluate("""() => {
            const script = document.createElement("script");
            script.textContent = "window.injected = true";
            document.body.append(script);
        }""")
        page.wait_for_function("window.__cspViolations.length > 0")
        assert page.evaluate("window.injected === undefined")
        assert any(v.startswith("script-src-elem refused inline") for v in watch.violations())


def test_home_and_login_pages_keep_to_the_policy(browser_page):
    page = browser_page
    watch = PolicyWatch(page)
    page.goto("/")
    expect(page.get_by_role("heading", name="Parley", level=1)).to_be_visible()
    watch.assert_none("home, anonymous")
    log_in(page, make_user(staff=True))  # a researcher lands on their studies; the home page shows counts
    page.goto("/")
    expect(page.locator(".stats")).to_be_visible()
    watch.assert_none("home, researcher")


def test_the_annotation_item_page_keeps_to_the_policy_while_it_saves(browser_page):
    page = browser_page
    annotator = make_user(username="ana")
    scenario = make_scenario(roles=[{"character": make_character(first_name="Lena")},
                                    {"character": make_character(first_name="Omar")}])
    turns = [(ActionType.SPEAK, "Hi! I'm throwing a party on Saturday."),
             (ActionType.SPEAK, "Whatever. Just keep it down, I work early.")]
    study = make_study(instrument=install_preset("shrec-spans"), items=[make_episode(scenario=scenario, turns=turns)],
                       annotators=[annotator])
    study.memberships.update(instructions_read_at=timezone.now())
    watch = PolicyWatch(page)
    log_in(page, annotator)

    page.goto(f"/annotate/s/{study.slug}/next/")
    expect(page.locator("[data-span-source] .turn")).to_have_count(2)
    page.locator("#answer-overall_comment").fill("A curt reply to a friendly heads-up.")
    expect(page.locator("#save-status")).to_have_attribute("data-state", "saved")  # an htmx post and swap
    page.evaluate("document.activeElement.blur()")  # out of the text box, so keys are shortcuts
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    watch.assert_none("annotation item page")


def test_the_report_page_keeps_to_the_policy_with_its_figures(browser_page):
    page = browser_page
    researcher = make_user(staff=True, username="rhea")
    study, _, _ = rated_study(title="Barrier pilot", slug="barrier-pilot", created_by=researcher)
    watch = PolicyWatch(page)
    log_in(page, researcher)

    page.goto(f"/annotate/studies/{study.slug}/report/")
    expect(page.locator("figure svg").first).to_be_visible()
    watch.assert_none("report page")


def test_the_run_page_keeps_to_the_policy_while_it_polls(browser_page):
    page = browser_page
    researcher = make_user(staff=True, username="rhea")
    run = SimulationRun.objects.create(team=default_team(), tag="polled", created_by=researcher,
                                       options={"turn_cap": 6}, total=4, status="running",
                                       heartbeat_at=timezone.now())
    watch = PolicyWatch(page)
    log_in(page, researcher)

    with page.expect_response(re.compile(rf"/benchmark/runs/{run.pk}/progress/")):  # one poll swapped in
        page.goto(f"/benchmark/runs/{run.pk}/")
    expect(page.get_by_role("heading", name="Run polled")).to_be_visible()
    watch.assert_none("run page")


def test_the_chat_page_keeps_to_the_policy_and_its_websocket_connects(asgi_page):
    page = asgi_page
    study = make_chat_study(scenarios=1, conditions=("semantic",), slug="csp-chat")
    watch = PolicyWatch(page)

    page.goto(f"/s/{study.slug}/?PROLIFIC_PID=csp-participant&STUDY_ID=s&SESSION_ID=1")
    page.get_by_role("button", name="I agree to take part").click()
    page.get_by_role("button", name="Start the conversation").click()
    expect(page.locator("[data-status]")).to_have_attribute("data-state", "connected")  # connect-src allows ws
    watch.assert_none("chat page")


def test_the_lockout_and_not_found_pages_keep_to_the_policy(browser_page, live_server, settings, screenshot):
    settings.AXES_FAILURE_LIMIT = 2
    user = make_user(username="ana")
    with page_of_its_own(browser_page, live_server.url) as page:
        watch = PolicyWatch(page)
        for password in ["wrong", "still wrong", PASSWORD]:
            page.goto("/accounts/login/")
            page.get_by_label("Username").fill(user.username)
            page.get_by_label("Password").fill(password)
            page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("heading", name="Too many failed log-ins")).to_be_visible()
        expect(page.get_by_role("alert")).to_contain_text("Wait 15 minutes")
        screenshot(page, "lockout")
        watch.assert_none("lockout page")

        assert page.goto("/no-such-page/").status == 404
        expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
        watch.assert_none("not-found page")
