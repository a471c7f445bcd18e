"""How2Score aggregation, with the reference implementation's definitions and field names
(``h2e bench`` aggregate): parse failures are excluded from the score and counted.
Pure Python (no Django).

Input records are dicts with ``topic``, ``has_failure``, ``n_failures``, ``parse_failed``
and optionally ``completion_tokens`` (generated tokens of the candidate, for the average
beside the score, Figure 4).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def how2score(records: Iterable[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(summary, by_topic rows sorted by topic)."""
    total = n_parse_failed = with_fail = sum_failures = 0
    tok_sum = tok_n = 0
    topics: dict[str, dict[str, int]] = defaultdict(
        lambda: {"n_judged": 0, "n_with_failures": 0, "sum_failures": 0, "n_parse_failed": 0}
    )
    for rec in records:
        total += 1
        topic = rec.get("topic") or ""
        topic = topic if isinstance(topic, str) else str(topic)
        bucket = topics[topic]
        if rec.get("generated_tokens") is not None:
            tok_sum += _int(rec["generated_tokens"])
            tok_n += 1
        if bool(rec.get("parse_failed", False)):
            n_parse_failed += 1
            bucket["n_parse_failed"] += 1
            continue
        bucket["n_judged"] += 1
        n_failures = _int(rec.get("n_failures", 0))
        if bool(rec.get("has_failure", False)):
            with_fail += 1
            bucket["n_with_failures"] += 1
        sum_failures += n_failures
        bucket["sum_failures"] += n_failures

    n_scored = total - n_parse_failed
    failure_rate = with_fail / n_scored if n_scored else 0.0
    score = 1.0 - failure_rate if n_scored else 0.0
    summary: dict[str, Any] = {
        "how2score": score,
        "how2score_percent": 100.0 * score,
        "n_examples": n_scored,
        "n_with_failures": with_fail,
        "failure_rate": failure_rate,
        "avg_failures_per_example": sum_failures / n_scored if n_scored else 0.0,
        "n_parse_failed": n_parse_failed,
        "avg_generated_tokens": (tok_sum / tok_n) if tok_n else None,
    }
    rows: list[dict[str, Any]] = []
    for topic in sorted(topics):
        b = topics[topic]
        n = b["n_judged"]
        fr = b["n_with_failures"] / n if n else 0.0
        hs = 1.0 - fr if n else 0.0
        rows.append(
            {
                "topic": topic,
                "n_judged": n,
                "n_with_failures": b["n_with_failures"],
                "how2score": hs,
                "how2score_percent": 100.0 * hs,
                "failure_rate": fr,
                "avg_failures_per_example": b["sum_failures"] / n if n else 0.0,
                "n_parse_failed": b["n_parse_failed"],
            }
        )
    return summary, rows
