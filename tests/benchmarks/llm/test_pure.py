"""Pure pieces of the LLM layer: retry policy, Retry-After parsing, token buckets."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from benchmarks.llm.ratelimit import RateLimiter
from benchmarks.llm.retry import RetryPolicy, parse_retry_after


def test_backoff_grows_caps_and_jitters():
    policy = RetryPolicy(base_s=0.5, max_s=4.0, jitter=False)
    assert [policy.delay(a) for a in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    jittered = RetryPolicy(base_s=1.0, max_s=8.0)
    rng = random.Random(1)
    values = [jittered.delay(2, rng=rng) for _ in range(50)]
    assert all(2.0 <= v <= 4.0 for v in values) and len(set(values)) > 10


def test_retry_after_wins_and_is_capped():
    policy = RetryPolicy(base_s=0.5, max_s=1.0, retry_after_max_s=10.0)
    assert policy.delay(0, retry_after=3.0) == 3.0
    assert policy.delay(0, retry_after=60.0) == 10.0


def test_parse_retry_after_seconds_and_date():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    now = datetime(2026, 1, 1, tzinfo=UTC)
    header = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert abs(parse_retry_after(header, now=now) - 30.0) < 1e-6


def test_rate_limiter_with_fake_clock():
    clock = {"t": 0.0}
    slept: list[float] = []

    def sleep(s):
        slept.append(s)
        clock["t"] += s

    limiter = RateLimiter(
        requests_per_minute=60, tokens_per_minute=600, clock=lambda: clock["t"], sleep=sleep
    )
    for _ in range(60):
        assert limiter.acquire(tokens=1) == 0.0  # the burst
    waited = limiter.acquire(tokens=1)
    assert abs(waited - 1.0) < 1e-6  # 1 request/s refill
    # tokens: 600/min = 10/s; 539 left after 61 requests... ask for more than there is
    waited = limiter.acquire(tokens=600)
    assert waited > 0
    assert RateLimiter().acquire(tokens=10**9) == 0.0  # unlimited


# --- the backend contract -------------------------------------------------------------------


def test_limits_are_read_once_from_the_config():
    from benchmarks.llm.base import Limits

    assert Limits.from_config({}) == Limits(concurrency=8)
    limits = Limits.from_config(
        {"concurrency": "16", "requests_per_minute": 500, "tokens_per_minute": 0}
    )
    assert limits == Limits(concurrency=16, requests_per_minute=500, tokens_per_minute=None)
    for bad in ({"concurrency": -1}, {"concurrency": 2.5}, {"requests_per_minute": "lots"}):
        with pytest.raises(ValueError, match="must be a positive integer"):
            Limits.from_config(bad)
    with pytest.raises(ValueError, match="concurrency"):
        Limits.from_config({"concurrency": True})


def test_capabilities_and_the_one_routing_rule(settings):
    from benchmarks.llm.openai_compat import OpenAICompatBackend
    from benchmarks.llm.registry import backend_class, queue_for
    from benchmarks.llm.vllm_offline import VLLMOfflineBackend

    assert backend_class("openai") is OpenAICompatBackend
    assert OpenAICompatBackend.capabilities.structured_output
    assert not OpenAICompatBackend.capabilities.gpu_worker
    assert VLLMOfflineBackend.capabilities.batch and VLLMOfflineBackend.capabilities.gpu_worker
    assert queue_for({"backend": "openai"}) is None
    assert queue_for({"backend": "vllm"}) == "gpu"
    settings.CELERY_GPU_QUEUE = "gpu-a100"
    assert queue_for({"backend": "vllm"}) == "gpu-a100"


def test_a_backend_must_subclass_the_contract():
    from benchmarks.llm.registry import backend_class

    with pytest.raises(ValueError, match="not a subclass of LLMBackend"):
        backend_class("benchmarks.llm.base.LLMRequest")
    with pytest.raises(ValueError, match="unknown LLM backend"):
        backend_class("nope")


def test_the_base_class_derives_many_and_one_from_iter():
    from benchmarks.llm.base import LLMBackend, LLMError, LLMRequest, LLMResponse

    class Reversed(LLMBackend):
        name = "reversed"

        def complete_iter(self, requests, *, should_stop=None):
            items = list(requests)
            for index in reversed(range(len(items))):
                text = items[index].prompt
                yield index, LLMError("boom") if text == "bad" else LLMResponse(text=text)

    backend = Reversed({"model": "m"})
    results = backend.complete_many([LLMRequest(prompt=p) for p in ("a", "bad", "c")])
    assert [getattr(r, "text", None) for r in results] == ["a", None, "c"]
    assert isinstance(results[1], LLMError)
    assert backend.complete(LLMRequest(prompt="x")).text == "x"
    with pytest.raises(LLMError, match="boom"):
        backend.complete(LLMRequest(prompt="bad"))
    with pytest.raises(ValueError, match="'model' is required"):
        Reversed({})
    backend.close()  # nothing to release: a no-op
