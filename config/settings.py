"""how2review settings.

Everything that differs between machines comes from the environment:

- ``DJANGO_ENV``: ``development`` (default) or ``production``. Production requires
  ``SECRET_KEY`` and ``ALLOWED_HOSTS`` and turns on every ``check --deploy`` protection.
- ``DATABASE_URL``: e.g. ``postgres://user@127.0.0.1:5432/how2review`` (psycopg 3).
  Default: SQLite in ``var/how2review.sqlite3`` (the embedded default).
- ``CELERY_BROKER_URL``: e.g. ``redis://127.0.0.1:6379/0``. Default: kombu's filesystem
  transport under ``var/broker`` (no server needed).
- ``SECRET_KEY``, ``DEBUG``, ``ALLOWED_HOSTS`` (comma separated), ``CSRF_TRUSTED_ORIGINS``.
"""

from __future__ import annotations

import importlib.util
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list

BASE_DIR = Path(__file__).resolve().parent.parent
# Where the embedded SQLite database, the filesystem broker's folders, media and the demo
# passwords live.
VAR_DIR = Path(os.environ.get("HOW2REVIEW_VAR_DIR", BASE_DIR / "var"))

ENVIRONMENT = os.environ.get("DJANGO_ENV", "development").strip().lower()
if ENVIRONMENT not in {"development", "production"}:
    raise ImproperlyConfigured(f"DJANGO_ENV={ENVIRONMENT!r}: use 'development' or 'production'")
PRODUCTION = ENVIRONMENT == "production"

# On in development, off in production (1/0, true/false).
DEBUG = env_bool("DEBUG", default=not PRODUCTION)

# Required in production; development falls back to a fixed development-only key.
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set in the environment when DJANGO_ENV=production"
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production-3f9a1c7e2b"

# Comma separated; localhost in development, required in production.
ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS", [] if PRODUCTION else ["localhost", "127.0.0.1", "[::1]", "testserver"]
)
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured(
        "ALLOWED_HOSTS must be set in the environment when DJANGO_ENV=production"
    )
# Comma separated origins (https://host) allowed to POST across origins.
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",  # login lockout: after the apps whose logins it watches
    "csp",
    "core",
    "benchmarks",
    "mining",
    "annotation",
    "judging",
    "validation",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.gzip.GZipMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.middleware.CSPMiddleware",  # django-csp's, the policy built once
    "core.middleware.UploadLimitMiddleware",
    "core.middleware.TextGateMiddleware",
    "core.middleware.BrokerDownMiddleware",  # a launch whose task cannot be sent: 503
    "axes.middleware.AxesMiddleware",  # last: it answers the lockout page
]

ROOT_URLCONF = "config.urls"

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
                "core.context_processors.roles",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

DEFAULT_SQLITE = f"sqlite:///{VAR_DIR / 'how2review.sqlite3'}"
if "DATABASE_URL" not in os.environ:
    VAR_DIR.mkdir(parents=True, exist_ok=True)  # the embedded default lives there
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", DEFAULT_SQLITE),
        # persistent database connections: seconds a connection is kept (0: one per request)
        conn_max_age=env_int("DB_CONN_MAX_AGE", 60),
        # a SELECT 1 before reusing a persistent connection in each request; turn off
        # (DB_CONN_HEALTH_CHECKS=0) where the database is local and never drops connections (the
        # check was about 7% of a web worker's time on the annotator hot path)
        conn_health_checks=env_bool("DB_CONN_HEALTH_CHECKS", True),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web process and the worker read while the other writes.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
if env_bool("DB_PGBOUNCER_TRANSACTION", False):
    # Behind pgbouncer in *transaction* pooling: no server-side cursors (a cursor would outlive
    # its transaction's server connection) and no server-side prepared statements (pgbouncer
    # < 1.21, or without max_prepared_statements, cannot keep them; see DB_SERVER_PREPARED).
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = None
# The annotator's hot statements (core.prepared) run as PostgreSQL prepared statements, parsed
# and planned once per connection; off behind pgbouncer's transaction pooling unless set.
DB_SERVER_PREPARED = env_bool("DB_SERVER_PREPARED", not env_bool("DB_PGBOUNCER_TRANSACTION", False))
# The test database's name (pytest-django), so parallel suites on one server do not collide.
if os.environ.get("TEST_DATABASE_NAME"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}

# Cache (reports are cached until their data changes): per-process memory by default; set
# CACHE_URL=redis://127.0.0.1:6379/1 to share one cache between web processes.
CACHE_URL = os.environ.get("CACHE_URL", "")
if CACHE_URL.startswith(("redis://", "rediss://")):
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
    }
elif CACHE_URL:
    raise ImproperlyConfigured(f"CACHE_URL={CACHE_URL!r}: only redis:// URLs are supported")
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Outside production WhiteNoise serves the apps' static files without collectstatic, with DEBUG
# off too (make demo runs with DEBUG=0, so it shows the project's error pages).
WHITENOISE_USE_FINDERS = not PRODUCTION
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "core.storage.StaticManifestStorage"  # whitenoise's, each URL worked out once
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
MEDIA_ROOT = VAR_DIR / "media"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# --- Home dashboard: one card per stage of the loop (core.dashboard), in this order -------------
HOME_DASHBOARD = [
    "mining.selectors.dashboard.mine_card",
    "benchmarks.selectors.dashboard.benchmark_card",
    "benchmarks.selectors.dashboard.generate_card",
    "judging.selectors.dashboard.judge_card",
    "annotation.selectors.dashboard.annotate_card",
    "annotation.selectors.dashboard.agree_card",
    "demo.home.try_card",  # the demo's running study, open to any visitor (absent without it)
    "annotation.selectors.account.studies_card",  # a signed-in account's studies and links
]

# --- Celery -------------------------------------------------------------------
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
# Run tasks in the calling process instead of sending them to a worker (tests and scripts).
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# The queue web processes send to; GPU (vLLM offline) work goes to CELERY_GPU_QUEUE instead.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_DEFAULT_QUEUE", "default")
# Work for backends that hold a model in the worker (vLLM offline) is sent to this queue
# (benchmarks.llm.registry.queue_for): run GPU workers with `-Q gpu -c 1`.
CELERY_GPU_QUEUE = os.environ.get("CELERY_GPU_QUEUE", "gpu")
# Scoring runs of packs that compile and run generated code (LongProc Pseudocode→Code,
# benchmarks.packs.sandbox) go to this queue: run `celery -A config worker -Q sandbox` on
# machines of their own (g++ installed).
CELERY_SANDBOX_QUEUE = os.environ.get("CELERY_SANDBOX_QUEUE", "sandbox")
# Where the How2Judge weights are on the GPU workers' disk (the console's How2Judge preset).
HOW2JUDGE_MODEL_DIR = os.environ.get("HOW2JUDGE_MODEL_DIR", str(VAR_DIR / "models" / "how2judge"))
# A run's lease is stale (its worker presumed gone, the run taken over) when its heartbeat is
# older than this (core.runs); workers beat at least every few seconds while they work.
RUN_LEASE_SECONDS = env_int("RUN_LEASE_SECONDS", 60)
# A chunk takes no new work after this many seconds and hands over to the next chunk (the Redis
# visibility timeout is set above it: config.celery.visibility_timeout).
RUN_CHUNK_SECONDS = env_int("RUN_CHUNK_SECONDS", 300)
# A run still queued this long after it was sent (its message lost: the broker was down or
# restarted empty) is sent again by the orphan scan (core.runs.engine.resume_orphans).
RUN_QUEUED_RESEND_SECONDS = env_int("RUN_QUEUED_RESEND_SECONDS", 120)
# A judge run is worked in this many lanes at once, one worker each (core.runs.lanes): two
# workers on one run do twice the work. 1: one execution at a time. At most 16. Read when a run
# is launched or resumed; always 1 on the embedded SQLite default.
JUDGE_RUN_LANES = env_int("H2R_JUDGE_LANES", 4)
# The same for generation runs, scoring runs and mining batches (core.runs.lanes.default_lanes).
RUN_LANES = env_int("H2R_RUN_LANES", 4)
# Every worker's main process loads the openai client and its HTTP libraries before its pool
# forks (~0.4 s, ~23 MB, shared). With this, each pool process also loads the token counter
# when it starts, not on its first generating chunk (~0.4 s of CPU, ~130 MB of tables). Off by
# default: a worker that never generates keeps that memory (benchmarks.llm.openai_compat.warm_up).
WORKER_WARM_UP = env_bool("H2R_WORKER_WARM_UP", False)
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- REST API -----------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["core.permissions.IsResearcherOrAdmin"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.SearchFilter",
        "rest_framework.filters.OrderingFilter",
    ],
    # JSON bodies through the text gate (core.text): NUL and control characters are a 400
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.GatedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Django ValidationError → 400 naming the fields, ObjectDoesNotExist → 404.
    "EXCEPTION_HANDLER": "core.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "how2review API",
    "DESCRIPTION": (
        "The how2review JSON API for researchers and admins. Researchers read datasets, "
        "generations, judgments, studies, reports and exports, and manage studies; admins also "
        "launch, cancel and resume runs (judge runs, generation runs, mining batches). Sign in "
        "with the session of the web pages or a token (POST /api/auth/token/)."
    ),
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["core.permissions.IsResearcherOrAdmin"],
    "ENUM_NAME_OVERRIDES": {
        # every run type (mining batches, judge runs, generation runs) shares the engine's words
        "RunStatusEnum": "core.runs.models.RunStatus",
        "StudyStatusEnum": "annotation.models.Study.Status",
    },
    # every error status an operation answers is declared (core.schema)
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.schema.add_error_responses",
    ],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Security -----------------------------------------------------------------
# Login lockout (django-axes): a username + client address pair is locked after
# AXES_FAILURE_LIMIT wrong passwords for AXES_COOLOFF_MINUTES; the login page says why, and an
# admin unlocks early by deleting the "Access attempts" row (or `manage.py axes_reset`).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_CLIENT_IP_CALLABLE = "core.limits.client_ip"  # one notion of the client's address
AXES_VERBOSE = False
# The client's address as a trusted reverse proxy reports it (core.limits.client_ip), e.g.
# HTTP_X_FORWARDED_FOR; unset: REMOTE_ADDR.
CLIENT_IP_HEADER = os.environ.get("CLIENT_IP_HEADER", "")

# Request size limits (core.limits): non-file bodies (forms, API JSON) up to
# DATA_UPLOAD_MAX_MEMORY_SIZE; requests with files (imports, mining uploads) up to
# UPLOAD_MAX_BYTES, streamed to a temporary file past FILE_UPLOAD_MAX_MEMORY_SIZE. Larger ones
# get a 413 page naming the limit.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_BYTES", 10 * 1024 * 1024)
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 200 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
# a label-set file (uploaded, or given to alt_test / how2score_ppi / agreement_report --labels)
LABEL_SET_MAX_BYTES = env_int("LABEL_SET_MAX_BYTES", 20 * 1024 * 1024)

# Content-Security-Policy (django-csp; Django 5.2 has none of its own): same-origin scripts,
# styles and images only, no inline script; style attributes allowed (templates set widths).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'", "https://app.prolific.com"],
        "base-uri": ["'self'"],
        "object-src": ["'none'"],
    }
}

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the cookie-less meta tag
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if PRODUCTION:
    # production only: redirect plain HTTP to HTTPS (off where a proxy already does)
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # production only: how long browsers keep to HTTPS for this host (HSTS)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"expected_refusals": {"()": "core.logfilters.ExpectedRefusals"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    # the root logger's level: DEBUG, INFO, WARNING (default), ERROR
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    # a 4xx (an expected refusal) is one line, no traceback; printed once (not again by
    # Django's own "django" console handler)
    "loggers": {
        "django.request": {
            "handlers": ["console"],
            "level": "WARNING",
            "filters": ["expected_refusals"],
            "propagate": False,
        },
        # the HTTP clients' one INFO line per request ("HTTP Request: POST ... 200 OK"): at a
        # worker's INFO level that is a line per LLM call, each passed from the pool process to
        # Celery's main process — a measurable share of a judge run's CPU
        # (docs/performance/index.md#one-concurrency-per-endpoint)
        # (openai 3.x sends through httpx2/httpcore2, the same lines under other names)
        **{
            name: {"level": os.environ.get("HTTP_CLIENT_LOG_LEVEL", "WARNING")}
            for name in ("httpx", "httpcore", "httpx2", "httpcore2")
        },
    },
}

# Limits for imported records (characters); oversize fields are refused, naming the line.
IMPORT_LIMITS = {
    "goal": env_int("IMPORT_MAX_GOAL_CHARS", 2_000),
    "step": env_int("IMPORT_MAX_STEP_CHARS", 5_000),
    "steps": env_int("IMPORT_MAX_STEPS", 200),
    "resource": env_int("IMPORT_MAX_RESOURCE_CHARS", 1_000),
    "resources": env_int("IMPORT_MAX_RESOURCES", 200),
    "source_text": env_int("IMPORT_MAX_SOURCE_TEXT_CHARS", 2_000_000),
    "completion": env_int("IMPORT_MAX_COMPLETION_CHARS", 200_000),
    "id": 255,
    "url": 2_000,
}

# --- Several machines: shared rate limits (benchmarks.llm.ratelimit) -----------------------------
# LLM backends' requests_per_minute / tokens_per_minute are token buckets kept in this Redis,
# shared by every worker process with the same limit key. Default: the Celery broker when it is
# Redis; "off" or no Redis broker (the embedded filesystem broker): each process counts its own.
RATE_LIMIT_REDIS_URL = os.environ.get("RATE_LIMIT_REDIS_URL") or (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else ""
)
if RATE_LIMIT_REDIS_URL.strip().lower() == "off":
    RATE_LIMIT_REDIS_URL = ""
# A backend's `concurrency` is the endpoint's limit across every worker, kept in the same Redis
# (benchmarks.llm.concurrency): a holder's slot lapses this long after its last renewal, so a
# killed worker's slots come back within it. Without Redis: a semaphore per process.
LLM_CONCURRENCY_LEASE_SECONDS = env_int("LLM_CONCURRENCY_LEASE_SECONDS", 30)

# --- Several machines: stored files (core.storage) ------------------------------------------------
# Uploads (mining batch inputs) are saved through STORAGES["default"] and workers read them back
# through it (default_storage.open), never by a web host's path. STORAGE_BACKEND=filesystem (the
# embedded default: MEDIA_ROOT) or s3: an S3-compatible object store (django-storages + boto3,
# the `s3` extra), configured by STORAGE_S3_BUCKET (required), STORAGE_S3_ENDPOINT_URL (MinIO,
# Ceph, R2...; unset: AWS), STORAGE_S3_REGION, STORAGE_S3_PREFIX. Credentials are boto3's own (AWS_ACCESS_KEY_ID /
# AWS_SECRET_ACCESS_KEY in the environment, an instance role...), never stored in settings.
STORAGE_BACKEND = os.environ.get("STORAGE_BACKEND", "filesystem").strip().lower()
if STORAGE_BACKEND == "s3":
    if not all(importlib.util.find_spec(m) for m in ("storages", "boto3")):  # not imported here
        raise ImproperlyConfigured(  # worded as core.extras words a missing extra
            "STORAGE_BACKEND=s3 needs the optional extra 's3': pip install -e '.[s3]' "
            "(make test installs every extra)"
        )
    if not os.environ.get("STORAGE_S3_BUCKET"):
        raise ImproperlyConfigured("STORAGE_BACKEND=s3 needs STORAGE_S3_BUCKET (the bucket name)")
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": os.environ["STORAGE_S3_BUCKET"],
            "endpoint_url": os.environ.get("STORAGE_S3_ENDPOINT_URL") or None,
            "region_name": os.environ.get("STORAGE_S3_REGION") or None,
            "location": os.environ.get("STORAGE_S3_PREFIX", "").strip("/"),
            "file_overwrite": False,  # two uploads of one name get two objects
            "default_acl": None,  # the bucket's own policy; objects are private by default
        },
    }
elif STORAGE_BACKEND != "filesystem":
    raise ImproperlyConfigured(f"STORAGE_BACKEND={STORAGE_BACKEND!r}: use 'filesystem' or 's3'")

# --- A paid study (annotation.prolific, annotation.pay) -------------------------------------------
# The Prolific API token is read from the environment variable PROLIFIC_API_TOKEN at each call,
# never stored here.

# Where the Prolific client calls (the API's base URL).
PROLIFIC_API_BASE_URL = os.environ.get("PROLIFIC_API_BASE_URL", "https://api.prolific.com/api/v1")
# Seconds the Prolific client waits for an answer.
PROLIFIC_API_TIMEOUT_SECONDS = float(os.environ.get("PROLIFIC_API_TIMEOUT_SECONDS", "20"))
# The floor (study currency per hour) under which a study's pay page warns; empty: no floor.
ANNOTATION_MIN_HOURLY_PAY = os.environ.get("ANNOTATION_MIN_HOURLY_PAY", "9.00")
# Prolific's platform fee as a share of rewards and bonuses (0.333: a third on top), shown in
# the cost preview before a study is published; set it to your workspace's rate.
PROLIFIC_FEE_RATE = os.environ.get("PROLIFIC_FEE_RATE", "0.333")
# The app's public address (https://host, no path), used in the entry URL of a Prolific study
# created from the app; empty: the address the creating admin's browser used.
PROLIFIC_PUBLIC_BASE_URL = os.environ.get("PROLIFIC_PUBLIC_BASE_URL", "")
# The Prolific workspace whose webhook secret and subscriptions the app manages.
PROLIFIC_WORKSPACE_ID = os.environ.get("PROLIFIC_WORKSPACE_ID", "")
# The public https URL Prolific delivers webhooks to (this app's /study/prolific/hook/);
# empty: no webhooks, the beat task polls submission and study statuses every beat instead.
PROLIFIC_WEBHOOK_URL = os.environ.get("PROLIFIC_WEBHOOK_URL", "")
# A webhook whose X-Prolific-Request-Timestamp is further than this from now is refused (s).
PROLIFIC_WEBHOOK_TOLERANCE_SECONDS = env_int("PROLIFIC_WEBHOOK_TOLERANCE_SECONDS", 300)
# How often the beat task runs to poll Prolific for the studies it follows (s); without a webhook
# URL it reads every live study each time.
PROLIFIC_POLL_SECONDS = env_int("PROLIFIC_POLL_SECONDS", 60)
# With a webhook URL: the beat task still reconciles, reading a live study again once its last
# read is this old (s), so a lost webhook delivery is caught within about this long.
PROLIFIC_RECONCILE_SECONDS = env_int("PROLIFIC_RECONCILE_SECONDS", 900)
