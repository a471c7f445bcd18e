"""A real Celery worker's main process loads the LLM client's HTTP transport (aiohttp) before
its pool forks, so every pool process has it before any chunk; with ``H2R_WORKER_WARM_UP=1`` a
pool process also loads the token counter when it starts, without it not until a chunk needs
it. Either way the pool process then freezes what it holds out of the garbage collector's scans
(:mod:`core.heap`)."""

from __future__ import annotations

import re
import time

import psutil
import pytest

from tests.support.worker import start_worker

pytestmark = pytest.mark.worker

LOADED = ("aiohttp/_http_parser", "bpe_openai/_bindings")


def _pool_maps(worker, *, main: bool = False) -> set[str]:
    """The extension modules of ``LOADED`` mapped by the worker's pool process (its main
    process with ``main``)."""
    found = set()
    root = psutil.Process(worker.proc.pid)
    procs = [root] if main else root.children(recursive=True)
    for child in procs:
        for m in child.memory_maps():
            found |= {name for name in LOADED if name in m.path}
    return found


@pytest.mark.django_db(transaction=True)  # the workers read the test database
def test_every_worker_loads_the_client_before_forking_a_warm_one_the_token_counter_too(tmp_path):
    (tmp_path / "warm").mkdir()
    (tmp_path / "cold").mkdir()
    warm = start_worker(tmp_path / "warm", concurrency=1, extra_env={"H2R_WORKER_WARM_UP": "1"})
    cold = start_worker(tmp_path / "cold", concurrency=1, extra_env={"H2R_WORKER_WARM_UP": "0"})
    try:
        deadline = time.monotonic() + 30
        while _pool_maps(warm) != set(LOADED) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _pool_maps(warm) == set(LOADED), warm.log()[-2000:]
        while not _pool_maps(cold) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _pool_maps(cold) == {"aiohttp/_http_parser"}, cold.log()[-2000:]
        assert _pool_maps(cold, main=True) == {"aiohttp/_http_parser"}
        for worker in (warm, cold):
            settled = re.findall(
                r"/ForkPoolWorker-1\] heap settled: (\d+) objects frozen", worker.log()
            )
            # Django, the apps and the client: well over 100,000 objects, frozen once
            assert len(settled) == 1 and int(settled[0]) > 100_000, worker.log()[-2000:]
    finally:
        warm.stop()
        cold.stop()


def test_warm_up_builds_the_ssl_context_every_client_of_the_process_shares():
    from benchmarks.llm import openai_compat

    openai_compat._ssl_context.cache_clear()
    openai_compat.warm_up(tokens=False)
    _, httpx = openai_compat._client_libs()
    assert openai_compat._ssl_context.cache_info().currsize == 1
    backend = openai_compat.OpenAICompatBackend(
        {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    )
    try:
        _ = backend.aclient
        assert openai_compat._ssl_context.cache_info().hits >= 1  # the client took that one
        assert openai_compat._ssl_context(httpx) is openai_compat._ssl_context(httpx)
    finally:
        backend.close()
