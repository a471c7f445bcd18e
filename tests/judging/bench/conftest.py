from tests.support.llm_fixtures import llm_backend_config, llm_server  # noqa: F401
