"""SciRecipe's results (Thoth, seed 004 §4.2, notes §4.5): its Table 1 per generator, the nine
metrics Semantic-A, Order-LCS, Order-S, Order-Tau, Step-M, BLEU-AVG, ROUGE-L, METEOR and KW-F1
(×100) with their unweighted mean "Avg"; SCORE and its parts (raw scale); BLEU-1…4 (×100); and
the five evaluation metrics by level (Level 1: fewer than 4 gold actions). Pure: the CIs and
tests are :mod:`judging.pack_results.common`'s.

Avg of an instance is the mean of the Table 1 metrics that have a value on every instance of the
page (KW-F1 is opt-in, `--option kw_f1=keybert`; the lexical metrics need a reference text);
the metrics left out are named in a note, so Avg is always a mean over the same metrics. Its
mean over instances is then the mean of the columns' means, as the paper's Avg.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from judging.pack_results.common import Bootstrap, Instance, comparison_table

# Table 1's nine metrics in its column order; their mean is "Avg".
TABLE1 = {
    "semantic_a": "Semantic-A",
    "order_lcs": "Order-LCS",
    "order_s": "Order-S",
    "order_tau": "Order-Tau",
    "step_m": "Step-M",
    "bleu_avg": "BLEU-AVG",
    "rouge_l": "ROUGE-L",
    "meteor": "METEOR",
    "kw_f1": "KW-F1",
}
SCORE_PARTS = {
    "score": "SCORE",
    "r_scale": "r_scale",
    "r_semantics": "r_semantics",
    "order_strict": "Order (strict)",
    "format_gate": "Format gate",
    "consistency_gate": "Consistency gate",
}
BLEU = {f"bleu_{n}": f"BLEU-{n}" for n in (1, 2, 3, 4)} | {"bleu_avg": "BLEU-AVG"}
LEVEL_METRICS = ("semantic_a", "order_lcs", "order_s", "order_tau", "step_m")
AVG = "avg"


def _value(metrics, key: str) -> float | None:
    value = metrics.get(key)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and value == value:
        return float(value)
    return None


def _mean(metrics, keys: Sequence[str]) -> float | None:
    """The mean of ``keys`` on one instance (None when there are none or one has no value)."""
    values = [_value(metrics, k) for k in keys]
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)


def avg_metrics(instances: Sequence[Instance]) -> tuple[list[str], list[str]]:
    """(Table 1 metrics with a value on every instance, those without)."""
    used = [
        m for m in TABLE1 if instances and all(_value(i.metrics, m) is not None for i in instances)
    ]
    return used, [m for m in TABLE1 if m not in used]


def _table(table_id, title, caption, columns, instances, *, boot, rank_by, scale, digits, avg=()):
    """A comparison table of one value per instance and column (``avg``: the mean of those
    metrics)."""
    data: dict[str, dict[str, dict]] = defaultdict(lambda: defaultdict(dict))
    for inst in instances:
        cols = data[inst.generator]
        for key, _label in columns:
            value = _mean(inst.metrics, avg) if key == AVG else _value(inst.metrics, key)
            if value is not None:
                cols[key].setdefault("all", {})[inst.item] = value
    return comparison_table(
        table_id=table_id,
        title=title,
        caption=caption,
        columns=columns,
        data={g: data[g] for g in sorted(data)},
        rank_by=rank_by,
        boot=boot,
        scale=scale,
        digits=digits,
    )


def build(instances: Sequence[Instance], boot: Bootstrap) -> dict[str, Any]:
    used, left_out = avg_metrics(instances)
    notes = []
    if left_out:
        names = ", ".join(TABLE1[m] for m in left_out)
        notes.append(
            f"Avg is the mean of {len(used)} of Table 1's nine metrics: {names} "
            "has no value on some instance (KW-F1 is computed only with the option kw_f1=keybert; "
            "the lexical metrics need a reference text)."
        )
    raw_semantic = any((_value(i.metrics, "semantic_a") or 0.0) > 1.0 for i in instances)
    why_over_100 = (
        " Semantic-A is on its raw scale, 0 to 1.5 (the scorer's default semantic_a=mean, the "
        "mean semantic term of §3.3.2), so ×100 it runs to 150 and Avg can pass 100; score with "
        "semantic_a=mean_normalized for 0 to 100."
        if raw_semantic
        else ""
    )
    if raw_semantic:
        notes.append("Table 1: values above 100 are Semantic-A's raw scale (see its caption).")
    table1_cols = [*TABLE1.items(), (AVG, "Avg")]
    tables = [
        _table(
            "table1",
            "SciRecipe-Eval metrics (Table 1)",
            "Mean ×100 over instances with a 95% bootstrap CI over instances; Avg is the mean of "
            "the metrics (per instance, then over instances); n = instances." + why_over_100,
            table1_cols,
            instances,
            boot=boot,
            rank_by=AVG,
            scale=100.0,
            digits=2,
            avg=used,
        ),
        _table(
            "score",
            "SCORE and its parts",
            "SCORE = format gate · consistency gate · r_scale · r_semantics (raw scale 0–2.5 by "
            "default); the gates and the strict order are the share of instances passing (0–1). "
            "Means with a 95% bootstrap CI over instances.",
            list(SCORE_PARTS.items()),
            instances,
            boot=boot,
            rank_by="score",
            scale=1.0,
            digits=3,
        ),
        _table(
            "bleu",
            "BLEU-1 … BLEU-4 and their mean",
            "NLTK sentence BLEU, cumulative uniform weights, smoothing method 1; ×100, 95% "
            "bootstrap CI over instances.",
            list(BLEU.items()),
            instances,
            boot=boot,
            rank_by="bleu_avg",
            scale=100.0,
            digits=2,
        ),
    ]
    for level in (1, 2):
        subset = [i for i in instances if i.metrics.get("level") == level]
        if subset:
            tables.append(
                _table(
                    f"level{level}",
                    f"Level {level} ({'fewer than 4' if level == 1 else '4 or more'} gold actions)",
                    "The five evaluation metrics ×100 on this level's instances, with their "
                    "mean; 95% bootstrap CI over instances.",
                    [*((m, TABLE1[m]) for m in LEVEL_METRICS), (AVG, "Avg (5 metrics)")],
                    subset,
                    boot=boot,
                    rank_by=AVG,
                    scale=100.0,
                    digits=2,
                    avg=LEVEL_METRICS,
                )
            )
    return {"tables": tables, "curves": [], "notes": notes, "headline": "table1"}
