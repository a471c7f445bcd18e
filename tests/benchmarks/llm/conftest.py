from tests.benchmarks.llm.vllm_support import vllm_server  # noqa: F401
from tests.support.llm_fixtures import llm_backend_config, llm_server  # noqa: F401
from tests.support.tiny_model import tiny_model_dir  # noqa: F401
