"""How2Score broken down by topic, by reference step-count bucket or by source domain (Tables
5–6 style), per generator, each cell with its 95% bootstrap CI over items, n and average
generated tokens.

The source breakdown groups by the procedure's URL domain (Table 5 lists the top domains per
topic): the ten domains with the most items keep their own row, the rest are pooled under
``(other domains)``. Table 6's WebOrganizer document format is not recorded on procedures, so
there is no breakdown by it."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from annotation.agreement import Undefined
from judging.stats.bootstrap import bootstrap_proportion_ci

STEP_BUCKETS = (
    (0, 6, "≤ 6"),
    (7, 8, "7–8"),
    (9, 10, "9–10"),
    (11, 12, "11–12"),
    (13, None, "≥ 13"),
)


def step_bucket(n: int) -> str:
    """The step-count bucket of a reference with ``n`` steps (How2Bench keeps 5–15)."""
    for low, high, label in STEP_BUCKETS:
        if low <= n and (high is None or n <= high):
            return label
    return STEP_BUCKETS[0][2]


def _bucket_order(label: str) -> int:
    return [b[2] for b in STEP_BUCKETS].index(label)


TOP_DOMAINS = 10
OTHER_DOMAINS = "(other domains)"
NO_DOMAIN = "(no URL)"


def url_domain(url: str | None) -> str:
    """The host of ``url``, lower-cased, without a leading ``www.``; ``(no URL)`` if none."""
    host = (urlsplit((url or "").strip()).hostname or "") if url else ""
    host = host.lower().removeprefix("www.")
    return host or NO_DOMAIN


def _domain_of(top: set[str]) -> Callable[[Mapping[str, Any]], str]:
    def key(r: Mapping[str, Any]) -> str:
        domain = url_domain(r.get("url"))
        return domain if domain in top else OTHER_DOMAINS

    return key


def _domain_order(label: str) -> Any:
    return (label in (OTHER_DOMAINS, NO_DOMAIN), label)


GROUPINGS: dict[str, tuple[str, Callable[[Mapping[str, Any]], str], Callable[[str], Any]]] = {
    "topic": ("Topic", lambda r: r.get("topic") or "(no topic)", lambda g: g),
    "steps": ("Reference step count", lambda r: step_bucket(int(r["ref_steps"])), _bucket_order),
    "domain": ("Source domain", lambda r: url_domain(r.get("url")), _domain_order),
}


def breakdown(
    rows: Iterable[Mapping[str, Any]],
    by: str,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """``{"by", "label", "groups": [...], "cells": [{generator, group, how2score, ci, n,
    avg_generated_tokens}]}``; ``by`` is ``topic``, ``steps`` or ``domain``."""
    if by not in GROUPINGS:
        raise ValueError(f"by must be one of {', '.join(GROUPINGS)}, not {by!r}")
    label, key, order = GROUPINGS[by]
    if by == "domain":
        rows = list(rows)
        by_item = {r.get("procedure_id", i): r for i, r in enumerate(rows)}
        items = Counter(url_domain(r.get("url")) for r in by_item.values())
        ranked = sorted(items.items(), key=lambda kv: (-kv[1], kv[0]))
        key = _domain_of({d for d, _ in ranked[:TOP_DOMAINS] if d != NO_DOMAIN} | {NO_DOMAIN})
    outcomes: dict[tuple[str, str], list[int]] = defaultdict(list)
    tokens: dict[tuple[str, str], list[int]] = defaultdict(list)
    for r in rows:
        cell = (r["generator"], key(r))
        outcomes[cell].append(int(r["no_failure"]))
        if r.get("gen_tokens") is not None:
            tokens[cell].append(int(r["gen_tokens"]))
    groups = sorted({g for _, g in outcomes}, key=order)
    cells = []
    for (generator, group), values in sorted(
        outcomes.items(), key=lambda kv: (kv[0][0], order(kv[0][1]))
    ):
        n, k = len(values), sum(values)
        ci = (
            bootstrap_proportion_ci(k, n, n_resamples=n_resamples, confidence=confidence, seed=seed)
            if n_resamples > 0
            else Undefined("no bootstrap asked")
        )
        toks = tokens[(generator, group)]
        cells.append(
            {
                "generator": generator,
                "group": group,
                "n": n,
                "n_no_failure": k,
                "how2score": k / n,
                "ci": ci.to_json(),
                "avg_generated_tokens": sum(toks) / len(toks) if toks else None,
            }
        )
    return {"by": by, "label": label, "groups": groups, "cells": cells}
