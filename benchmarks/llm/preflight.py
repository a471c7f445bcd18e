"""The check before a run is handed to the workers: is the API key variable set, and does the
server answer one cheap request (``GET {base_url}/models``)? Refusing at launch, with the
reason, beats a run that fails request by request (or a mining batch that "completes" with
every LLM call failed). Backends without a server (``vllm`` offline, ``replay``, dotted
paths) are not checked here.

The check runs where the run is launched (the web or command process); workers read the key
from their own environment, so deployments give both the same variables.
"""

from __future__ import annotations

import os
import ssl
from functools import cache
from typing import Any

from core.lazy import lazy_module
from core.secrets import api_key_env_error

httpx = lazy_module("httpx")  # imported on the first call (core.lazy)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TIMEOUT_S = 5.0


@cache
def _ssl_context() -> ssl.SSLContext:
    """httpx's default context, built once per process: building it loads the CA bundle
    (~40 ms), which was most of a console launch request."""
    return httpx.create_ssl_context()


def preflight_error(config: dict[str, Any], *, timeout_s: float = TIMEOUT_S) -> str:
    """ "" when an ``openai`` backend config looks usable; else why not, in one sentence."""
    if (config.get("backend") or "openai") != "openai":
        return ""
    env = config.get("api_key_env") or ""
    headers = {}
    if env:
        problem = api_key_env_error(env)
        if problem:
            return f"api_key_env: {problem}"
        key = os.environ.get(env, "")
        if not key:
            return f"the API key variable {env!r} (api_key_env) is not set"
        headers["Authorization"] = f"Bearer {key}"
    base = (config.get("base_url") or DEFAULT_BASE_URL).rstrip("/")
    url = f"{base}/models"
    try:
        response = httpx.get(url, headers=headers, timeout=timeout_s, verify=_ssl_context())
    except httpx.HTTPError as exc:
        return f"the server at {base} does not answer ({type(exc).__name__}: {exc})"
    if response.status_code in (401, 403):
        return (
            f"the server at {base} refused the request (HTTP {response.status_code}): "
            "check the API key" + (f" in {env!r}" if env else " (api_key_env is empty)")
        )
    if response.status_code >= 500:
        return f"the server at {base} answered HTTP {response.status_code} to GET /models"
    return ""
