"""Retry policy: exponential backoff with full jitter, honouring Retry-After. Pure Python."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5
    base_s: float = 0.5
    max_s: float = 30.0
    jitter: bool = True
    retry_after_max_s: float = 300.0

    def delay(
        self, attempt: int, *, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based).

        A server's Retry-After wins (capped at ``retry_after_max_s``); otherwise ``base * 2**attempt``
        capped at ``max_s``, with full jitter in [cap/2, cap] so parallel callers spread out.
        """
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.retry_after_max_s)
        cap = min(self.max_s, self.base_s * (2**attempt))
        if not self.jitter:
            return cap
        r = (rng or random).random()
        return cap / 2 + r * cap / 2


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date); None if absent/invalid."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())
