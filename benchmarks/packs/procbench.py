"""ProcBench (seed 003, notes §3): PML, PA, SM and FM over state sequences, with typed equality,
plus the report helpers of the paper (step-count bins, the "at or beyond step k" curve, the
item-health list). Pure: no Django imports.

T = (t1 … tN) is the gold sequence (intermediate states, then the final state; the initial
state t0 is given in the question and never predicted), P = (p1 … pM) the prediction:

- PML = max{k : ti = pi for all 1 ≤ i ≤ k}
- PA  = PML / max(N, M)
- SM  = 1 if PA = 1 else 0
- FM  = 1 if tN = pM else 0 (0 when M = 0)

[FLAG] (notes §3.2, §5.1) the paper leaves empty or unparseable predictions and a missing final
state unspecified; both are named options here (``missing_prediction``, ``missing_final``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from benchmarks.packs.registry import PackScorer, RecordError, Scored, json_type, register

METRICS = ("pml", "pa", "sm", "fm")

# Notes §3.1: Short N = 2–6, Medium 7–16, Long 17–25 (inclusive). N below the first bin counts
# in the first, N above the last in the last.
DEFAULT_BINS: tuple[tuple[str, int, int], ...] = (
    ("short", 2, 6),
    ("medium", 7, 16),
    ("long", 17, 25),
)

MISSING_PREDICTION = ("empty", "error")  # default "empty": scored as M = 0 (all four metrics 0)
MISSING_FINAL = ("none", "error")  # default "none": P = intermediates only, FM = 0


# --- typed equality -----------------------------------------------------------------------------


def states_equal(a: Any, b: Any) -> bool:
    """Typed equality of two JSON states (notes §3.2): a string never equals a number
    (``"1" != 1``), a boolean never equals a number (``true != 1``), strings compare exactly
    (case and spaces count), numbers by value (``1 == 1.0``), lists (and objects) only when
    every element matches in order; ``null`` equals only ``null``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(states_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(states_equal(a[k], b[k]) for k in a)
    return a is None and b is None


# --- the four metrics ---------------------------------------------------------------------------


def sequence_metrics(
    gold: Sequence[Any], prediction: Sequence[Any], *, final_stated: bool = True
) -> Scored:
    """PML, PA, SM, FM of ``prediction`` against ``gold`` (both without t0), with a per-item
    breakdown: ``n`` (N), ``m`` (M), ``matches`` (one boolean per position up to max(N, M);
    a missing or extra position is False), ``first_divergence`` (1-based step of the first
    difference, None when SM = 1) and ``divergence`` (``mismatch``: a wrong state;
    ``missing``: the prediction stops early; ``extra``: it goes on after the gold end).
    ``final_stated=False`` (the parsed answer had no final state) forces FM = 0."""
    n, m = len(gold), len(prediction)
    if n == 0:
        raise RecordError("must hold at least one state (t1 … tN)", field="gold")
    matches = [i < n and i < m and states_equal(gold[i], prediction[i]) for i in range(max(n, m))]
    pml = 0
    while pml < min(n, m) and matches[pml]:
        pml += 1
    pa = pml / max(n, m)
    sm = 1 if pml == n == m else 0
    fm = 1 if m > 0 and final_stated and states_equal(gold[-1], prediction[-1]) else 0
    if sm:
        first, kind = None, None
    else:
        first = pml + 1
        kind = "mismatch" if pml < min(n, m) else ("missing" if m < n else "extra")
    breakdown = {
        "n": n,
        "m": m,
        "matches": matches,
        "first_divergence": first,
        "divergence": kind,
    }
    return Scored({"pml": pml, "pa": pa, "sm": sm, "fm": fm}, breakdown)


def _as_sequence(value: Any, field: str, *, missing_final: str) -> tuple[list[Any], bool]:
    """A list of states as given, or ``{"intermediate": [...], "final": x}`` (the paper's parsed
    JSON) turned into intermediates + [final]; returns (states, final_stated)."""
    if isinstance(value, list):
        return value, True
    if isinstance(value, Mapping):
        inter = value.get("intermediate", [])
        if not isinstance(inter, list):
            raise RecordError(
                f"'intermediate' must be an array, got {json_type(inter)}", field=field
            )
        if "final" not in value:
            if missing_final == "error":
                raise RecordError("has no 'final' state", field=field)
            return list(inter), False
        return [*inter, value["final"]], True
    raise RecordError(
        f"must be an array of states or an object {{intermediate, final}}, got {json_type(value)}",
        field=field,
    )


def score_record(
    record: Mapping[str, Any],
    *,
    missing_prediction: str = "empty",
    missing_final: str = "none",
) -> Scored:
    """Score one ``{"id", "gold": [t1…tN], "prediction": [p1…pM]}`` record.

    ``missing_prediction`` ([FLAG]): ``empty`` (default) scores an absent or ``null`` prediction
    as M = 0, so PML = PA = SM = FM = 0 (the paper's formula with max(N, 0) = N; an
    unparseable answer is a wrong answer, as in the paper's tables); ``error`` rejects the
    record. ``missing_final`` ([FLAG]): for the object form, ``none`` (default) scores the
    intermediates alone and sets FM = 0 (no final state was stated); ``error`` rejects it."""
    if missing_prediction not in MISSING_PREDICTION:
        raise ValueError(f"missing_prediction must be one of {MISSING_PREDICTION}")
    if missing_final not in MISSING_FINAL:
        raise ValueError(f"missing_final must be one of {MISSING_FINAL}")
    if not isinstance(record, Mapping):
        raise RecordError(f"expected a JSON object, got {json_type(record)}")
    if "gold" not in record:
        raise RecordError("is required (an array of states t1 … tN)", field="gold")
    gold, _ = _as_sequence(record["gold"], "gold", missing_final="error")
    pred = record.get("prediction")
    if pred is None:
        if missing_prediction == "error":
            raise RecordError("is missing or null", field="prediction")
        pred, stated = [], False
    else:
        pred, stated = _as_sequence(pred, "prediction", missing_final=missing_final)
    return sequence_metrics(gold, pred, final_stated=stated)


# --- report helpers -----------------------------------------------------------------------------


def step_bin(n_steps: int, bins: Sequence[tuple[str, int, int]] = DEFAULT_BINS) -> str:
    """The name of the step-count bin of an item with N steps."""
    for name, low, high in bins:
        if low <= n_steps <= high:
            return name
    return bins[0][0] if n_steps < bins[0][1] else bins[-1][0]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def per_bin(
    rows: Iterable[Mapping[str, Any]],
    *,
    metrics: Sequence[str] = METRICS,
    bins: Sequence[tuple[str, int, int]] = DEFAULT_BINS,
) -> dict[str, dict[str, Any]]:
    """Mean of each metric per step-count bin and overall. Each row has ``n`` (the item's N,
    as in the breakdown) and the metrics. Overall is the mean over all items, i.e. the
    example-weighted mean of the bins (notes §3.2)."""
    groups: dict[str, list[Mapping[str, Any]]] = {name: [] for name, _, _ in bins}
    everything: list[Mapping[str, Any]] = []
    for row in rows:
        groups[step_bin(int(row["n"]), bins)].append(row)
        everything.append(row)
    out: dict[str, dict[str, Any]] = {}
    for name, members in [*groups.items(), ("overall", everything)]:
        summary: dict[str, Any] = {
            k: _mean([float(r[k]) for r in members if r.get(k) is not None]) for k in metrics
        }
        summary["n"] = len(members)
        out[name] = summary
    return out


def overall_from_bins(bin_summaries: Mapping[str, Mapping[str, Any]], metric: str) -> float:
    """The overall figure from per-bin means and counts (weights = items per bin), as the
    paper's Table 2 overall column: o1-preview PA (0.799·50 + 0.736·100 + 0.599·90)/240."""
    total = sum(int(s["n"]) for s in bin_summaries.values())
    return sum(float(s[metric]) * int(s["n"]) for s in bin_summaries.values()) / total


def at_or_beyond_curve(
    rows: Iterable[Mapping[str, Any]], *, among: str = "all", max_k: int | None = None
) -> list[dict[str, Any]]:
    """The paper's Figure 4: for each step threshold k = 1 … max N, the proportion of items whose
    prediction is correct at least up to step k (PML ≥ k). Each row has ``pml`` and ``n``.
    ``among="all"`` (default) divides by every item, as the figure; ``among="eligible"``
    divides by the items that have at least k steps (N ≥ k)."""
    if among not in ("all", "eligible"):
        raise ValueError("among must be 'all' or 'eligible'")
    items = [(int(r["pml"]), int(r["n"])) for r in rows]
    top = max_k if max_k is not None else max((n for _, n in items), default=0)
    curve = []
    for k in range(1, top + 1):
        pool = items if among == "all" else [(p, n) for p, n in items if n >= k]
        hits = sum(1 for p, _ in pool if p >= k)
        curve.append({"k": k, "proportion": hits / len(pool) if pool else None, "n": len(pool)})
    return curve


def item_health(
    rows: Iterable[Mapping[str, Any]],
    *,
    metric: str = "pa",
    threshold: float = 0.0,
    min_models: int = 2,
) -> list[dict[str, Any]]:
    """Items every model fails (notes §3.5: 91 of 5,520 have PA = 0 for all models), worth a
    human look as possibly broken. Each row is ``{"id", "model", <metric>}``; an item is
    listed when it was scored for at least ``min_models`` models and every model's value is
    ≤ ``threshold``. Returns ``[{"id", "models", "best"}]`` sorted by id (as text)."""
    by_item: dict[Any, dict[str, float]] = defaultdict(dict)
    for row in rows:
        value = row.get(metric)
        if value is None:
            continue
        model = str(row["model"])
        prev = by_item[row["id"]].get(model)
        by_item[row["id"]][model] = float(value) if prev is None else max(prev, float(value))
    flagged = [
        {"id": item, "models": len(models), "best": max(models.values())}
        for item, models in by_item.items()
        if len(models) >= min_models and max(models.values()) <= threshold
    ]
    return sorted(flagged, key=lambda r: str(r["id"]))


PROCBENCH = register(
    PackScorer(
        name="procbench",
        metrics=METRICS,
        score=score_record,
        description=(
            'ProcBench PML / PA / SM / FM; in {"id", "gold": [t1…tN], "prediction": [p1…pM]} '
            "(states: any JSON values; t0 left out)"
        ),
        options={"missing_prediction": "empty", "missing_final": "none"},
    )
)
