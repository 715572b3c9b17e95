"""Tests that need a real backend (PostgreSQL, Redis): they fail wherever backends are required (CI sets
``PARLEY_REQUIRE_BACKENDS=true``), and are skipped, saying what to set, only in a local run without it."""

import os

import pytest


def require_backend(ready: bool, missing: str) -> None:
    """Go on when ``ready``; else fail in CI, skip elsewhere. ``missing``: what is not there and how to set it."""
    if ready:
        return
    if os.environ.get("PARLEY_REQUIRE_BACKENDS") == "true":
        pytest.fail(f"{missing}: this test needs it wherever backends are required")
    pytest.skip(missing)
