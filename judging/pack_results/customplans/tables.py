"""CustomPlans' results from a human study with the CustomPlans form (seed 002 §4.2, notes
§2.2–2.5): per generator (system), % CUSTOMIZED (majority Yes on Q2), % EXECUTABLE (Q1) and %
FULLYCORRECT (both majorities), as its Table 2; how often the raters answered No and flagged
each error type per question (Fig. 9); and the three outcomes by the hint's constraint type
(Fig. 10), expertise (Fig. 11) and critical type (Fig. 12). Pure: the CIs and tests are
:mod:`judging.pack_results.common`'s (0/1 outcomes: McNemar's exact test between
neighbours).

An item's outcome is the pack's majority rule over its raters' answers
(:func:`benchmarks.packs.customplans.aggregate_ratings`, the one home of FullyCorrect):
:func:`item_instances` turns annotations into one :class:`Instance` per rated generation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from benchmarks.packs import customplans as pack
from benchmarks.packs.registry import RecordError
from judging.pack_results.common import Bootstrap, Instance, comparison_table

OUTCOMES = {
    "customized": "CUSTOMIZED (Q2)",
    "executable": "EXECUTABLE (Q1)",
    "fully_correct": "FULLYCORRECT",
}
QUESTIONS = {"q1": "Q1 (executable)", "q2": "Q2 (customized)"}
ERROR_TYPES = pack.ERROR_TYPES
# The hint's metadata (CustomPlans App. A, Figure 13) and the paper's values, in its order.
SLICES = {
    "constraint": ("constraint type", "Fig. 10", ("prerequisite", "preference", "refinement")),
    "expertise": ("expertise", "Fig. 11", ("beginner", "intermediate", "expert")),
    "critical_type": ("critical type", "Fig. 12", ("constraint", "expertise", "both")),
}
NOT_RECORDED = "not recorded"


def hint_label(value: Any) -> str:
    text = str(value).strip().lower() if value is not None else ""
    return text or NOT_RECORDED


def item_instances(
    annotations: Iterable[Mapping[str, Any]],
) -> tuple[list[Instance], int]:
    """Annotations ``{generator, item, q1, q2, constraint?, expertise?, critical_type?}`` (the
    form's answers: ``["yes"]`` or error types) → one instance per (generator, item) with the
    majority outcomes (0/1), ``n_raters``, the share of raters answering No (``q1_no``) and
    flagging each error type (``q1_missing`` …) per question, and the hint's metadata as
    attributes; plus how many annotations were left out as unreadable (no valid answer)."""
    answers: dict[tuple[str, str], list[Mapping]] = defaultdict(list)
    attrs: dict[tuple[str, str], dict[str, str]] = {}
    for a in annotations:
        key = (str(a["generator"]), str(a["item"]))
        answers[key].append({q: a.get(q) for q in QUESTIONS})
        attrs.setdefault(key, {s: hint_label(a.get(s)) for s in SLICES})
    out: list[Instance] = []
    unreadable = 0
    for (generator, item), ratings in sorted(answers.items()):
        try:
            agg = pack.aggregate_ratings(ratings)
        except RecordError:
            unreadable += len(ratings)
            continue
        n = len(ratings)
        metrics: dict[str, Any] = {k: agg[k] for k in OUTCOMES}
        metrics["n_raters"] = n
        for q in QUESTIONS:
            no = sum(1 for r in ratings if not pack.answer_is_yes(r[q], q))
            metrics[f"{q}_no"] = no / n
            for e in ERROR_TYPES:
                metrics[f"{q}_{e}"] = agg[f"{q}_{e}"] / n
        out.append(Instance(generator, item, "customplans", metrics, {}, attrs[(generator, item)]))
    return out, unreadable


def slice_values(instances: Sequence[Instance], dimension: str) -> list[str]:
    """The paper's values of a dimension in its order, then others seen (sorted), then "not
    recorded" when some item has none."""
    seen = {hint_label(i.attrs.get(dimension)) for i in instances}
    known = list(SLICES[dimension][2])
    return (
        known
        + sorted(seen - set(known) - {NOT_RECORDED})
        + ([NOT_RECORDED] if NOT_RECORDED in seen else [])
    )


def _data(instances, column_of) -> dict[str, dict[str, dict]]:
    """data[generator][column] = {"all": {item: value}} from ``column_of(instance)`` →
    ``[(column, value), …]`` (a value that is not a number is left out)."""
    data: dict[str, dict[str, dict]] = defaultdict(lambda: defaultdict(dict))
    for inst in instances:
        for column, value in column_of(inst):
            if isinstance(value, int | float) and not isinstance(value, bool):
                data[inst.generator][column].setdefault("all", {})[inst.item] = float(value)
    return {g: data[g] for g in sorted(data)}


def rated(instances: Sequence[Instance]) -> list[Instance]:
    """Instances with the three majority outcomes (a scored generation without ratings has
    none)."""
    return [
        i for i in instances if all(isinstance(i.metrics.get(k), int | float) for k in OUTCOMES)
    ]


def build(instances: Sequence[Instance], boot: Bootstrap) -> dict[str, Any]:
    """Table 2, the problems flagged per question (when the instances come from a study: the
    pack's scored ratings carry no rater count), and the nine slice tables."""
    notes = []
    usable = rated(instances)
    left_out = len(instances) - len(usable)
    instances = usable
    if left_out:
        notes.append(f"{left_out} generation(s) without ratings left out.")
    tables = [
        comparison_table(
            table_id="table2",
            title="Customized, executable, fully correct (Table 2)",
            caption="% of items (goal + hint) where a strict majority of the raters said Yes to "
            "Q2 (customized), Q1 (executable), and both (FullyCorrect); 95% bootstrap CI over "
            "items; n = items.",
            columns=list(OUTCOMES.items()),
            data=_data(instances, lambda i: [(k, i.metrics.get(k)) for k in OUTCOMES]),
            rank_by="fully_correct",
            boot=boot,
            scale=100.0,
            digits=1,
        )
    ]
    with_shares = [i for i in instances if "q1_no" in i.metrics]
    if instances and not with_shares:
        notes.append(
            "The problems flagged per question need each rater's answer: choose a study with "
            "the CustomPlans form (the scored ratings give only the majorities)."
        )
    for q, label in QUESTIONS.items() if with_shares else ():
        columns = [(f"{q}_no", "No (any problem)")] + [(f"{q}_{e}", e) for e in ERROR_TYPES]
        tables.append(
            comparison_table(
                table_id=f"errors-{q}",
                title=f"{label}: problems flagged (Fig. 9)",
                caption="Mean over items of the % of raters who answered No, and who flagged "
                "each problem (a rater may flag several); 95% bootstrap CI over items.",
                columns=columns,
                data=_data(
                    with_shares, lambda i, cols=columns: [(c, i.metrics.get(c)) for c, _ in cols]
                ),
                rank_by=f"{q}_no",
                boot=boot,
                scale=100.0,
                digits=1,
            )
        )
    for dim, (name, figure, _known) in SLICES.items():
        values = slice_values(instances, dim)
        for outcome, label in OUTCOMES.items():
            tables.append(
                comparison_table(
                    table_id=f"{dim}-{outcome}",
                    title=f"{label} by {name} ({figure})",
                    caption=f"% of items {label.split(' ')[0].lower()} per {name} of the hint, "
                    "and over all items; 95% bootstrap CI over items; n = items.",
                    columns=[(v, v) for v in values] + [("all", "All items")],
                    data=_data(
                        instances,
                        lambda i, o=outcome, d=dim: [
                            (hint_label(i.attrs.get(d)), i.metrics.get(o)),
                            ("all", i.metrics.get(o)),
                        ],
                    ),
                    rank_by="all",
                    boot=boot,
                    scale=100.0,
                    digits=1,
                )
            )
    return {
        "tables": tables,
        "curves": [],
        "notes": notes,
        "headline": "table2",
        # Figures 10–12: FullyCorrect by each of the hint's dimensions, as bars
        "grouped_plots": [f"{dim}-fully_correct" for dim in SLICES],
    }
