"""Settings come from the environment: the database, the channel layer, the secret key, production safety."""

import asyncio
import contextvars
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.cache import caches
from django.db import connection

from tests.backends import require_backend

ROOT = Path(__file__).resolve().parents[1]
PROBE = (
    "import json, django; from django.conf import settings as s; "
    "print(json.dumps({'db': s.DATABASES['default'], 'layer': s.CHANNEL_LAYERS['default'], "
    "'key': s.SECRET_KEY, 'hosts': s.ALLOWED_HOSTS, 'debug': s.DEBUG, "
    "'proxy_ssl_header': s.SECURE_PROXY_SSL_HEADER, 'login_limit': s.AXES_FAILURE_LIMIT, "
    "'login_cooloff': s.AXES_COOLOFF_TIME.total_seconds(), 'proxies': s.PARLEY_PROXY_COUNT, "
    "'address_limit': s.LOGIN_ADDRESS_FAILURE_LIMIT}, default=str))"
)
POSTGRES = "postgres://alice@db.example:5433/parley"  # never connected to: settings only
PASSED_THROUGH = ("PATH", "HOME", "LANG", "SYSTEMROOT")
STRONG_KEY = "q8Vt-2mZ_pL4xR7nW1cY9bK3sH6dF0gJ5aE8uT2iO4yN7vB1xQ3"
# The production environment the report documents: HTTPS behind a proxy that sets X-Forwarded-Proto.
PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": STRONG_KEY,
    "ALLOWED_HOSTS": "parley.example",
    "CSRF_TRUSTED_ORIGINS": "https://parley.example",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
}


def clean_environment(tmp_path: Path, **env: str) -> dict[str, str]:
    """Only what a process needs to run, the settings module and a var/ of its own, then ``env``."""
    clean = {k: v for k, v in os.environ.items() if k in PASSED_THROUGH}
    return clean | {"DJANGO_SETTINGS_MODULE": "config.settings", "PARLEY_VAR_DIR": str(tmp_path)} | env


def load_settings(tmp_path: Path, probe: str = PROBE, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=clean_environment(tmp_path, **env), capture_output=True,
        text=True, timeout=60,
    )


def loaded(tmp_path: Path, probe: str = PROBE, **env: str) -> dict:
    """The settings a process gets from ``env``; in debug unless ``env`` says otherwise."""
    result = load_settings(tmp_path, probe, **{"DEBUG": "true"} | env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_default_database_is_sqlite_under_var(tmp_path):
    db = loaded(tmp_path)["db"]
    assert db["ENGINE"] == "django.db.backends.sqlite3"
    assert db["NAME"] == str(tmp_path / "parley.sqlite3")


def test_the_embedded_database_writes_ahead_and_takes_the_write_lock_as_a_transaction_begins(tmp_path):
    probe = (
        "import django, json; django.setup(); from django.db import connection as c; c.ensure_connection(); "
        "cursor = c.cursor(); print(json.dumps({'journal': cursor.execute('PRAGMA journal_mode').fetchone()[0], "
        "'synchronous': cursor.execute('PRAGMA synchronous').fetchone()[0], 'mode': c.transaction_mode, "
        "'options': c.settings_dict['OPTIONS']}))"
    )

    opened = loaded(tmp_path, probe)

    assert (opened["journal"], opened["synchronous"], opened["mode"]) == ("wal", 1, "IMMEDIATE")  # 1: NORMAL
    assert opened["options"]["timeout"] == 20  # seconds a writer waits for the lock before giving up


def test_database_url_selects_postgresql(tmp_path):
    db = loaded(tmp_path, DATABASE_URL=POSTGRES)["db"]
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["NAME"], db["USER"], db["HOST"], db["PORT"]) == ("parley", "alice", "db.example", 5433)
    assert "transaction_mode" not in db.get("OPTIONS", {})  # SQLite's options stay SQLite's


def test_postgresql_connections_come_from_a_pool_sized_for_one_server_process(tmp_path):
    db = loaded(tmp_path, DATABASE_URL=POSTGRES, ASGI_THREADS="12")["db"]
    assert db["CONN_MAX_AGE"] == 0  # Django refuses persistent connections beside a pool
    assert db["OPTIONS"]["pool"] == {"min_size": 2, "max_size": 16, "timeout": 10.0}  # the server's 12 threads + 4


def test_the_pools_sizes_come_from_the_environment(tmp_path):
    db = loaded(tmp_path, DATABASE_URL=POSTGRES, DATABASE_POOL_MIN_SIZE="0", DATABASE_POOL_MAX_SIZE="40",
                DATABASE_POOL_TIMEOUT="2.5")["db"]
    assert db["OPTIONS"]["pool"] == {"min_size": 0, "max_size": 40, "timeout": 2.5}


def test_without_the_pool_connections_may_be_kept_per_thread(tmp_path):
    db = loaded(tmp_path, DATABASE_URL=POSTGRES, DATABASE_POOL="false", DATABASE_CONN_MAX_AGE="60")["db"]
    assert "pool" not in db.get("OPTIONS", {})
    assert db["CONN_MAX_AGE"] == 60


def test_persistent_connections_beside_the_pool_are_refused_as_the_process_starts(tmp_path):
    result = load_settings(tmp_path, DEBUG="true", DATABASE_URL=POSTGRES, DATABASE_CONN_MAX_AGE="60")
    assert result.returncode != 0
    assert "DATABASE_CONN_MAX_AGE=60 keeps persistent connections" in result.stderr
    assert "set DATABASE_POOL=false" in result.stderr


def test_a_pool_that_cannot_hold_a_connection_is_refused(tmp_path):
    result = load_settings(tmp_path, DEBUG="true", DATABASE_URL=POSTGRES, DATABASE_POOL_MIN_SIZE="8",
                           DATABASE_POOL_MAX_SIZE="4")
    assert result.returncode != 0
    assert "DATABASE_POOL_MIN_SIZE=8 and DATABASE_POOL_MAX_SIZE=4" in result.stderr


def test_postgresql_binds_parameters_on_the_server_and_prepares_repeated_statements(tmp_path):
    db = loaded(tmp_path, DATABASE_URL=POSTGRES)["db"]
    assert (db["OPTIONS"]["server_side_binding"], db["OPTIONS"]["prepare_threshold"]) == (True, 5)
    kept_off = loaded(tmp_path, DATABASE_URL=POSTGRES, DATABASE_PREPARED_STATEMENTS="false")["db"]
    assert "server_side_binding" not in kept_off["OPTIONS"] and "prepare_threshold" not in kept_off["OPTIONS"]
    assert "server_side_binding" not in loaded(tmp_path)["db"]["OPTIONS"]  # SQLite


@pytest.mark.django_db
def test_the_configured_postgresql_prepares_what_a_connection_sends_often():
    """In CI the database is PostgreSQL: a statement sent often on one connection is prepared there."""
    require_backend(connection.vendor == "postgresql", "DATABASE_URL does not name a PostgreSQL database")
    with connection.cursor() as cursor:
        for _ in range(6):
            cursor.execute("SELECT %s::int + 1", [41])
            assert cursor.fetchone() == (42,)
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", ["%$1::int + 1%"])
        assert cursor.fetchone() == (1,)


def test_the_embedded_database_has_no_pool(tmp_path):
    db = loaded(tmp_path, DATABASE_POOL_MAX_SIZE="40")["db"]
    assert "pool" not in db["OPTIONS"]  # SQLite keeps its one writer at a time


def test_no_redis_url_means_in_memory_layer(tmp_path):
    assert loaded(tmp_path)["layer"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"


def test_redis_url_selects_redis_layer(tmp_path):
    layer = loaded(tmp_path, REDIS_URL="redis://127.0.0.1:6379/2")["layer"]
    assert layer["BACKEND"] == "channels_redis.pubsub.RedisPubSubChannelLayer"
    assert layer["CONFIG"]["hosts"] == ["redis://127.0.0.1:6379/2"]


SESSIONS = (
    "import django, json; django.setup(); from django.conf import settings as s; print(json.dumps(s.SESSION_ENGINE))"
)


def test_sessions_are_read_through_the_cache_only_when_redis_shares_it(tmp_path):
    """With Redis every process shares the cache, so sessions are read through it (``cached_db``); the embedded
    default's in-process cache is not shared with the consumer or management commands, so they stay in the
    database alone."""
    assert loaded(tmp_path, SESSIONS) == "django.contrib.sessions.backends.db"
    assert loaded(tmp_path, SESSIONS, REDIS_URL="redis://127.0.0.1:6379/2") == (
        "django.contrib.sessions.backends.cached_db"
    )


def test_development_key_is_kept_under_var(tmp_path):
    first = loaded(tmp_path)["key"]
    assert first == loaded(tmp_path)["key"]
    assert (tmp_path / "secret_key").read_text().strip() == first


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_var_and_the_development_key_are_private(tmp_path):
    """var/ (database, uploads, bundles, logs, key) was world-readable: files 0644, directories 0755."""
    var = tmp_path / "var"
    loaded(var)
    assert (mode(var), mode(var / "secret_key")) == (0o700, 0o600)

    var.chmod(0o755)
    (var / "secret_key").chmod(0o644)  # as an earlier version left them
    loaded(var)
    assert (mode(var), mode(var / "secret_key")) == (0o700, 0o600)


def test_files_and_directories_a_parley_process_writes_are_private(tmp_path):
    probe = (
        "import django, os, pathlib; django.setup(); from django.conf import settings; "
        "folder = pathlib.Path(settings.VAR_DIR) / 'reports' / 'new'; folder.mkdir(parents=True); "
        "(folder / 'bundle.zip').write_bytes(b'PK'); print('{}')"
    )
    loaded(tmp_path, probe)
    assert mode(tmp_path / "reports" / "new") == 0o700
    assert mode(tmp_path / "reports" / "new" / "bundle.zip") == 0o600


def test_refuses_to_start_without_key_when_debug_is_off(tmp_path):
    result = load_settings(tmp_path, DEBUG="false")
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_debug_is_off_unless_asked_for(tmp_path):
    """Without DEBUG in the environment Parley runs as in production, so it wants a real key."""
    result = load_settings(tmp_path)
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr
    assert loaded(tmp_path, DEBUG="", SECRET_KEY=STRONG_KEY)["debug"] is False


def test_debug_off_uses_the_given_key_and_hosts(tmp_path):
    values = loaded(tmp_path, DEBUG="false", SECRET_KEY=STRONG_KEY, ALLOWED_HOSTS="parley.example, x.example")
    assert values["key"] == STRONG_KEY
    assert values["hosts"] == ["parley.example", "x.example"]


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("short-but-varied-1234", "shorter than 50 characters"),
        ("k" * 60, "fewer than 5 different characters"),
        ("django-insecure-" + STRONG_KEY, "'django-insecure-'"),
        ("change-me-to-50-or-more-random-characters-from-secrets-token-urlsafe", "an example value"),
    ],
    ids=["short", "repetitive", "django-insecure", "example"],
)
def test_a_weak_key_is_refused_when_debug_is_off(tmp_path, key, reason):
    result = load_settings(tmp_path, DEBUG="false", SECRET_KEY=key, ALLOWED_HOSTS="parley.example")
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr and reason in result.stderr
    assert key not in result.stderr  # the message names the problem, never the key


def test_a_weak_key_is_accepted_in_debug(tmp_path):
    assert loaded(tmp_path, DEBUG="true", SECRET_KEY="dev")["key"] == "dev"


def test_check_deploy_is_clean_in_the_production_environment(tmp_path):
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=clean_environment(tmp_path, **PRODUCTION), capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr


def test_the_proxy_header_says_which_requests_came_over_https(tmp_path):
    assert loaded(tmp_path, **PRODUCTION)["proxy_ssl_header"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert loaded(tmp_path)["proxy_ssl_header"] is None


def test_login_throttle_and_proxies_come_from_the_environment(tmp_path):
    defaults = loaded(tmp_path)
    assert (defaults["login_limit"], defaults["login_cooloff"], defaults["proxies"]) == (5, 900, 0)
    assert defaults["address_limit"] == 30
    values = loaded(tmp_path, LOGIN_FAILURE_LIMIT="10", LOGIN_COOLOFF_MINUTES="2.5", PARLEY_PROXY_COUNT="1",
                    LOGIN_ADDRESS_FAILURE_LIMIT="100")
    assert (values["login_limit"], values["login_cooloff"], values["proxies"]) == (10, 150, 1)
    assert values["address_limit"] == 100


def test_unreadable_boolean_is_named(tmp_path):
    result = load_settings(tmp_path, DEBUG="maybe")
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


@pytest.mark.django_db
def test_configured_database_answers():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
    if os.environ.get("PARLEY_REQUIRE_BACKENDS") == "true":
        assert connection.vendor == "postgresql"


def test_configured_channel_layer_round_trip():
    """A message sent through the configured layer comes back (Redis in CI, memory otherwise)."""
    layer = get_channel_layer()

    async def round_trip() -> dict:
        channel = await layer.new_channel()
        await layer.send(channel, {"type": "ping", "text": "hello"})
        return await asyncio.wait_for(layer.receive(channel), timeout=10)  # fail, never hang, if it is lost

    assert async_to_sync(round_trip)() == {"type": "ping", "text": "hello"}
    if os.environ.get("PARLEY_REQUIRE_BACKENDS") == "true":
        assert "channels_redis" in settings.CHANNEL_LAYERS["default"]["BACKEND"]


def test_every_request_context_shares_one_redis_pool():
    """Django makes a cache object per request context under ASGI (every page request, every chat socket);
    they all use the process's one pool (``config.cache``), so none opens a Redis connection of its own.
    In CI the cache is Redis (``pytest_sessionstart`` refuses to run without it)."""
    require_backend("redis" in settings.CACHES["default"]["BACKEND"], "REDIS_URL is not set: the cache is in process")

    def pool():
        cache = caches["default"]
        return cache, cache._cache._get_connection_pool(write=True)

    (first_cache, first_pool), (second_cache, second_pool) = (contextvars.Context().run(pool) for _ in range(2))
    assert first_cache is not second_cache  # what Django does: one object per context
    assert first_pool is second_pool


MAIL_PROBE = (
    "import json; from django.conf import settings as s; print(json.dumps({'backend': s.EMAIL_BACKEND, "
    "'host': s.EMAIL_HOST, 'port': s.EMAIL_PORT, 'tls': s.EMAIL_USE_TLS, 'ssl': s.EMAIL_USE_SSL, "
    "'user': s.EMAIL_HOST_USER, 'sender': s.DEFAULT_FROM_EMAIL}))"
)


def test_mail_is_printed_without_a_mail_server(tmp_path):
    assert loaded(tmp_path, MAIL_PROBE)["backend"] == "django.core.mail.backends.console.EmailBackend"


def test_the_mail_server_comes_from_the_environment(tmp_path):
    mail = loaded(tmp_path, MAIL_PROBE, EMAIL_HOST="smtp.example.org", EMAIL_HOST_USER="parley",
                  DEFAULT_FROM_EMAIL="Parley <noreply@example.org>")
    assert mail == {"backend": "django.core.mail.backends.smtp.EmailBackend", "host": "smtp.example.org",
                    "port": 587, "tls": True, "ssl": False, "user": "parley",
                    "sender": "Parley <noreply@example.org>"}
    assert loaded(tmp_path, MAIL_PROBE, EMAIL_HOST="smtp.example.org", EMAIL_PORT="465")["ssl"] is True
