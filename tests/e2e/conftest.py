"""End-to-end fixtures: Debian's Chromium, driven by Playwright, against pytest-django's live server.

A missing browser or Playwright fails the tests (run ``make browser`` and ``make install-dev``);
the end-to-end suite is part of the definition of done, so it is never skipped.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
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
    yield from _chromium_page(live_server.url, monkeypatch)


@pytest.fixture
def asgi_server(transactional_db, django_db_serialized_rollback) -> Iterator[str]:
    """The whole ASGI application (pages and websockets) served by daphne in a subprocess.

    pytest-django's live server speaks only WSGI, so the chat needs a real ASGI server. It runs
    against the test database (the test's data must be committed: this fixture implies
    ``transactional_db``) and the same channel layer settings as the run (Redis in CI). The
    offline agent types slowly (0.25 s a word) so a test can act while a reply streams.
    Yields the base URL; the server's output goes to var/e2e-daphne.log.
    """
    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3"):
        url = f"sqlite:///{database['NAME']}"
    else:
        user, host, db_port = database["USER"] or "postgres", database["HOST"] or "127.0.0.1", database["PORT"] or 5432
        url = f"postgres://{user}@{host}:{db_port}/{database['NAME']}"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # No limit on new chat participants per address: every browser here is 127.0.0.1, and with Redis
    # the counters would outlive the run (tests/chat/test_throttle.py tests the limit).
    env = {**os.environ, "DATABASE_URL": url, "PARLEY_CHAT_SCRIPTED_DELAY": "0.25", "PARLEY_ENTRY_RATE": "off"}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    log = open(settings.BASE_DIR / "var" / "e2e-daphne.log", "ab")  # noqa: SIM115 (closed below)
    server = subprocess.Popen(
        [sys.executable, "-m", "config.serve", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
        cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            if server.poll() is not None:
                pytest.fail(f"daphne exited with {server.returncode}; see var/e2e-daphne.log")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("daphne did not start listening within 30 s; see var/e2e-daphne.log")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
        connections.close_all()


@pytest.fixture
def asgi_page(asgi_server: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Page]:
    """A fresh Chromium page whose relative URLs go to the daphne server of ``asgi_server``."""
    yield from _chromium_page(asgi_server, monkeypatch)


def _chromium_page(base_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Page]:
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
        context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
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
