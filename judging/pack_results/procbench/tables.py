"""ProcBench's results (seed 003, notes §3): PA, SM, FM and PML by the Short / Medium / Long
step-count bins and overall (its Table 2, one table per metric), PA per task, and mean PML
against the problem length N. Pure: the bins and the means are the pack's own report helpers
(:func:`benchmarks.packs.procbench.per_bin`, :func:`step_bin`); the CIs and tests are
:mod:`judging.pack_results.common`'s.

An instance's N is the scorer's ``breakdown["n"]`` (the gold states t1 … tN); its task is the
item's ``task`` field (``(task not given)`` without one). Overall is the mean over every
instance, i.e. the example-weighted mean of the bins, as the paper's overall column.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from benchmarks.packs.procbench import DEFAULT_BINS, per_bin, step_bin
from judging.pack_results.common import (
    Bootstrap,
    Instance,
    comparison_table,
    curve,
)

METRIC_LABELS = {
    "pa": "PA (prefix accuracy)",
    "sm": "SM (sequential match)",
    "fm": "FM (final match)",
    "pml": "PML (prefix match length, steps)",
}
BIN_LABELS = {"short": "Short (N 2–6)", "medium": "Medium (N 7–16)", "long": "Long (N 17–25)"}
NO_TASK = "(task not given)"


def _n(inst: Instance) -> int | None:
    n = inst.breakdown.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def usable(instances: Sequence[Instance]) -> list[Instance]:
    """Instances with an N and the four metrics."""
    return [
        i
        for i in instances
        if _n(i) is not None
        and all(isinstance(i.metrics.get(m), int | float) for m in METRIC_LABELS)
    ]


def bin_means(instances: Sequence[Instance]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{generator: per_bin(...)}``: the pack's own means per bin and overall (the values the
    tables show; a test checks the tables agree)."""
    by_gen: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for inst in usable(instances):
        by_gen[inst.generator].append(
            {"n": _n(inst), **{m: inst.metrics[m] for m in METRIC_LABELS}}
        )
    return {g: per_bin(rows) for g, rows in sorted(by_gen.items())}


def build(instances: Sequence[Instance], boot: Bootstrap) -> dict[str, Any]:
    rows = usable(instances)
    bins = [name for name, _, _ in DEFAULT_BINS]
    # data[metric][generator][column] = {stratum: {item: value}}
    by_metric: dict[str, dict[str, dict[str, dict]]] = {
        m: defaultdict(lambda: defaultdict(dict)) for m in METRIC_LABELS
    }
    by_task: dict[str, dict[str, dict]] = defaultdict(lambda: defaultdict(dict))
    by_length: dict[str, dict[float, dict]] = defaultdict(lambda: defaultdict(dict))
    tasks: set[str] = set()
    for inst in rows:
        n = _n(inst)
        b = step_bin(n)
        task = str(inst.attrs.get("task") or NO_TASK)
        tasks.add(task)
        for m in METRIC_LABELS:
            value = float(inst.metrics[m])
            cols = by_metric[m][inst.generator]
            cols[b].setdefault("all", {})[inst.item] = value
            cols["overall"].setdefault("all", {})[inst.item] = value
        pa = float(inst.metrics["pa"])
        by_task[inst.generator][task].setdefault("all", {})[inst.item] = pa
        by_task[inst.generator]["overall"].setdefault("all", {})[inst.item] = pa
        by_length[inst.generator][float(n)].setdefault("all", {})[inst.item] = float(
            inst.metrics["pml"]
        )
    columns = [(b, BIN_LABELS[b]) for b in bins] + [("overall", "Overall")]
    tables = [
        comparison_table(
            table_id=f"bins-{m}",
            title=f"{METRIC_LABELS[m]} by problem length (Table 2)",
            caption=(
                f"Mean {m.upper()} per step-count bin and overall (the example-weighted mean of "
                "the bins), 95% bootstrap CI over instances; n = instances."
            ),
            columns=columns,
            data={g: by_metric[m][g] for g in sorted(by_metric[m])},
            rank_by="overall",
            boot=boot,
            digits=2 if m == "pml" else 3,
        )
        for m in ("pa", "sm", "fm", "pml")
    ]
    task_columns = [(t, t) for t in sorted(tasks)] + [("overall", "All tasks")]
    tables.append(
        comparison_table(
            table_id="tasks-pa",
            title="PA per task",
            caption="Mean PA per task, 95% bootstrap CI over instances; n = instances.",
            columns=task_columns,
            data={g: by_task[g] for g in sorted(by_task)},
            rank_by="overall",
            boot=boot,
        )
    )
    curves = [
        curve(
            curve_id="pml-length",
            title="Mean PML against problem length N",
            x_label="problem length N (steps)",
            y_label="mean PML (steps)",
            data={g: by_length[g] for g in sorted(by_length)},
            boot=boot,
            digits=2,
            y_integer=True,  # steps: the ticks are whole steps
        )
    ]
    notes = []
    left_out = len(instances) - len(rows)
    if left_out:
        notes.append(f"{left_out} scored instance(s) without N or the four metrics left out.")
    return {
        "tables": tables,
        "curves": curves,
        "notes": notes,
        "headline": "bins-pa",
        "pack_summary": bin_means(rows),
    }
