"""Parley settings: every value comes from the environment, with defaults that run a demo.

The embedded default is a SQLite file and an in-memory channel layer under ``var/``; set
``DATABASE_URL`` and ``REDIS_URL`` for PostgreSQL and Redis. The README lists every variable.
"""

import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use true or false).")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    try:
        return int(value) if value else default
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number.") from None


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name, "")
    try:
        return float(value) if value else default
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number.") from None


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


VAR_DIR = Path(os.environ.get("PARLEY_VAR_DIR", BASE_DIR / "var"))
DEBUG = env_bool("DEBUG", True)


def _secret_key() -> str:
    """A real key from the environment, or a development key kept under var/ (DEBUG only)."""
    key = os.environ.get("SECRET_KEY", "")
    if key:
        return key
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "benchmark",
    "annotator",
    "chat",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "config.context_processors.roles",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'parley.sqlite3'}",
        # 0 opens a connection per request or socket call; a deployment serving chats on PostgreSQL
        # should keep them (e.g. 60 s: each chat message makes about 20 queries in 4 calls).
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite takes one writer at a time. A transaction that reads first and writes later (every
    # select_for_update path: assignment, turns, claims) must not start as a reader: two such
    # readers each wait for the other to finish before either can write, and SQLite fails one at
    # once with "database is locked" (a 500) instead of waiting. IMMEDIATE makes every transaction
    # take the write lock as it begins, so racing writers queue for up to ``timeout`` seconds and
    # a whole read-then-write runs as one, as select_for_update does on PostgreSQL. The
    # write-ahead log lets readers (pages, reports) go on while a writer works; with it,
    # synchronous=NORMAL is still safe against corruption and loses at most the last commits on a
    # power cut, never on a crash of Parley itself.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        transaction_mode="IMMEDIATE",
        timeout=20,
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    )
    # Tests get a file, not Django's in-memory default, whose one connection the live server's
    # threads would share: concurrent requests must lock each other out as they do in production.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test_parley.sqlite3")}

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    # Redis Pub/Sub, not channels_redis.core: the core layer queues every message for a server
    # process in one Redis sorted set capped at ``capacity`` (100) and drains it with one
    # BZPOPMIN loop (four round trips a message), so a streamed reply to a few dozen chats fills
    # the queue and further group messages (a ``turn`` among them) are dropped without an error;
    # with redis-py 8 its 5 s blocking read also races the client's 5 s socket timeout and kills
    # the consumer (close code 1011). Pub/Sub pushes each group message to the processes that
    # subscribed, with no queue to overflow (benchmarks/chat_load.py: 0 of 100 chats stalled,
    # against 68 of 100 on the core layer).
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
# WhiteNoise serves static files from daphne itself: straight from the app folders in debug,
# from STATIC_ROOT (``manage.py collectstatic``) otherwise.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
X_FRAME_OPTIONS = "DENY"

# Models for each role, as litellm names ("openai/gpt-4o-mini", "ollama/llama3", ...).
# Empty means the offline scripted model, which needs no key and no network.
PARLEY_MODELS = {
    "agent": os.environ.get("PARLEY_AGENT_MODEL", ""),
    "partner": os.environ.get("PARLEY_PARTNER_MODEL", ""),
    "judge": os.environ.get("PARLEY_JUDGE_MODEL", ""),
    "neutralizer": os.environ.get("PARLEY_NEUTRALIZER_MODEL", ""),
}
# An OpenAI-compatible server (vLLM, Ollama, a proxy) used for every model when set.
PARLEY_LLM_API_BASE = os.environ.get("PARLEY_LLM_API_BASE", "")
PARLEY_LLM_API_KEY = os.environ.get("PARLEY_LLM_API_KEY", "")
PARLEY_LLM_TIMEOUT = env_float("PARLEY_LLM_TIMEOUT", 60.0)
PARLEY_LLM_MAX_RETRIES = env_int("PARLEY_LLM_MAX_RETRIES", 3)
PARLEY_LLM_BACKOFF = env_float("PARLEY_LLM_BACKOFF", 1.0)
PARLEY_JUDGE_RETRIES = env_int("PARLEY_JUDGE_RETRIES", 2)  # whole-evaluation retries after a failed repair
PARLEY_CHAT_SCRIPTED_DELAY = env_float("PARLEY_CHAT_SCRIPTED_DELAY", 0.04)  # seconds between the offline agent's words
PARLEY_REPORT_BACKGROUND_THRESHOLD = env_int("PARLEY_REPORT_BACKGROUND_THRESHOLD", 2000)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
