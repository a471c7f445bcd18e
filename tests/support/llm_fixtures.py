"""Pytest fixtures for the local OpenAI-compatible test server.

Import into a conftest or test module::

    from tests.support.llm_fixtures import llm_server  # noqa: F401

    def test_x(llm_server):
        llm_server.responder = lambda req: '{"ok": true}'
        backend = build_backend({"backend": "openai", "base_url": llm_server.base_url, "model": "m",
                                 "backoff_base_s": 0.01})
        ...

``llm_server`` is a started :class:`tests.support.llm_server.LLMTestServer` (function scope,
stopped after the test); set ``.responder``, ``.latency_s``, ``add_fault(...)`` and read
``.requests`` as its docstring says. ``llm_backend_config`` gives a matching backend config
dict with fast retries, for ``build_backend``.
"""

from __future__ import annotations

import pytest

from tests.support.llm_server import LLMTestServer


@pytest.fixture
def llm_server():
    with LLMTestServer() as server:
        yield server


@pytest.fixture
def llm_backend_config(llm_server):
    return {
        "backend": "openai",
        "base_url": llm_server.base_url,
        "model": "test-model",
        "api_key_env": "",
        "concurrency": 8,
        "timeout_s": 5,
        "max_retries": 3,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.2,
    }
