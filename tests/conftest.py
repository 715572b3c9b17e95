"""Shared fixtures. In CI (PARLEY_REQUIRE_BACKENDS=true) a missing PostgreSQL or Redis fails the run."""

import os

import pytest
from django.conf import settings


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("PARLEY_REQUIRE_BACKENDS") != "true":
        return
    engine = settings.DATABASES["default"]["ENGINE"]
    layer = settings.CHANNEL_LAYERS["default"]["BACKEND"]
    problems = []
    if "postgresql" not in engine:
        problems.append(f"database engine is {engine}, not PostgreSQL (set DATABASE_URL)")
    if "channels_redis" not in layer:
        problems.append(f"channel layer is {layer}, not Redis (set REDIS_URL)")
    if problems:
        raise pytest.UsageError("CI needs real backends: " + "; ".join(problems))


pytest_plugins = ["tests.fake_llm", "tests.worlds", "tests.consumers"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A transactional test must also roll back by serialisation: one that does not lets the flush after it
    recreate the content types under new ids, and every later ``serialized_rollback`` test then fails to
    set up (a duplicate ``django_content_type``), far from the test to blame."""
    careless = [
        item.nodeid for item in items
        if (marker := item.get_closest_marker("django_db")) is not None
        and marker.kwargs.get("transaction") and not marker.kwargs.get("serialized_rollback")
    ]
    if careless:
        raise pytest.UsageError(
            "mark transactional tests django_db(transaction=True, serialized_rollback=True): " + ", ".join(careless)
        )


def pytest_report_header(config: pytest.Config) -> str:
    return (
        f"parley backends: database {settings.DATABASES['default']['ENGINE']}, "
        f"channel layer {settings.CHANNEL_LAYERS['default']['BACKEND']}"
    )


@pytest.fixture(autouse=True)
def openai_compatible_models_allowed(settings):
    """The tests' operator lets every team call OpenAI-compatible models, which the fake server answers
    (``PARLEY_ALLOWED_MODELS``); tests of the list set their own."""
    settings.PARLEY_ALLOWED_MODELS = ["openai/"]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Full-strength hashing of the builders' passwords would cost most of each test's time."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def empty_cache():
    """Each test starts with an empty cache: the entry throttle counts there, per address, and every
    test client comes from 127.0.0.1."""
    from django.core.cache import cache

    cache.clear()
