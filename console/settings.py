"""Settings, all from the environment (django-environ); `.env.example` lists every variable.

One piece: every setting of the project is read here, each room's in a block of its own headed
by a comment, so that this file and `.env.example` can be read side by side.

With no DATABASE_URL / REDIS_URL, development uses the embedded PostgreSQL and Redis that
`python -m console.devservers start` (run by `make run` and `make test`) keeps under ./var/ and
describes in var/embedded.env.
"""

from __future__ import annotations

import base64
import ipaddress
import os
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
if (BASE_DIR / ".env").is_file():
    env.read_env(BASE_DIR / ".env")
# Written by console.devservers; read only for what the environment does not set.
if (VAR_DIR / "embedded.env").is_file():
    env.read_env(VAR_DIR / "embedded.env", overwrite=False)

# "production" refuses to start without real secrets and turns on the HTTPS settings;
# "development" (the default, also used by the tests) makes do with local ones.
ENVIRONMENT = env.str("ENVIRONMENT", default="development")
IS_PRODUCTION = ENVIRONMENT == "production"
DEBUG = env.bool("DEBUG", default=False)

if IS_PRODUCTION and not env.str("SECRET_KEY", default=""):
    raise ImproperlyConfigured(
        "SECRET_KEY is not set. Production (ENVIRONMENT=production) refuses to start without "
        "one; generate one with `python -c 'import secrets; print(secrets.token_urlsafe(50))'`."
    )
SECRET_KEY = env.str("SECRET_KEY", default="dev-only-insecure-key-do-not-use-in-production")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    # The Django admin, opened by the admin role without a staff flag (console/people/).
    "console.people.admin_apps.ConsoleAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "guardian",
    "conversations",
    "audit",
    "retention",
    "console",
    "csp",
    # Login throttling: failed sign-ins counted in the cache (AXES_* below).
    "axes",
    # SCIM 2.0 provisioning at /scim/v2/ (console/people/scim/).
    "django_scim",
]

MIDDLEWARE = [
    # First: /healthz, /readyz and /metrics (answered before the host and HTTPS checks, for
    # probes and scrapers that address the process directly), request ids, request metrics,
    # replica reads for the reading pages (console/ops/middleware.py).
    "console.ops.middleware.OpsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # A NUL in the path or a query string is a 400 before any view (console/hardening.py).
    "console.hardening.HostileInputMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # request.htmx: a partial update asked for by the console's pages (static/console/vendor/).
    "django_htmx.middleware.HtmxMiddleware",
    # Each page's times in the user's zone: their setting, else their browser's.
    "console.preferences.TimeZoneMiddleware",
    # Cache-Control: no-store, private on every signed-in page and every API answer.
    "console.hardening.NoStoreMiddleware",
    # The session's 8 hours slide with use (SESSION_RENEW_SECONDS).
    "console.hardening.SlidingSessionMiddleware",
    # Login throttling (last, as django-axes asks): a locked-out sign-in gets the lock-out page.
    "axes.middleware.AxesMiddleware",
]

# Content-Security-Policy: everything from this origin, no inline script, no third party.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        # The admin and the API docs page set a few inline styles.
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

ROOT_URLCONF = "console.urls"
WSGI_APPLICATION = "console.wsgi.application"

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
                "console.context_processors.nav",
            ],
        },
    },
    {
        # The long pages' repeated parts (console/jinja.py), placed by {% jinja %}.
        "NAME": "jinja2",
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "templates" / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "console.jinja.environment"},
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/console")
}
# The wrapped per-conversation data keys live in a database of their own, so that a backup of the
# main database holds only ciphertext. Default: a second database on the same server.
if env.str("KEYS_DATABASE_URL", default=""):
    DATABASES["keys"] = env.db("KEYS_DATABASE_URL")
else:
    DATABASES["keys"] = {**DATABASES["default"], "NAME": f"{DATABASES['default']['NAME']}_keys"}
# Under ASGI (console/asgi.py sets DATABASE_POOL) each request's sync code runs in a thread of its
# own, so a persistent connection per thread would pile up until PostgreSQL refuses clients: the
# web process takes connections from a pool instead (psycopg_pool, DATABASE_POOL_SIZE each
# database), and returns them at each request's end.
DATABASE_POOL = env.bool("DATABASE_POOL", default=False)
DATABASE_POOL_SIZE = env.int("DATABASE_POOL_SIZE", default=8)
for _db in DATABASES.values():
    _db["ATOMIC_REQUESTS"] = False
    if DATABASE_POOL:
        _db["CONN_MAX_AGE"] = 0
        _db.setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": DATABASE_POOL_SIZE}
    else:
        _db["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
        _db["CONN_HEALTH_CHECKS"] = True
# Replicas first (reading pages on a fresh replica, never a data key), then the keys database.
DATABASE_ROUTERS = [
    "conversations.replicas.ReplicaRouter",
    "conversations.keystore.routers.KeysRouter",
]

REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:6379/0")
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default="console"),
    }
}

# AUTHENTICATION_BACKENDS: in the People block at the end (django-axes' ThrottledLoginBackend
# first: it refuses a sign-in while its username and address are locked out).
ANONYMOUS_USER_NAME = None  # guardian: no anonymous user object; anonymous sees nothing

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.path("STATIC_ROOT", default=VAR_DIR / "static")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["conversations.api.auth.ServiceTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["conversations.api.auth.TokenScope"],
    "DEFAULT_PARSER_CLASSES": ["conversations.api.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "conversations.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Support console API",
    "DESCRIPTION": "Ingest provider exchanges, replay conversations byte for byte, record events.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Ingest: the largest body accepted (413 above it). Provider requests carry the whole history.
INGEST_MAX_BODY_BYTES = env.int("INGEST_MAX_BODY_BYTES", default=8 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = INGEST_MAX_BODY_BYTES + 1024
# Live conversations (conversations/live/): a stream with no chunk for this long is closed; the
# longest chunk accepted; how many events a conversation keeps for reconnecting viewers; the
# prefix of every Redis key and channel of the live streams.
LIVE_IDLE_SECONDS = env.int("LIVE_IDLE_SECONDS", default=120)
LIVE_MAX_CHUNK_CHARS = env.int("LIVE_MAX_CHUNK_CHARS", default=256 * 1024)
LIVE_EVENTS_KEPT = env.int("LIVE_EVENTS_KEPT", default=5000)
LIVE_KEY_PREFIX = env.str("CACHE_KEY_PREFIX", default="console") + ":live"
# Live bounds (issue 29): the characters of stream one exchange may keep unread in Redis (an
# event not yet complete, chunks that came early, text held back), the exchanges one
# conversation may stream at once, and the live streams one signed-in session may hold open.
LIVE_MAX_STATE_CHARS = env.int("LIVE_MAX_STATE_CHARS", default=4 * 1024 * 1024)
LIVE_MAX_OPEN_EXCHANGES = env.int("LIVE_MAX_OPEN_EXCHANGES", default=8)
LIVE_MAX_STREAMS_PER_SESSION = env.int("LIVE_MAX_STREAMS_PER_SESSION", default=6)

# The agent's workspace: where a conversation's ticket reference (its exchanges'
# ``labels.ticket``) links to, with {ticket} for the reference (URL-quoted). Empty: not linked.
TICKET_URL_TEMPLATE = env.str("TICKET_URL_TEMPLATE", default="")

RETENTION_DEFAULT_DAYS = env.int("RETENTION_DEFAULT_DAYS", default=365)
CLOCK_INTERVAL_SECONDS = env.int("CLOCK_INTERVAL_SECONDS", default=60)
# Master keys (base64, 32 bytes each), newest first: the newest wraps new data keys, the others
# still unwrap old ones until `manage.py rewrap_keys` has moved every data key to the newest.
FIELD_ENCRYPTION_KEYS = env.list("FIELD_ENCRYPTION_KEYS", default=[])
if not FIELD_ENCRYPTION_KEYS:
    if IS_PRODUCTION:
        raise ImproperlyConfigured(
            "FIELD_ENCRYPTION_KEYS is not set. Production refuses to start without a master key: "
            "every stored message is encrypted under it. Generate one with `python -c 'import "
            "base64, os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())'` and keep it "
            "out of the database backups."
        )
    # Development: one key generated once into ./var/, never committed.
    _dev_key = VAR_DIR / "field-encryption.key"
    if not _dev_key.exists():
        # Written aside then linked into place: web, worker and beat may start at once, and
        # exactly one key must win.
        VAR_DIR.mkdir(exist_ok=True)
        _tmp = VAR_DIR / f".field-encryption.key.{os.getpid()}"
        _tmp.write_text(base64.urlsafe_b64encode(os.urandom(32)).decode() + "\n")
        _tmp.chmod(0o600)
        try:
            os.link(_tmp, _dev_key)
        except FileExistsError:
            pass
        finally:
            _tmp.unlink()
    FIELD_ENCRYPTION_KEYS = [_dev_key.read_text().strip()]

# The key of the audit log's keyed hashes of customer ids and search queries. Default: derived
# from SECRET_KEY (rotating SECRET_KEY then changes the hashes of future rows).
AUDIT_HMAC_KEY = env.str("AUDIT_HMAC_KEY", default="")
# The keys that sign the audit log's seal digests, newest first (the newest signs; every one
# still verifies the digests it signed). Default: one derived from SECRET_KEY, so production
# should set its own and keep retired ones in the list.
AUDIT_DIGEST_KEYS = env.list("AUDIT_DIGEST_KEYS", default=[])
# The sealer's beat interval (seconds), and how many intervals a committed row may stay unsealed
# before verify_audit reports it.
AUDIT_SEAL_INTERVAL_SECONDS = env.float("AUDIT_SEAL_INTERVAL_SECONDS", default=5.0)
AUDIT_UNSEALED_GRACE_INTERVALS = env.int("AUDIT_UNSEALED_GRACE_INTERVALS", default=12)

# Redaction detectors switched on for this deployment
# (conversations.projection.redaction.DETECTORS): card, iban, email, phone, ssn, secret, ip.
# Default: all of them.
REDACTION_DETECTORS = env.list("REDACTION_DETECTORS", default=[])
# Region used to read phone numbers written without a country code.
REDACTION_PHONE_REGION = env.str("REDACTION_PHONE_REGION", default="US")

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None  # results are not kept: state that matters lives in PostgreSQL
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = 300
CELERY_TASK_TIME_LIMIT = 360
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = TIME_ZONE

SESSION_COOKIE_HTTPONLY = True
# A support console's session: a working day, sliding, not two weeks. A signed-in request renews
# it when SESSION_RENEW_SECONDS have passed since the last renewal (console/hardening.py:
# SlidingSessionMiddleware; not a session write on every page).
SESSION_COOKIE_AGE = env.int("SESSION_COOKIE_AGE", default=8 * 60 * 60)
SESSION_RENEW_SECONDS = env.int("SESSION_RENEW_SECONDS", default=5 * 60)

# Login throttling (django-axes, counted in the cache: no table). AXES_FAILURE_LIMIT wrong
# passwords for one username from one address lock that pair out for AXES_COOLOFF_MINUTES; the
# lock-out page says the same whether the user exists or not (console/hardening.py: locked_out).
AXES_ENABLED = env.bool("AXES_ENABLED", default=True)
# The cache handler, tolerant of a cache that does not answer (console/hardening.py).
AXES_HANDLER = "console.hardening.RedisTolerantAxesHandler"
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "console.hardening.locked_out"
AXES_VERBOSE = False
# Counted by the address FORWARDED_ALLOW_IPS yields (console/hardening.py), as the share pages are.
AXES_CLIENT_IP_CALLABLE = "console.hardening.client_address"
AXES_ENABLE_ADMIN = False  # nothing to show: the cache handler keeps no rows

# The window of every timestamp the API, `ingest` and the console accept (conversations/bounds.py):
# from TIMESTAMP_EARLIEST (an ISO date) to TIMESTAMP_FUTURE_SECONDS ahead of now.
TIMESTAMP_EARLIEST = env.str("TIMESTAMP_EARLIEST", default="2000-01-01")
TIMESTAMP_FUTURE_SECONDS = env.int("TIMESTAMP_FUTURE_SECONDS", default=24 * 60 * 60)
CSRF_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
if IS_PRODUCTION:
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    # No SECURE_PROXY_SSL_HEADER: Django would believe X-Forwarded-Proto from any client. The
    # scheme comes from the server, which takes it only from FORWARDED_ALLOW_IPS (uvicorn's
    # proxy headers, gunicorn's secure_scheme_headers: console/ops/serve.py).
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # axes: lock-outs are warnings; every sign-in's "deleted 0 failures" line is not kept.
    "loggers": {"django.db.backends": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}

# The reasoning review (conversations/reviews.py). With an OpenAI API key, a stored OpenAI
# Responses exchange with no reasoning summary gets its summary fetched at read time from
# GET {OPENAI_BASE_URL}/v1/responses/{id} (never stored); without one, the page says so.
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="https://api.openai.com")
# Seconds allowed for each phase of a provider request (connect at most 5).
PROVIDER_TIMEOUT_SECONDS = env.float("PROVIDER_TIMEOUT_SECONDS", default=10.0)
# Reviews one user may open per hour (counted from the audit log's review.read rows).
REVIEW_RATE_LIMIT = env.int("REVIEW_RATE_LIMIT", default=20)
# More distinct conversations than this reviewed by one user within 24 hours raises a
# ReviewAlert for compliance (admin: Review alerts).
REVIEW_ALERT_THRESHOLD = env.int("REVIEW_ALERT_THRESHOLD", default=10)

# Retention (retention/): a running deletion whose claim is older than this is reclaimed by the
# next tick; conversations erased per transaction batch; the key of the receipts' HMAC.
RETENTION_CLAIM_STALE_SECONDS = env.int("RETENTION_CLAIM_STALE_SECONDS", default=600)
RETENTION_CHUNK = env.int("RETENTION_CHUNK", default=100)
RETENTION_SWEEP_LIMIT = env.int("RETENTION_SWEEP_LIMIT", default=1000)
RETENTION_RECEIPT_KEY = env.str("RETENTION_RECEIPT_KEY", default="")
RETENTION_MAX_ATTEMPTS = env.int("RETENTION_MAX_ATTEMPTS", default=3)
# The legal deadline a deletion request's SLA is shown against: one month from receipt (GDPR
# art. 12(3)); a request may not be scheduled after it.
RETENTION_LEGAL_DEADLINE_MONTHS = env.int("RETENTION_LEGAL_DEADLINE_MONTHS", default=1)

# Operational signals (conversations/monitoring/): how often ``signals_tick`` evaluates the alert
# rules (its own beat entry), the HMAC key of webhook signatures when a rule names none, the
# console's address for links in notifications, the sender of alert e-mail, and where
# ``probe_allowance`` sends its two requests (with ANTHROPIC_API_KEY / OPENAI_API_KEY).
SIGNALS_INTERVAL_SECONDS = env.int("SIGNALS_INTERVAL_SECONDS", default=60)
SIGNALS_WEBHOOK_SECRET = env.str("SIGNALS_WEBHOOK_SECRET", default="")
SIGNALS_BASE_URL = env.str("SIGNALS_BASE_URL", default="http://localhost:8000")
SIGNALS_FROM_EMAIL = env.str("SIGNALS_FROM_EMAIL", default="console@localhost")
# A reviewer's request for review access is told to those who decide it (compliance staff and
# admins) by e-mail, and to this webhook when set (conversations/reviews/notify.py).
REVIEW_REQUESTS_WEBHOOK_URL = env.str("REVIEW_REQUESTS_WEBHOOK_URL", default="")
ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", default="")
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL", default="https://api.anthropic.com")

# Every other provider the console calls itself (the allowance probe, the review's summary
# fetch): each format's profile names the settings of its provider's address and key
# (``transport`` in conversations/formats/<name>/profile.py), read here from the environment
# under those names, so a new format needs no line in this file.
from conversations.formats import transport_settings  # noqa: E402 (pure: no Django)

for _name, _default in transport_settings().items():
    if _name not in globals():
        globals()[_name] = env.str(_name, default=_default)

# Continuation (conversations/continuation.py, docs/formats.md "Continuation rules"): the
# account's Anthropic thinking regime. ``preserved``: the prefix check applies (nothing is left
# out for the models that run it); ``legacy``: an account created before 2026-08-31, which the
# check does not bind by default; ``auto``: from ANTHROPIC_ACCOUNT_CREATED (YYYY-MM-DD), and
# ``preserved`` when that is not given.
ANTHROPIC_THINKING_REGIME = env.str("ANTHROPIC_THINKING_REGIME", default="auto")
ANTHROPIC_ACCOUNT_CREATED = env.str("ANTHROPIC_ACCOUNT_CREATED", default="")
if ANTHROPIC_THINKING_REGIME not in ("preserved", "legacy", "auto"):
    raise ImproperlyConfigured("ANTHROPIC_THINKING_REGIME must be preserved, legacy or auto")
try:
    _ = ANTHROPIC_ACCOUNT_CREATED and date.fromisoformat(ANTHROPIC_ACCOUNT_CREATED)
except ValueError:
    raise ImproperlyConfigured("ANTHROPIC_ACCOUNT_CREATED must be a date, YYYY-MM-DD") from None

# --- Operations (DESIGN section 17; docs/operations.md) ------------------------------------------
# Health, readiness and metrics (console/ops/), JSON logs, the backups' horizon
# (retention/backups.py) and read replicas (conversations/replicas.py).
OPS_KEY_PREFIX = env.str("CACHE_KEY_PREFIX", default="console") + ":ops"
# /readyz: the checks it runs, how old the beat's heartbeat may be, and how long a committed
# audit row may wait for its seal (by default what verify_audit tolerates:
# AUDIT_UNSEALED_GRACE_INTERVALS sealer intervals). By default readiness says whether this
# process can serve (its databases and Redis): the beat and the sealer are other processes, and
# one stopped clock would take every web process out of the load balancer. They stay in the
# metrics and their alerts; an operator opts in by naming them.
READY_CHECKS_KNOWN = ["database", "keys", "redis", "beat", "sealer"]
READY_CHECKS = env.list("READY_CHECKS", default=["database", "keys", "redis"])
if set(READY_CHECKS) - set(READY_CHECKS_KNOWN):
    raise ImproperlyConfigured(
        f"READY_CHECKS names unknown checks: {sorted(set(READY_CHECKS) - set(READY_CHECKS_KNOWN))}"
    )
READY_BEAT_MAX_AGE_SECONDS = env.float("READY_BEAT_MAX_AGE_SECONDS", default=60.0)
READY_SEALER_MAX_LAG_SECONDS = env.float(
    "READY_SEALER_MAX_LAG_SECONDS",
    default=AUDIT_SEAL_INTERVAL_SECONDS * AUDIT_UNSEALED_GRACE_INTERVALS,
)
# The beat writes its heartbeat (for /readyz) from its scheduler.
CELERY_BEAT_SCHEDULER = "console.ops.beat:HeartbeatScheduler"
# /metrics: open to a service token of scope "metrics" and to these peer addresses or networks
# (REMOTE_ADDR, e.g. "10.0.0.0/8"; never a proxy's address, which every client would share).
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=[])
# LOG_FORMAT=json: one JSON object per line, with the request id (console/ops/logs.py).
LOG_FORMAT = env.str("LOG_FORMAT", default="plain")
if LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}")
_logging: dict[str, Any] = LOGGING  # the same dict, typed for the changes below
_logging["filters"] = {"request_id": {"()": "console.ops.logs.RequestIdFilter"}}
_logging["handlers"]["console"]["filters"] = ["request_id"]
# One line per request (console.request: method, route, status, duration, request id; never a
# body or a query string), in place of the server's own access log under LOG_FORMAT=json.
_logging["loggers"]["console.request"] = {"level": "INFO" if LOG_FORMAT == "json" else "WARNING"}
if LOG_FORMAT == "json":
    _logging["formatters"]["json"] = {
        "()": "pythonjsonlogger.json.JsonFormatter",
        "fmt": "%(levelname)s %(name)s %(message)s %(request_id)s",
        "rename_fields": {"levelname": "level", "name": "logger"},
        "timestamp": "time",  # ISO 8601, UTC
    }
    _logging["handlers"]["console"]["formatter"] = "json"
    for _server_logger in ("uvicorn", "uvicorn.error", "gunicorn.error", "celery"):
        _logging["loggers"][_server_logger] = {"handlers": ["console"], "propagate": False}
    # The request line stands for the servers' access lines and django.request's 4xx warnings
    # (which would write paths: ids, share tokens).
    for _access_logger in ("uvicorn.access", "gunicorn.access", "django.request"):
        _logging["loggers"][_access_logger] = {"level": "ERROR"}
    CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Backups (retention/backups.py): how long backups of the keys database and of the main database
# are kept. Every deletion receipt states the date after which no backup can restore what it
# erased: the erasure plus the longer of the two.
KEY_BACKUP_RETENTION_DAYS = env.int("KEY_BACKUP_RETENTION_DAYS", default=30)
BACKUP_RETENTION_DAYS = env.int("BACKUP_RETENTION_DAYS", default=KEY_BACKUP_RETENTION_DAYS)
# Read replicas (conversations/replicas.py): streaming replicas of the main database's server,
# comma-separated; the reading pages use one while it is fresh. In tests each mirrors "default".
DATABASE_REPLICA_URLS = env.list("DATABASE_REPLICA_URLS", default=[])
DATABASE_REPLICA_MAX_LAG_SECONDS = env.float("DATABASE_REPLICA_MAX_LAG_SECONDS", default=5.0)
DATABASE_REPLICAS: list[str] = []
for _index, _url in enumerate(DATABASE_REPLICA_URLS):
    _replica = env.db_url_config(_url)
    # The primary's connection handling (persistent or pooled, health checks) for its copies.
    for _name in ("ATOMIC_REQUESTS", "CONN_MAX_AGE", "CONN_HEALTH_CHECKS"):
        if _name in DATABASES["default"]:
            _replica[_name] = DATABASES["default"][_name]
    if "pool" in DATABASES["default"].get("OPTIONS", {}):
        _pool = {**DATABASES["default"]["OPTIONS"]["pool"], "timeout": 2}
        _replica.setdefault("OPTIONS", {})["pool"] = _pool
    # A replica that does not answer costs a page two seconds once, then is skipped a while.
    _replica.setdefault("OPTIONS", {}).setdefault("connect_timeout", 2)
    _replica["TEST"] = {"MIRROR": "default"}
    DATABASES[f"replica_{_index}"] = _replica
    DATABASE_REPLICAS.append(f"replica_{_index}")
# --- People: sign-in, SCIM provisioning, roles (console/people/) ---------------------------------
# Local passwords (the sign-in form, the Django admin's login, `invite` on the People page): on by
# default; false leaves single sign-on as the only way in.
LOCAL_PASSWORDS = env.bool("LOCAL_PASSWORDS", default=True)
# Single sign-on through an OpenID Connect provider (console/people/oidc.py, mozilla-django-oidc):
# on when OIDC_ISSUER and OIDC_CLIENT_ID are set. Register {console}/oidc/callback/ as the
# client's redirect URI at the provider. The endpoints come from the issuer's discovery document.
OIDC_ISSUER = env.str("OIDC_ISSUER", default="")
OIDC_CLIENT_ID = env.str("OIDC_CLIENT_ID", default="")
OIDC_CLIENT_SECRET = env.str("OIDC_CLIENT_SECRET", default="")
OIDC_PROVIDER_NAME = env.str("OIDC_PROVIDER_NAME", default="")  # "Sign in with Okta"
OIDC_SCOPES = env.str("OIDC_SCOPES", default="openid email profile")
# The claim listing the person's groups, and which groups give which role (roles.py):
# "support=support_agent,reviewers=reviewer,legal=compliance,console-admins=admin". SCIM groups
# map through the same table.
OIDC_ROLE_CLAIM = env.str("OIDC_ROLE_CLAIM", default="groups")
OIDC_ROLE_MAP = env.str("OIDC_ROLE_MAP", default="")
# The claim a new account's user name is taken from (then email, then sub).
OIDC_USERNAME_CLAIM = env.str("OIDC_USERNAME_CLAIM", default="preferred_username")
OIDC_SIGN_ALGO = env.str("OIDC_SIGN_ALGO", default="RS256")
# How the client authenticates at the token endpoint: client_secret_post or client_secret_basic.
OIDC_TOKEN_AUTH = env.str("OIDC_TOKEN_AUTH", default="client_secret_post")
OIDC_TIMEOUT_SECONDS = env.float("OIDC_TIMEOUT_SECONDS", default=10.0)
OIDC_CLOCK_SKEW_SECONDS = env.int("OIDC_CLOCK_SKEW_SECONDS", default=30)
AUTHENTICATION_BACKENDS = [
    "console.hardening.ThrottledLoginBackend",
    "console.people.backends.LocalPasswordBackend",  # off with LOCAL_PASSWORDS=false
    "console.people.oidc.ProviderBackend",  # only the provider's callback signs in through it
    "guardian.backends.ObjectPermissionBackend",
]
# SCIM 2.0 at /scim/v2/ (console/people/scim/, django-scim2), for a token of scope "scim"
# (`manage.py create_service_token NAME --scope scim`). A body over SCIM_MAX_BODY_BYTES is a 413
# (a group of ten thousand members is about a megabyte).
SCIM_MAX_BODY_BYTES = env.int("SCIM_MAX_BODY_BYTES", default=2 * 1024 * 1024)
_SCIM_BEARER = {"type": "oauthbearertoken", "name": "Bearer token", "primary": True}
SCIM_SERVICE_PROVIDER = {
    "NETLOC": "unused: locations are built from each request",
    "AUTHENTICATION_SCHEMES": [{**_SCIM_BEARER, "description": "a token of scope scim"}],
    "USER_ADAPTER": "console.people.scim.adapters.UserAdapter",
    "GROUP_ADAPTER": "console.people.scim.adapters.GroupAdapter",
    "GROUP_MODEL": "console.people.models.DirectoryGroup",
    "USER_FILTER_PARSER": "console.people.scim.filters.UserFilter",
    "GROUP_FILTER_PARSER": "console.people.scim.filters.GroupFilter",
    "SERVICE_PROVIDER_CONFIG_MODEL": "console.people.scim.schemas.ServiceProviderConfig",
    "BASE_LOCATION_GETTER": "console.people.scim.schemas.base_location",
    "GET_EXTRA_MODEL_FILTER_KWARGS_GETTER": "console.people.scim.schemas.extra_filter_kwargs",
    "GET_QUERYSET_POST_PROCESSOR_GETTER": "console.people.scim.schemas.queryset_post_processor",
    "AUTH_CHECK_MIDDLEWARE": "console.people.scim.auth.ScimTokenCheck",
    "SCHEMAS_GETTER": "console.people.scim.schemas.schemas",
    "WWW_AUTHENTICATE_HEADER": 'Bearer realm="scim"',
}

# --- Outbound notifications (conversations/monitoring/destinations.py, delivery.py) ---------
# Webhook hosts (names or addresses) allowed although internal (loopback, private, link-local...):
# an internal receiver the operator chose. Every other internal destination is refused on save
# and at delivery. A send waits at most NOTIFY_TIMEOUT_SECONDS (connect, write and read each).
NOTIFY_ALLOWED_HOSTS = env.list("NOTIFY_ALLOWED_HOSTS", default=[])
NOTIFY_TIMEOUT_SECONDS = env.float("NOTIFY_TIMEOUT_SECONDS", default=3.0)

# --- The audit witness (audit/witness.py; docs/operations.md) ------------------------------------
# Where each digest head the sealer commits is also appended, outside the database: a file path
# (default var/audit-witness.log; ship it off the host) or an http(s) URL of an append-only
# collector; empty: no witness. verify_audit reads it (or --witness FILE) and fails when the
# database lacks a witnessed head or ends before the last one.
AUDIT_WITNESS = env.str("AUDIT_WITNESS", default=str(VAR_DIR / "audit-witness.log"))
AUDIT_WITNESS_TIMEOUT_SECONDS = env.float("AUDIT_WITNESS_TIMEOUT_SECONDS", default=3.0)

# --- Forwarded headers (console/ops/serve.py, console/hardening.client_address) ----------------
# The reverse proxies whose X-Forwarded-For (and X-Forwarded-Proto) are believed: addresses,
# comma-separated, or "*"; default none. The same value is passed to uvicorn and gunicorn by
# `python -m console.ops.serve`; the login throttle and the share pages' rate limit count by the
# address it yields.
FORWARDED_ALLOW_IPS = env.list("FORWARDED_ALLOW_IPS", default=[])
for _proxy in FORWARDED_ALLOW_IPS:
    if _proxy != "*":
        try:
            ipaddress.ip_address(_proxy)
        except ValueError:
            raise ImproperlyConfigured(
                f"FORWARDED_ALLOW_IPS: {_proxy!r} is not an address (nor *)"
            ) from None
