"""USD cost of LLM usage. Pure Python, no Django.

A stage's backend config may carry ``price_in_per_mtok`` / ``price_out_per_mtok`` (USD per
million prompt / completion tokens). Without them, known model names use the list prices below
(GPT-4.1 is what the seed's pipeline used, §3.2); unknown models cost 0 (shown as unpriced). A stage on the ``replay`` backend costs 0: it
answers from recorded replies and sends nothing.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from benchmarks.llm.batch_rate import price_factor

# USD per million tokens (input, output), standard (non-batch) API prices.
LIST_PRICES: dict[str, tuple[str, str]] = {
    "gpt-4.1": ("2.00", "8.00"),
    "gpt-4.1-mini": ("0.40", "1.60"),
    "gpt-4.1-nano": ("0.10", "0.40"),
    "gpt-4o": ("2.50", "10.00"),
    "gpt-4o-mini": ("0.15", "0.60"),
}
MILLION = Decimal(1_000_000)


def prices_for(config: dict[str, Any] | None) -> tuple[Decimal, Decimal] | None:
    config = config or {}
    if config.get("backend") == "replay":  # recorded replies: nothing is sent, nothing is paid
        return Decimal(0), Decimal(0)
    if config.get("price_in_per_mtok") is not None or config.get("price_out_per_mtok") is not None:
        return Decimal(str(config.get("price_in_per_mtok") or 0)), Decimal(
            str(config.get("price_out_per_mtok") or 0)
        )
    model = str(config.get("model") or "").lower()
    for name in sorted(LIST_PRICES, key=len, reverse=True):
        if model == name or model.startswith(name + "-20"):
            p_in, p_out = LIST_PRICES[name]
            return Decimal(p_in), Decimal(p_out)
    return None


def cost_usd(config: dict[str, Any] | None, prompt_tokens: int, completion_tokens: int) -> Decimal:
    prices = prices_for(config)
    if prices is None:
        return Decimal(0)
    p_in, p_out = prices
    # a stage on a provider's Batch API is billed at the batch rate (OpenAI: half)
    return (p_in * prompt_tokens + p_out * completion_tokens) * price_factor(config or {}) / MILLION
