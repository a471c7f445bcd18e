"""Secrets by name only: the one rule for which environment variable an LLM configuration may
name as its API key (``api_key_env``) and which hosts its ``base_url`` may reach. The console,
the API, the CLI and mining all check through here, and the OpenAI-compatible backend checks
again before the key is read (benchmarks.llm.openai_compat), so no path sends a server secret
out as a Bearer token.

Settings:

- ``LLM_API_KEY_ENV_PATTERNS`` (``["*_API_KEY", "*_TOKEN"]``): shell-style patterns a key
  variable's name must match.
- ``LLM_API_KEY_ENV_FORBIDDEN``: names refused whatever the patterns say, added to the
  variables the app itself reads (``SECRET_KEY``, ``DATABASE_URL``, the broker, cache and
  storage credentials: :data:`APP_VARIABLES`).
- ``LLM_ALLOWED_HOSTS`` (empty: any host): host names (patterns allowed, ``*.example.org``)
  an LLM ``base_url`` may point at.
"""

from __future__ import annotations

import fnmatch
import re
from urllib.parse import urlsplit

from django.conf import settings

DEFAULT_PATTERNS = ("*_API_KEY", "*_TOKEN")
DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the openai client's own default

# Variables this app reads itself (config/settings.py, celery, storages): never a key to send.
APP_VARIABLES = frozenset(
    {
        "SECRET_KEY",
        "DJANGO_SECRET_KEY",
        "DATABASE_URL",
        "TEST_DATABASE_NAME",
        "CELERY_BROKER_URL",
        "CELERY_RESULT_BACKEND",
        "CACHE_URL",
        "REDIS_URL",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AZURE_STORAGE_CONNECTION_STRING",
        "AZURE_STORAGE_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GS_CREDENTIALS",
        "EMAIL_HOST_PASSWORD",
        "DEMO_ADMIN_PASSWORD",
        "GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    }
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def _patterns() -> tuple[str, ...]:
    return tuple(getattr(settings, "LLM_API_KEY_ENV_PATTERNS", DEFAULT_PATTERNS))


def forbidden_names() -> frozenset[str]:
    extra = getattr(settings, "LLM_API_KEY_ENV_FORBIDDEN", ())
    return APP_VARIABLES | {name.upper() for name in extra}


def api_key_env_error(name: str) -> str | None:
    """Why ``name`` may not be an API-key variable, or None (an empty name: no key)."""
    if not name:
        return None
    if not _NAME.fullmatch(name):
        return "the NAME of an environment variable (letters, digits, _), never the key itself"
    if name.upper() in forbidden_names() or name.upper().startswith(("DJANGO_", "CELERY_")):
        return f"{name} is a variable this server reads itself; it is never sent to an LLM"
    patterns = _patterns()
    if not any(fnmatch.fnmatchcase(name.upper(), p.upper()) for p in patterns):
        return (
            f"{name} is not allowed as an API key variable: its name must match "
            f"{' or '.join(patterns)} (setting LLM_API_KEY_ENV_PATTERNS)"
        )
    return None


def base_url_error(url: str) -> str | None:
    """Why an LLM may not be reached at ``url``, or None. With ``LLM_ALLOWED_HOSTS`` set, the
    URL must be http(s) to one of those hosts (empty: the OpenAI API, the client's default)."""
    allowed = [h.lower() for h in getattr(settings, "LLM_ALLOWED_HOSTS", ())]
    if not allowed:
        return None
    try:
        parts = urlsplit(url or DEFAULT_BASE_URL)
        host = (parts.hostname or "").lower()
    except ValueError:
        return f"{url[:200]!r} is not a URL"
    if parts.scheme not in ("http", "https") or not host:
        return "must be an http:// or https:// URL with a host"
    if not any(fnmatch.fnmatchcase(host, pattern) for pattern in allowed):
        return f"host {host} is not in LLM_ALLOWED_HOSTS ({', '.join(allowed)})"
    return None


def llm_config_errors(*, api_key_env: str = "", base_url: str = "") -> dict[str, str]:
    """``{field: message}`` for an LLM configuration's key variable and URL (empty: fine)."""
    errors = {}
    key_error = api_key_env_error(api_key_env or "")
    if key_error:
        errors["api_key_env"] = key_error
    url_error = base_url_error(base_url or "")
    if url_error:
        errors["base_url"] = url_error
    return errors
