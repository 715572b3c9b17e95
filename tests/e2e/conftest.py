"""End-to-end fixtures: Debian's Chromium, driven by Playwright, against pytest-django's live server.

A missing browser or Playwright fails the tests (run ``make browser`` and ``make install-dev``);
the end-to-end suite is part of the definition of done, so it is never skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.conf import settings
from django.db import connections

if TYPE_CHECKING:
    from playwright.sync_api import Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = settings.BASE_DIR / "var" / "screenshots"


@pytest.fixture
def browser_page(live_server, monkeypatch: pytest.MonkeyPatch) -> Iterator[Page]:
    """A fresh Chromium page whose relative URLs go to the live server; page errors fail the test."""
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM}: run `make browser` (apt-get install chromium).")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.fail("Playwright is not installed: run `make install-dev` (pip install -e '.[dev]').")

    # Playwright's sync API runs an event loop in this thread, which trips Django's check for ORM
    # calls from async code; the test's own ORM calls are synchronous, so allow them here only.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(10_000)
        expect.set_options(timeout=10_000)  # a loaded 2-core CI machine can take more than the default 5 s
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: message.type == "error" and errors.append(message.text))
        try:
            yield page
        finally:
            context.close()
            browser.close()
            # Django keeps connections per context, and Playwright's event loop gives the test a
            # context of its own: close the connection the test's ORM calls opened there, or
            # PostgreSQL refuses to drop the test database at the end of the run.
            connections.close_all()
        assert errors == [], f"the browser reported errors: {errors}"


@pytest.fixture
def screenshot() -> Callable[[Page, str], Path]:
    """Save a full-page screenshot as var/screenshots/<name>.png and return its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def save(page: Page, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return save
