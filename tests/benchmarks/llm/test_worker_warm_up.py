"""``H2R_WORKER_WARM_UP=1``: a real Celery worker's pool process loads the LLM client's HTTP
transport (aiohttp) and the token counter when it starts, before any chunk; without it, it
loads neither until a chunk needs them."""

from __future__ import annotations

import time

import psutil
import pytest

from tests.support.worker import start_worker

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

LOADED = ("aiohttp/_http_parser", "bpe_openai/_bindings")


def _pool_maps(worker) -> set[str]:
    """The extension modules of ``LOADED`` mapped by the worker's pool process."""
    found = set()
    for child in psutil.Process(worker.proc.pid).children(recursive=True):
        for m in child.memory_maps():
            found |= {name for name in LOADED if name in m.path}
    return found


def test_a_warm_worker_loads_the_llm_client_at_start_a_cold_one_does_not(tmp_path):
    (tmp_path / "warm").mkdir()
    (tmp_path / "cold").mkdir()
    warm = start_worker(tmp_path / "warm", concurrency=1, extra_env={"H2R_WORKER_WARM_UP": "1"})
    cold = start_worker(tmp_path / "cold", concurrency=1, extra_env={"H2R_WORKER_WARM_UP": "0"})
    try:
        deadline = time.monotonic() + 30
        while _pool_maps(warm) != set(LOADED) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _pool_maps(warm) == set(LOADED), warm.log()[-2000:]
        assert _pool_maps(cold) == set(), cold.log()[-2000:]
    finally:
        warm.stop()
        cold.stop()
