"""Which backend configs use a provider's Batch API, and at what rate they are billed. Pure
Python, no Django (cost modules that must stay pure use it)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

DEFAULT_PRICE_FACTOR = Decimal("0.5")  # OpenAI bills batch requests at half the online price


def is_batch(config: dict[str, Any]) -> bool:
    """Whether a backend config asks for the provider's Batch API."""
    return config.get("mode") == "batch" or config.get("backend") == "openai-batch"


def price_factor(config: dict[str, Any]) -> Decimal:
    """What a request costs in batch mode relative to the online price (1 when not batch;
    ``batch_price_factor`` in the config, else :data:`DEFAULT_PRICE_FACTOR`)."""
    if not is_batch(config):
        return Decimal(1)
    value = config.get("batch_price_factor")
    return DEFAULT_PRICE_FACTOR if value in (None, "") else Decimal(str(value))
