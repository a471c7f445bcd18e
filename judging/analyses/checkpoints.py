"""Training checkpoints: their metadata, How2Score against training progress (Figure 1b), the
D.3 formatting proxies beside it, and Spearman's ρ between two orderings of checkpoints (D.4,
e.g. How2Score against a user-supplied conditional perplexity).

A generator's checkpoint metadata is ``{"family": str, "size": str, "stage": str,
"step": int, "flops": float}``: ``family`` and one of ``step`` / ``flops`` are required for the
scaling plot; ``size`` and ``stage`` are labels.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from annotation.agreement import Undefined
from benchmarks.checkpoints import CHECKPOINT_KEYS, CheckpointError
from judging.stats.bootstrap import bootstrap_proportion_ci
from judging.stats.significance import spearman

PROXIES = (
    ("step_count_mismatch", "step-count mismatch"),
    ("duplicate_steps", "duplicate steps"),
    ("dup_ngram_rate", "dup n-gram rate"),
)
AXES = ("step", "flops")


def _per_generator(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        out[r["generator"]].append(r)
    return out


def checkpoint_summary(
    rows: Iterable[Mapping[str, Any]],
    checkpoints: Mapping[str, Mapping[str, Any]],
    *,
    axis: str = "step",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """One series per family, checkpoints ordered by ``axis`` (step or flops): How2Score with
    its bootstrap CI, average generated tokens and the three formatting proxies (D.3) per
    checkpoint. Generators without metadata on ``axis`` are left out and listed."""
    if axis not in AXES:
        raise CheckpointError(f"axis: must be one of {', '.join(AXES)}, not {axis!r}")
    series: dict[str, list[dict[str, Any]]] = defaultdict(list)
    left_out = []
    for generator, group in sorted(_per_generator(rows).items()):
        meta = checkpoints.get(generator) or {}
        if not meta.get("family") or meta.get(axis) is None:
            left_out.append(generator)
            continue
        n = len(group)
        k = sum(int(r["no_failure"]) for r in group)
        ci = bootstrap_proportion_ci(
            k, n, n_resamples=max(n_resamples, 1), confidence=confidence, seed=seed
        )
        tokens = [r["gen_tokens"] for r in group if r.get("gen_tokens") is not None]
        point = {
            "generator": generator,
            **{key: meta.get(key) for key in CHECKPOINT_KEYS},
            "x": meta[axis],
            "n": n,
            "how2score": k / n,
            "avg_generated_tokens": sum(tokens) / len(tokens) if tokens else None,
        }
        if n_resamples > 0:
            point["ci"] = ci.to_json()
        for key, _ in PROXIES:
            values = [float(r[key]) for r in group if r.get(key) is not None]
            point[key] = sum(values) / len(values) if values else None
        series[meta["family"]].append(point)
    for points in series.values():
        points.sort(key=lambda p: (p["x"], p["generator"]))
    return {
        "axis": axis,
        "families": [{"family": f, "checkpoints": series[f]} for f in sorted(series)],
        "left_out": left_out,
    }


def parse_value_column(text: str) -> dict[str, float]:
    """A user-supplied column: CSV ``generator,value`` (a header line is optional). Errors name
    the line."""
    out: dict[str, float] = {}
    reader = csv.reader(io.StringIO(text))
    for line, record in enumerate(reader, start=1):
        if not any(cell.strip() for cell in record):
            continue
        if len(record) != 2:
            raise CheckpointError(
                f"line {line}: expected 2 fields 'generator,value', found {len(record)}"
            )
        name, raw = record[0].strip(), record[1].strip()
        try:
            value = float(raw)
        except ValueError:
            if line == 1:
                continue  # a header
            raise CheckpointError(f"line {line}: value {raw!r} is not a number") from None
        if not math.isfinite(value):
            raise CheckpointError(f"line {line}: value {raw!r} is not a finite number")
        if not name:
            raise CheckpointError(f"line {line}: empty generator name")
        if name in out:
            raise CheckpointError(f"line {line}: generator {name!r} appears twice")
        out[name] = value
    if not out:
        raise CheckpointError("no 'generator,value' line found")
    return out


def _ranks(values: list[float], *, descending: bool) -> list[float]:
    """1 = best; ties share their average rank."""
    order = sorted(range(len(values)), key=lambda i: -values[i] if descending else values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def ordering_correlation(
    scores: Mapping[str, float],
    column: Mapping[str, float],
    *,
    lower_is_better: bool = True,
) -> dict[str, Any]:
    """Spearman's ρ between the checkpoint ranking by How2Score (higher better) and the ranking
    by ``column`` (lower better for a perplexity) over the generators in both, with each
    generator's two ranks. ρ = 1: the two orderings agree."""
    common = sorted(scores.keys() & column.keys())
    how2 = [scores[g] for g in common]
    other = [column[g] for g in common]
    rank_a = _ranks(how2, descending=True)
    rank_b = _ranks(other, descending=not lower_is_better)
    result = spearman(rank_a, rank_b) if common else None
    return {
        "n": len(common),
        "lower_is_better": lower_is_better,
        "spearman": result.to_json()
        if result
        else {"n": 0, "rho": Undefined("no generator in both").to_json(), "p_value": None},
        "rows": [
            {
                "generator": g,
                "how2score": how2[i],
                "value": other[i],
                "rank_how2score": rank_a[i],
                "rank_value": rank_b[i],
            }
            for i, g in enumerate(common)
        ],
        "missing_scores": sorted(column.keys() - scores.keys()),
    }
