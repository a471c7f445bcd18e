"""Real-browser fixtures (browser, page, shots) live in tests/conftest.py, shared by every browser
test; the local OpenAI-compatible server (``llm_server``) comes from tests.support.llm_fixtures."""

from tests.support.llm_fixtures import llm_server  # noqa: F401
