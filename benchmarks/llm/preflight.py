"""The check before a run is handed to the workers: is the API key variable set, and does the
server serve the run's model? ``GET {base_url}/models`` must list the model; a server that
does not offer that list (HTTP 404 or 405) must answer a one-token request for the model
instead. Anything else is refused with a sentence naming the base URL and the model: a server
that does not answer, refuses the key, answers 404 to both (an address that is no model
server, such as the app itself), or does not list the model. Refusing at launch, with the
reason, beats a run that fails request by request (or a mining batch that "completes" with
every LLM call failed). A ``replay`` backend's recording must exist and read; backends without
a server (``vllm`` offline, dotted paths) are not checked here.

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


def _served_ids(response: Any) -> list[str] | None:
    """The model ids of a ``GET /models`` answer (OpenAI's ``{"data": [{"id": …}]}``), or None
    when the body is no such list."""
    try:
        body = response.json()
    except ValueError:
        return None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]


def _one_token(base: str, config: dict[str, Any], headers: dict, timeout_s: float) -> Any:
    """One request of one token for the config's model, on its endpoint (chat or completions)."""
    model = config.get("model") or ""
    if (config.get("endpoint") or "chat") == "completions":
        url, body = f"{base}/completions", {"model": model, "prompt": "Hi", "max_tokens": 1}
    else:
        url = f"{base}/chat/completions"
        body = {"model": model, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
    return httpx.post(url, json=body, headers=headers, timeout=timeout_s, verify=_ssl_context())


def _listing(ids: list[str], limit: int = 5) -> str:
    if not ids:
        return "it lists none"
    shown = ", ".join(repr(i) for i in ids[:limit])
    return f"it lists {shown}" + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _recording_error(config: dict[str, Any]) -> str:
    """A replay backend's recording must be there and readable (its replies are the model)."""
    from benchmarks.llm.replay import read_recording, recording_path

    try:
        read_recording(recording_path(config.get("recording"), backend="replay"))
    except ValueError as exc:
        return str(exc)
    return ""


def preflight_error(config: dict[str, Any], *, timeout_s: float = TIMEOUT_S) -> str:
    """ "" when an ``openai`` backend config's server serves its model; else why not, in one
    sentence naming the base URL and the model."""
    backend = config.get("backend") or "openai"
    if backend == "replay":
        return _recording_error(config)
    if backend != "openai":
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
    model = str(config.get("model") or "")
    if not model:
        return f"no model is named for the server at {base} (model)"
    try:
        response = httpx.get(
            f"{base}/models", headers=headers, timeout=timeout_s, verify=_ssl_context()
        )
    except httpx.HTTPError as exc:
        return f"the server at {base} does not answer ({type(exc).__name__}: {exc})"
    code = response.status_code
    if code in (401, 403):
        return f"the server at {base} refused the request (HTTP {code}): check the API key" + (
            f" in {env!r}" if env else " (api_key_env is empty)"
        )
    if code in (404, 405):  # no model list offered: one request of one token must succeed
        try:
            probe = _one_token(base, config, headers, timeout_s)
        except httpx.HTTPError as exc:
            return (
                f"the server at {base} offers no GET /models (HTTP {code}) and a one-token "
                f"request for the model {model!r} failed ({type(exc).__name__}: {exc})"
            )
        if probe.status_code < 300:
            return ""
        return (
            f"the server at {base} offers no GET /models (HTTP {code}) and a one-token request "
            f"for the model {model!r} was answered HTTP {probe.status_code}: is {base} the "
            "address of a model server (ending in /v1)?"
        )
    if code >= 300:
        return f"the server at {base} answered HTTP {code} to GET /models (model {model!r})"
    ids = _served_ids(response)
    if ids is None:
        return (
            f"the server at {base} answered GET /models with no model list: is {base} the "
            f"address of a model server (ending in /v1)? (model {model!r})"
        )
    if model not in ids:
        return f"the server at {base} does not serve the model {model!r}: {_listing(ids)}"
    return ""
