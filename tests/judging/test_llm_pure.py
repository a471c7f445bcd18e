"""Pure pieces of the LLM layer: retry policy, Retry-After parsing, token buckets."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

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
