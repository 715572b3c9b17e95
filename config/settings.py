"""Parley settings: every value comes from the environment, with defaults that are safe to deploy.

``DEBUG`` is off unless the environment turns it on (``make demo`` and ``make serve`` do), so a
server started without configuration never shows a debug page to a participant; with ``DEBUG`` off
Parley refuses to start without a strong ``SECRET_KEY``. The embedded default is a SQLite file
and an in-memory channel layer under ``var/``; set ``DATABASE_URL`` and ``REDIS_URL`` for
PostgreSQL and Redis. The README lists every variable.
"""

import os
import re
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF, UNSAFE_INLINE
from django.core.checks.security.base import (
    SECRET_KEY_INSECURE_PREFIX,
    SECRET_KEY_MIN_LENGTH,
    SECRET_KEY_MIN_UNIQUE_CHARACTERS,
)
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


RATE = re.compile(r"^(\d+)/(\d*)(s|sec|second|m|min|minute|h|hour|d|day)s?$")


def env_rate(name: str, default: str) -> str | None:
    """A rate such as "10/hour" or "30/15min" (count / [multiple] unit), in django-ratelimit's
    short form ("10/h"); "off" means no limit."""
    raw = os.environ.get(name, default)
    value = raw.strip().lower().replace(" ", "")
    if value in {"off", "none", ""}:
        return None
    match = RATE.match(value)
    if match is None:
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not a rate: use a count per period, e.g. 10/hour, 30/15min or 100/day (or off)."
        )
    count, multiple, unit = match.groups()
    return f"{int(count)}/{multiple}{unit[0]}"


VAR_DIR = Path(os.environ.get("PARLEY_VAR_DIR", BASE_DIR / "var"))
# Files a task reads or writes for a page (uploads waiting for their import, report bundles): under the
# var directory unless given. With consumers on several machines, a directory every machine mounts.
SHARED_DIR = Path(os.environ["PARLEY_SHARED_DIR"]) if os.environ.get("PARLEY_SHARED_DIR") else None
DEBUG = env_bool("DEBUG", False)


def _keep_files_private() -> None:
    """Every file a Parley process writes is its owner's alone: 0600 files, 0700 directories.

    var/ holds the SQLite database, uploaded transcripts, report bundles, worker logs and the
    development key; other accounts on the machine have no business reading any of it. The umask
    covers every writer at once (as Django's TIME_ZONE sets the process's zone); a var/ made
    readable by an earlier version is closed too, which shuts everything under it.
    """
    os.umask(0o077)
    if VAR_DIR.is_dir() and VAR_DIR.stat().st_uid == os.getuid():
        VAR_DIR.chmod(0o700)


_keep_files_private()

# Placeholders that documentation shows; a deployment that copied one has no secret at all.
EXAMPLE_SECRET_KEYS = frozenset({"change-me-to-50-or-more-random-characters-from-secrets-token-urlsafe"})


def secret_key_weakness(key: str) -> str:
    """Why ``key`` is too weak to sign sessions and links in production, or "" when it will do.

    The rules are Django's own (``manage.py check --deploy``, security.W009), applied at start-up
    instead of as a warning nobody reads, plus the example values this project documents.
    """
    if key in EXAMPLE_SECRET_KEYS:
        return "is an example value from the documentation"
    if key.startswith(SECRET_KEY_INSECURE_PREFIX):
        return f"starts with {SECRET_KEY_INSECURE_PREFIX!r}, the prefix of keys made for development"
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return f"is shorter than {SECRET_KEY_MIN_LENGTH} characters"
    if len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS:
        return f"has fewer than {SECRET_KEY_MIN_UNIQUE_CHARACTERS} different characters"
    return ""


def _secret_key() -> str:
    """A strong key from the environment, or a development key kept under var/ (DEBUG only)."""
    key = os.environ.get("SECRET_KEY", "")
    if key and not DEBUG and (weakness := secret_key_weakness(key)):
        raise ImproperlyConfigured(
            f"SECRET_KEY {weakness}. Set a random one, e.g. the output of "
            "python -c 'import secrets; print(secrets.token_urlsafe(50))'."
        )
    if key:
        return key
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off (or set DEBUG=true to develop).")
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
    path.chmod(0o600)  # a key written by an earlier version may be world-readable
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "daphne",
    "config.admin.ParleyAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "axes",
    "csp",
    # Before Huey's app: its ``run_huey`` command is benchmark's (imports litellm before workers fork).
    "benchmark",
    "huey.contrib.djhuey",
    *(["huey.contrib.djhuey.stats"] if env_bool("PARLEY_TASK_STATS", True) else []),  # Huey's dashboard (HUEY_STATS)
    "annotator",
    "chat",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.errors.NotFoundPageMiddleware",  # a view's 404 is Parley's page, DEBUG or not
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: it turns a lockout into its page
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


PREPARE_THRESHOLD = 5  # psycopg's own default: a statement sent this often on a connection is prepared


def connection_pool(conn_max_age: int) -> dict | None:
    """psycopg's pool options for PostgreSQL (``OPTIONS["pool"]``), or None when ``DATABASE_POOL`` is off.

    Django's documentation for ASGI: persistent connections (``CONN_MAX_AGE``) belong to the thread
    that opened them, and an async server runs its database work in threads that come and go, so
    each would keep a connection of its own; a pool lends one for each request or chat call and
    takes it back at the end, without connecting again. The largest pool covers what one server
    process runs at once: the event loop's thread pool, where ``chat.orm`` runs the chat's database
    calls (``ASGI_THREADS``, or Python's default of cores + 4, at most 32), and a few page requests
    besides. A caller finding every connection lent waits ``DATABASE_POOL_TIMEOUT`` seconds, then
    fails, rather than PostgreSQL refusing a new client. Every process (server, task consumer,
    management command) has its own pool: their largest sizes added up must stay under
    PostgreSQL's ``max_connections``.
    """
    if not env_bool("DATABASE_POOL", True):
        return None
    if conn_max_age:
        # Django refuses both together, at the first query; say so as the process starts instead.
        raise ImproperlyConfigured(
            f"DATABASE_CONN_MAX_AGE={conn_max_age} keeps persistent connections, which the connection pool "
            "(on by default on PostgreSQL) replaces: unset DATABASE_CONN_MAX_AGE, or set DATABASE_POOL=false "
            "to keep persistent connections without the pool."
        )
    threads = env_int("ASGI_THREADS", min(32, (os.cpu_count() or 1) + 4))
    pool = {
        "min_size": env_int("DATABASE_POOL_MIN_SIZE", 2),
        "max_size": env_int("DATABASE_POOL_MAX_SIZE", threads + 4),
        "timeout": env_float("DATABASE_POOL_TIMEOUT", 10.0),
    }
    if not 0 <= pool["min_size"] <= pool["max_size"] or pool["max_size"] < 1:
        raise ImproperlyConfigured(
            f"DATABASE_POOL_MIN_SIZE={pool['min_size']} and DATABASE_POOL_MAX_SIZE={pool['max_size']}: the "
            "pool needs 0 <= min size <= max size, and a max size of at least 1."
        )
    return pool


DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'parley.sqlite3'}",
        # Without the pool (DATABASE_POOL=false, or SQLite), 0 opens a connection per request or chat call.
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    if pool := connection_pool(DATABASES["default"]["CONN_MAX_AGE"]):
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = pool
    # Parameters go to the server apart from the SQL, and a statement a connection has sent
    # PREPARE_THRESHOLD times is prepared there: PostgreSQL then skips parsing and planning it (the
    # chat sends the same few statements for every message; about half of PostgreSQL's CPU a
    # message). Django leaves both off by default for poolers that cannot keep prepared statements
    # (PgBouncer in transaction mode before 1.21): DATABASE_PREPARED_STATEMENTS=false for those.
    if env_bool("DATABASE_PREPARED_STATEMENTS", True):
        DATABASES["default"].setdefault("OPTIONS", {}).update(
            server_side_binding=True, prepare_threshold=PREPARE_THRESHOLD
        )
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
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
    # subscribed, with no queue to overflow (perf/chat_load.py: 0 of 100 chats stalled,
    # against 68 of 100 on the core layer).
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# The cache holds throttle counters (PARLEY_ENTRY_RATE). With REDIS_URL every server process shares
# it; without, it lives in the one process the embedded default runs (each process would count
# on its own). Each server process keeps one pool of Redis connections for it (``config.cache``).
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                    "KEY_PREFIX": "parley", "OPTIONS": {"pool_class": "config.cache.SharedConnectionPool"}}
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "parley"}}

# Sessions live in the database; with Redis they are read through the cache (written to both), so a
# page view or a chat socket opening reads its session without a query. The in-process cache of the
# embedded default is not shared with the task consumer or management commands, so there sessions
# are read from the database alone.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db" if REDIS_URL else "django.contrib.sessions.backends.db"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"  # only a fallback: each log-in lands where its role works (config.views.landing_page)

# Login throttling (django-axes). Its backend refuses a locked-out login before the password is
# checked, so it needs the request: Django's LoginView and admin pass it to authenticate(); tests
# use force_login(), which authenticates nothing. One-use login links skip authenticate() too:
# they prove possession of a mailed secret, not knowledge of a password.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_float("LOGIN_COOLOFF_MINUTES", 15))
# A username at one address: a guesser cannot lock the real user out from elsewhere, nor lock out
# everyone behind one university NAT, and each address gets LIMIT guesses per cool-off at an account.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# Against password spraying (one password tried on many accounts): an address that failed this many
# times within the cool-off, whatever the usernames, is locked out too (config/login_throttle.py); 0: no limit.
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 30)
AXES_HANDLER = "config.login_throttle.ParleyLoginHandler"
AXES_USERNAME_CALLABLE = "config.login_throttle.attempted_username"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "config.views.locked_out"
AXES_CLIENT_IP_CALLABLE = "config.proxies.client_address"
AXES_DISABLE_ACCESS_LOG = True  # keep failed attempts only, not every annotator's log-in address
# Sign-ups through a study's invite link, and password-reset mails asked for, per client address and period.
PARLEY_SIGNUP_RATE = env_rate("PARLEY_SIGNUP_RATE", "5/hour")
PARLEY_PASSWORD_RESET_RATE = env_rate("PARLEY_PASSWORD_RESET_RATE", "5/hour")
# Lifetime of password-reset and one-use login links, in seconds (Django's three days unless set).
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 3 * 24 * 3600)

# E-mail (password resets). With EMAIL_HOST set, mail goes out through that SMTP server; without,
# each mail is printed to the server's console, which is what a development machine wants.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", EMAIL_PORT == 587)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", EMAIL_PORT == 465)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 30)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Parley <parley@localhost>")

# How many reverse proxies in front of daphne append the client's address to X-Forwarded-For
# (config/proxies.py); 0 trusts no header and uses the connection's address.
PARLEY_PROXY_COUNT = env_int("PARLEY_PROXY_COUNT", 0)

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

# Content-Security-Policy (django-csp). Scripts come only from Parley's own static files (htmx is
# vendored, each page's script is a module under static/), so an injected <script> or onclick=
# does not run; a template that truly needs an inline script gives it nonce="{{ request.csp_nonce }}".
# htmx runs without eval (no hx-on, allowEval off in base.html). Styles allow 'unsafe-inline':
# the matplotlib figures drawn inline in the report and results pages style every element with a
# style attribute, and the report's own <style> travels with its standalone file. Inline style
# cannot run code; templates keep their styles in static/css all the same. connect-src 'self'
# covers the chat's same-origin websocket (ws: and wss:) in current browsers.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        # An episode's recording may be referenced by URL (benchmark/episodes/recordings.py): the player
        # loads it from there. Media cannot run code.
        "media-src": [SELF, "https:", "http:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}


def _proxy_ssl_header() -> tuple[str, str] | None:
    """``SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto``: the header a TLS-terminating proxy sets to https.

    Only set it behind such a proxy, which must overwrite the header a client sends: otherwise any
    client could claim its plain-HTTP request came over HTTPS.
    """
    name = os.environ.get("SECURE_PROXY_SSL_HEADER", "").strip()
    if not name:
        return None
    return "HTTP_" + name.upper().replace("-", "_"), "https"


SECURE_PROXY_SSL_HEADER = _proxy_ssl_header()
# Outside debug every plain-HTTP request is sent to HTTPS; SECURE_SSL_REDIRECT=false if the proxy does it.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# HSTS makes browsers refuse plain HTTP to this host for that long: opt in once HTTPS works.
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)

# Models for each role, as litellm names ("openai/gpt-4o-mini", "ollama/llama3", ...).
# Empty means the offline scripted model, which needs no key and no network.
PARLEY_MODELS = {
    "agent": os.environ.get("PARLEY_AGENT_MODEL", ""),
    "partner": os.environ.get("PARLEY_PARTNER_MODEL", ""),
    "judge": os.environ.get("PARLEY_JUDGE_MODEL", ""),
    "neutralizer": os.environ.get("PARLEY_NEUTRALIZER_MODEL", ""),
}
# The models researchers may name (benchmark/agents/allowed_models.py): model names or provider prefixes
# ending in "/", comma-separated; TEAM=ENTRY for one team's slug only. The configured models above and
# the scripted model are always allowed; empty: only those.
PARLEY_ALLOWED_MODELS = env_list("PARLEY_ALLOWED_MODELS", "")
# An OpenAI-compatible server (vLLM, Ollama, a proxy) used for every model when set; the key goes to it only.
PARLEY_LLM_API_BASE = os.environ.get("PARLEY_LLM_API_BASE", "")
PARLEY_LLM_API_KEY = os.environ.get("PARLEY_LLM_API_KEY", "")
PARLEY_LLM_TIMEOUT = env_float("PARLEY_LLM_TIMEOUT", 60.0)
PARLEY_LLM_MAX_RETRIES = env_int("PARLEY_LLM_MAX_RETRIES", 3)
PARLEY_LLM_BACKOFF = env_float("PARLEY_LLM_BACKOFF", 1.0)
PARLEY_JUDGE_RETRIES = env_int("PARLEY_JUDGE_RETRIES", 2)  # whole-evaluation retries after a failed repair
PARLEY_CHAT_SCRIPTED_DELAY = env_float("PARLEY_CHAT_SCRIPTED_DELAY", 0.04)  # seconds between the offline agent's words
# New chat participants one client address may start (IPv6: per /64), and wrong resume codes it may
# try, per period; the study link answers 429 beyond it. The address is REMOTE_ADDR: behind a proxy,
# run daphne with --proxy-headers, or every participant shares the proxy's address.
PARLEY_ENTRY_RATE = env_rate("PARLEY_ENTRY_RATE", "10/hour")
PARLEY_CHAT_MAX_SOCKETS = env_int("PARLEY_CHAT_MAX_SOCKETS", 3)  # chat sockets one participant may hold open
PARLEY_REPORT_BACKGROUND_THRESHOLD = env_int("PARLEY_REPORT_BACKGROUND_THRESHOLD", 2000)
# How long the results and agreement reports stay in the cache at most (they are rebuilt sooner when
# the answers or turns they read change); 0 keeps none.
PARLEY_REPORT_CACHE_SECONDS = env_int("PARLEY_REPORT_CACHE_SECONDS", 600)
# Most bytes one upload on the import page may bring, all its files together; bigger imports go
# through manage.py import_episodes.
PARLEY_IMPORT_MAX_BYTES = env_int("PARLEY_IMPORT_MAX_BYTES", 100 * 1024 * 1024)
# What one team may have at work at once from the web: simulation runs queued or running, and import
# jobs checking or importing (each takes a task consumer's worker while it works).
PARLEY_TEAM_MAX_RUNS = env_int("PARLEY_TEAM_MAX_RUNS", 2)
# A run's chunk whose consumer has not beaten for this long is queued again for another consumer.
PARLEY_RUN_STALE_SECONDS = env_int("PARLEY_RUN_STALE_SECONDS", 30)
PARLEY_TEAM_MAX_IMPORTS = env_int("PARLEY_TEAM_MAX_IMPORTS", 2)
# Episodes' uploaded recordings (audio and video) live under this private root, never under STATIC_ROOT
# and behind no static or media route: only the recording views serve them, to those who may see the
# episode. MEDIA_URL stays unset for the same reason.
MEDIA_ROOT = Path(os.environ.get("PARLEY_MEDIA_ROOT") or VAR_DIR / "media")
# The largest recording a researcher may upload on the episode page, in megabytes.
PARLEY_MAX_RECORDING_MB = env_int("PARLEY_MAX_RECORDING_MB", 500)


def task_queue() -> dict:
    """Huey's settings (read by ``huey.contrib.djhuey``): where the queue lives and how a consumer runs.

    ``PARLEY_TASKS`` names the queue: ``sqlite`` (the embedded default, its own file under the var
    directory, never the application's database file, so a consumer's polling never takes the
    application's write lock), ``postgres`` (tables ``huey_*`` in the ``DATABASE_URL`` database) or
    ``redis`` (``REDIS_URL``). Every web process and consumer of one deployment must name the same
    queue. Tasks run on a consumer (``make worker``), never inline, unless ``PARLEY_TASKS_IMMEDIATE``
    says so (the tests that are not about the queue); Huey's own default, inline under ``DEBUG``,
    would leave ``make demo`` without its consumer's work.
    """
    kind = os.environ.get("PARLEY_TASKS", "sqlite").strip().lower() or "sqlite"
    worker_type = os.environ.get("PARLEY_TASK_WORKER_TYPE", "process").strip().lower()
    if worker_type not in {"process", "thread"}:
        raise ImproperlyConfigured(f"PARLEY_TASK_WORKER_TYPE={worker_type!r}: use process or thread.")
    queue: dict = {
        "name": os.environ.get("PARLEY_TASKS_NAME", "parley"),
        "immediate": env_bool("PARLEY_TASKS_IMMEDIATE", False),
        "utc": True,
        "consumer": {
            "workers": env_int("PARLEY_TASK_WORKERS", 2),
            "worker_type": worker_type,
            "check_worker_health": True,
            "health_check_interval": 1,
            "scheduler_interval": 1,
            "initial_delay": 0.05,
            "backoff": 1.15,
            "max_delay": 0.5,
        },
    }
    if kind == "sqlite":
        VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
        # PARLEY_TASKS_FILE: a queue file shared by consumers whose var directories differ (one machine).
        filename = os.environ.get("PARLEY_TASKS_FILE") or str(VAR_DIR / "tasks.sqlite3")
        queue.update(huey_class="huey.SqliteHuey", filename=filename, timeout=20)
    elif kind == "postgres":
        url = os.environ.get("PARLEY_TASKS_URL") or os.environ.get("DATABASE_URL", "")
        if not url.startswith(("postgres://", "postgresql://")):
            raise ImproperlyConfigured(
                "PARLEY_TASKS=postgres keeps the queue in PostgreSQL: set DATABASE_URL (or PARLEY_TASKS_URL) "
                "to a postgres:// URL."
            )
        # The tables are made by ``migrate`` (benchmark.apps), not by every process that starts.
        queue.update(huey_class="huey.PostgresHuey", dsn=url, create_tables=False)
    elif kind == "redis":
        url = os.environ.get("PARLEY_TASKS_URL") or os.environ.get("REDIS_URL", "")
        if not url.startswith(("redis://", "rediss://", "unix://")):
            raise ImproperlyConfigured(
                "PARLEY_TASKS=redis keeps the queue in Redis: set REDIS_URL (or PARLEY_TASKS_URL) to a redis:// URL."
            )
        queue.update(huey_class="huey.PriorityRedisHuey", url=url)
    else:
        raise ImproperlyConfigured(f"PARLEY_TASKS={kind!r}: use sqlite (the default), postgres or redis.")
    return queue


HUEY = task_queue()
PARLEY_TASKS = HUEY["huey_class"].removeprefix("huey.").removesuffix("Huey").removeprefix("Priority").lower()


def task_stats() -> dict:
    """Where Huey's dashboard in the admin (``huey.contrib.djhuey.stats``) keeps what it records.

    The dashboard's recorder starts in every process (web and consumer) and writes each task's
    signals to a SQLite file of its own; left alone, that file is ``huey-stats.db`` in the code's
    directory. Here it lives in the var directory beside the queue's. A file is one machine's: with
    consumers on several machines, ``PARLEY_TASK_STATS_URL`` (a peewee database URL, e.g.
    ``psycopg3://user@host/db``) gathers every machine's events in one database. The queue's own
    counts (pending, scheduled) on the dashboard and on the jobs page come from the queue itself and
    are always whole. ``PARLEY_TASK_STATS=false`` leaves the dashboard and its recorder out.
    """
    url = os.environ.get("PARLEY_TASK_STATS_URL", "").strip()
    if url:
        return {"database": url}
    VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    return {"filename": str(VAR_DIR / "huey-stats.sqlite3")}


HUEY_STATS = task_stats()

LOG_LEVEL = os.environ.get("LOG_LEVEL", "WARNING")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"refusals_in_one_line": {"()": "config.errors.RefusalsInOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Django's own console handler (DEBUG only) printed each of its entries a second time beside
        # the root's; its entries now reach the log once, through the root.
        "django": {"handlers": [], "level": LOG_LEVEL},
        "django.request": {"filters": ["refusals_in_one_line"]},
        # What the consumer's periodic upkeep did, one line per run (chat.tasks, annotator.tasks,
        # benchmark.jobs.tasks), shown beside the queue's own lines in the consumer's log.
        "parley.upkeep": {"level": os.environ.get("PARLEY_UPKEEP_LOG_LEVEL", "INFO")},
    },
}
