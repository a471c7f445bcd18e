"""The agreement report: long-format label rows in, a JSON-ready dict out. Pure Python + numpy.

Rows (:class:`annotation.label_file.LabelRow`) come from a CSV
(:func:`annotation.label_file.parse_label_csv`, used by ``manage.py agreement_report``) or from
the study models (:mod:`annotation.selectors.report`); both give the same report.
:func:`report_to_text` renders the dict for a terminal. The statistics live in
:mod:`annotation.agreement`; every one appears here as ``{"value": x}`` or
``{"value": null, "undefined": "reason"}``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

from annotation import agreement as ag
from annotation.agreement import kappa_ci
from annotation.agreement.kappa import pair_tables
from annotation.label_file import LabelRow
from core.formatting import fmt_interval, fmt_stat, stat_value
from core.lazy import lazy_module

np = lazy_module("numpy")

MAX_TIES_LISTED = 200
# Annotator pairs: all listed up to MAX_PAIRS_LISTED; past it, the LOWEST_PAIRS_LISTED pairs
# with the lowest κ among those sharing at least PAIR_MIN_ITEMS items, and a summary.
MAX_PAIRS_LISTED = 500
LOWEST_PAIRS_LISTED = 50
PAIR_MIN_ITEMS = 10
BOOTSTRAP_METHOD = "percentile bootstrap over items (units resampled with replacement, fixed seed)"


# --- the report ------------------------------------------------------------------------------


def location_label(label: Hashable, step: int | None) -> str:
    """The first-failure variable: the label, plus the step when a first failure was located.

    Two annotators agree on it only if they gave the same label *and* the same first failing
    step, as in seed 000 §4.3's "agreement on the location of the first failure".
    """
    return str(label) if step is None else f"{label} @ step {step}"


def build_report(
    rows: Iterable[LabelRow],
    *,
    level: ag.Level = "nominal",
    categories: Sequence[Hashable] | None = None,
    group_columns: Sequence[str] = (),
    with_location: bool = False,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict:
    """The full agreement report as a JSON-ready dict (each statistic: docs/statistics.md).

    ``level`` applies to the label (nominal for ``has_failure``); ``categories`` orders
    ordinal labels that are words. ``with_location`` adds α on the first-failure location
    (always nominal). ``group_columns`` (e.g. topic, generator) add a per-group breakdown.
    A ``ValueError`` names what is wrong (an unknown level, ordinal words without an order).
    """
    rows = list(rows)
    options = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    matrix = ag.LabelMatrix.from_triples(
        ((r.item_id, r.annotator_id, r.label) for r in rows),
        categories=_category_order(rows, level=level, categories=categories),
    )
    names = [str(c) for c in matrix.categories]
    counts = matrix.value_counts()
    per_item = counts.sum(axis=1)
    report: dict = {
        "n_rows": len(rows),
        "n_items": len(matrix.items),
        "n_annotators": len(matrix.annotators),
        "n_items_labelled_twice": int((per_item >= 2).sum()),
        "categories": names,
        "level": level,
        "alpha": _alpha_with_ci(matrix, level, n_resamples, confidence, seed),
        "gwet_ac1": _ac1_with_ci(matrix, n_resamples, confidence, seed),
        "percent_agreement": ag.stat_json(ag.percent_agreement(matrix)),
        "fleiss_kappa": {
            **_kappa_with_ci(
                ag.fleiss_kappa(matrix), kappa_ci.fleiss_kappa_bootstrap_ci, counts, options
            ),
            "n_items": int((per_item >= 2).sum()),
            "n_items_excluded": int((per_item == 1).sum()),
            "excluded_reason": "labelled by one annotator only",
            "varying_raters": bool(len(set(per_item[per_item >= 2].tolist())) > 1),
        },
        "cohen_kappa": _pairs_json(matrix, options),
        "majority": _majority_json(matrix),
        "leave_one_out": _leave_one_out_json(matrix),
        "label_distribution": _distribution_json(matrix),
        "first_failure": None,
        "groups": {},
    }
    if with_location:
        location = ag.LabelMatrix.from_triples(
            (r.item_id, r.annotator_id, location_label(r.label, r.first_failure_step)) for r in rows
        )
        report["first_failure"] = {
            "alpha": _alpha_with_ci(location, "nominal", n_resamples, confidence, seed),
            "percent_agreement": ag.stat_json(ag.percent_agreement(location)),
            "n_categories": location.n_categories,
        }
    item_position = {item: i for i, item in enumerate(matrix.items)}
    for column in group_columns:
        group_of_item = np.empty(len(matrix.items), dtype=object)
        for r in rows:
            group_of_item[item_position[r.item_id]] = r.groups.get(column, "")
        breakdown = []
        for value in sorted(set(group_of_item.tolist()), key=str):
            sub = matrix.subset(group_of_item == value)
            breakdown.append(
                {
                    "group": value,
                    "n_items": len(sub.items),
                    "n_labels": sub.n_labels,
                    "alpha": _alpha_with_ci(sub, level, n_resamples, confidence, seed),
                    "gwet_ac1": _ac1_with_ci(sub, n_resamples, confidence, seed),
                    "percent_agreement": ag.stat_json(ag.percent_agreement(sub)),
                }
            )
        report["groups"][column] = breakdown
    return report


def _category_order(
    rows: list[LabelRow], *, level: str, categories: Sequence[Hashable] | None
) -> tuple[Hashable, ...] | None:
    if level not in ag.LEVELS:
        raise ValueError(f"level must be one of {', '.join(ag.LEVELS)}, not {level!r}")
    if categories is not None:
        given = [str(c) for c in categories]
        labels = {str(r.label) for r in rows}
        unknown = sorted(labels - set(given))
        if unknown:
            raise ValueError(f"labels missing from the category order: {', '.join(unknown)}")
        by_text = {str(r.label): r.label for r in rows}
        return tuple(by_text.get(c, c) for c in given)
    labels = {r.label for r in rows}
    numbers = {}
    for label in labels:
        try:
            numbers[label] = float(label)
        except (TypeError, ValueError):
            break
    else:
        return tuple(sorted(labels, key=lambda x: (numbers[x], str(x))))
    if level in ("interval", "ratio"):
        raise ValueError(f"{level} level needs numeric labels")
    if level != "nominal":
        raise ValueError(
            f"{level} level needs numeric labels or an explicit category order "
            "(--categories low,mid,high)"
        )
    return tuple(sorted(labels, key=str))


def _alpha_with_ci(
    matrix: ag.LabelMatrix, level: str, n_resamples: int, confidence: float, seed: int
) -> dict:
    value = ag.krippendorff_alpha(matrix, level=level)
    out = ag.stat_json(value)
    if isinstance(value, ag.Undefined) or n_resamples <= 0:
        return out
    ci = ag.alpha_bootstrap_ci(
        matrix, level=level, n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    out["ci"] = _ci_json(ci)
    return out


alpha_with_ci = _alpha_with_ci  # α with its bootstrap CI, for the form types' agreement levels


def _ci_json(ci: ag.BootstrapCI | ag.Undefined) -> dict:
    if isinstance(ci, ag.Undefined):
        return ci.to_json()
    return {
        "low": ci.low,
        "high": ci.high,
        "confidence": ci.confidence,
        "n_resamples": ci.n_resamples,
        "n_degenerate": ci.n_degenerate,
        "seed": ci.seed,
        "method": BOOTSTRAP_METHOD,
    }


def _ac1_with_ci(matrix: ag.LabelMatrix, n_resamples: int, confidence: float, seed: int) -> dict:
    """Gwet's AC1 (``pa``, ``pe``) with its percentile bootstrap CI over items."""
    value = ag.gwet_ac1(matrix)
    out = ag.stat_json(value)
    if isinstance(value, ag.Undefined):
        return out
    q = max(matrix.n_categories, 2)
    parts = ag.gwet_ac1_from_counts(matrix.value_counts(), q)
    out.update(pa=parts.pa, pe=parts.pe, n_categories=q)
    if n_resamples > 0:
        out["ci"] = _ci_json(
            ag.ac1_bootstrap_ci(
                matrix.value_counts(),
                n_categories=q,
                n_resamples=n_resamples,
                confidence=confidence,
                seed=seed,
            )
        )
    return out


def _kappa_with_ci(value: ag.Stat, interval, data, options: dict) -> dict:
    """κ with its percentile bootstrap CI over items (``interval(data, **options)``)."""
    out = ag.stat_json(value)
    if not isinstance(value, ag.Undefined) and options["n_resamples"] > 0:
        out["ci"] = _ci_json(interval(data, **options))
    return out


def _pairs_json(matrix: ag.LabelMatrix, options: dict) -> dict:
    """Cohen's κ per pair (CI over its shared items), their mean (CI over the study's items),
    and ``summary``: how κ spreads over the pairs that share at least
    :data:`PAIR_MIN_ITEMS` items. Up to :data:`MAX_PAIRS_LISTED` pairs every pair is listed;
    past that (thousands of annotators) ``pairs`` holds the :data:`LOWEST_PAIRS_LISTED` pairs
    with the lowest κ among those sharing enough items — the pairs worth a look — and
    ``pairs_listed`` says so."""
    tables = pair_tables(matrix)
    n_pairs = len(tables)
    if n_pairs <= MAX_PAIRS_LISTED:
        pairs = ag.pairwise_cohen_kappa(matrix)
        kappas = [p.kappa for p in pairs if not isinstance(p.kappa, ag.Undefined)]
        mean_value = float(np.mean(kappas)) if kappas else None
        listed = "all"
    else:
        values = kappa_ci.kappa_of_tables(tables.confusion)
        defined = values[np.isfinite(values)]
        mean_value = float(defined.mean()) if len(defined) else None
        enough = np.isfinite(values) & (tables.n_items >= PAIR_MIN_ITEMS)
        lowest = np.flatnonzero(enough)[np.argsort(values[enough], kind="stable")]
        chosen = lowest[:LOWEST_PAIRS_LISTED]  # the lowest κ first
        pairs = ag.pairwise_cohen_kappa(matrix, only=chosen, tables=tables)
        listed = "lowest"
    mean: ag.Stat = (
        mean_value
        if mean_value is not None
        else ag.Undefined("no pair of annotators has a defined κ")
    )
    return {
        "mean": _kappa_with_ci(mean, kappa_ci.mean_cohen_kappa_bootstrap_ci, matrix, options),
        "summary": _pairs_summary(tables),
        "pairs_listed": listed,
        "pairs": [
            {
                "annotator_a": str(p.annotator_a),
                "annotator_b": str(p.annotator_b),
                "n_items": p.n_items,
                "percent_agreement": ag.stat_json(p.percent_agreement),
                "kappa": _kappa_with_ci(
                    p.kappa, kappa_ci.cohen_kappa_bootstrap_ci, p.confusion, options
                ),
                "confusion": p.confusion.tolist(),
            }
            for p in pairs
        ],
    }


def _pairs_summary(tables) -> dict:
    """The pairs' count and how their κ spreads (over pairs sharing ≥ PAIR_MIN_ITEMS items)."""
    values = kappa_ci.kappa_of_tables(tables.confusion) if len(tables) else np.zeros(0)
    enough = np.isfinite(values) & (tables.n_items >= PAIR_MIN_ITEMS)
    kept = values[enough]
    out: dict = {
        "n_pairs": len(tables),
        "min_items": PAIR_MIN_ITEMS,
        "n_pairs_min_items": int(enough.sum()),
        "median_items": float(np.median(tables.n_items)) if len(tables) else None,
    }
    if len(kept):
        q1, median, q3 = np.percentile(kept, [25, 50, 75])
        out.update(
            mean={"value": float(kept.mean())},
            median={"value": float(median)},
            q1={"value": float(q1)},
            q3={"value": float(q3)},
            min={"value": float(kept.min())},
        )
    else:
        why = f"no pair shares {PAIR_MIN_ITEMS} items with a defined κ"
        out.update(
            {
                key: {"value": None, "undefined": why}
                for key in ("mean", "median", "q1", "q3", "min")
            }
        )
    return out


def _majority_json(matrix: ag.LabelMatrix) -> dict:
    names = [str(c) for c in matrix.categories]
    majority = ag.majority_labels(matrix)
    decided = majority.codes[majority.codes >= 0]
    distribution = np.bincount(decided, minlength=len(names))[: len(names)] if names else []
    tied = np.flatnonzero(majority.tie)
    return {
        "distribution": {name: int(n) for name, n in zip(names, distribution, strict=True)},
        "n_items": int((majority.n_labels > 0).sum()),
        "n_ties": len(tied),
        "ties": [
            {
                "item_id": str(matrix.items[i]),
                "counts": {
                    names[c]: int(majority.counts[i, c]) for c in majority.tied_categories(i)
                },
            }
            for i in tied[:MAX_TIES_LISTED]
        ],
        "ties_truncated": bool(len(tied) > MAX_TIES_LISTED),
    }


def _leave_one_out_json(matrix: ag.LabelMatrix) -> dict:
    rows = ag.leave_one_out(matrix)
    values = [r.agreement for r in rows if not isinstance(r.agreement, ag.Undefined)]
    return {
        "min": ag.stat_json(min(values) if values else ag.Undefined(ag.NO_ITEM_TWICE)),
        "max": ag.stat_json(max(values) if values else ag.Undefined(ag.NO_ITEM_TWICE)),
        "annotators": [
            {
                "annotator_id": str(r.annotator),
                "n_items": r.n_items,
                "n_compared": r.n_compared,
                "n_agree": r.n_agree,
                "n_others_tied": r.n_others_tied,
                "n_no_others": r.n_no_others,
                "agreement": ag.stat_json(r.agreement),
            }
            for r in rows
        ],
    }


def _distribution_json(matrix: ag.LabelMatrix) -> dict:
    names = [str(c) for c in matrix.categories]
    dist = ag.label_distribution(matrix)
    return {
        "overall": {n: int(x) for n, x in zip(names, dist["overall"], strict=True)},
        "by_annotator": {
            str(a): {n: int(x) for n, x in zip(names, row, strict=True)}
            for a, row in zip(matrix.annotators, dist["by_annotator"], strict=True)
        },
    }


# --- text rendering --------------------------------------------------------------------------


def _fmt(stat: Mapping, *, percent: bool = False) -> str:
    """A statistic for the text report: value (or why undefined), then its CI if it has one."""
    text = fmt_stat(stat, percent=percent, undefined="undefined ({reason})")
    ci = stat.get("ci")
    if stat_value(stat) is None or not ci:
        return text
    interval = fmt_interval(stat) or f"CI undefined: {ci.get('undefined')}"
    return f"{text}  [{interval}]"


def report_to_text(report: Mapping) -> str:
    """A plain-text rendering of :func:`build_report`'s dict."""
    out = [
        (
            f"Items: {report['n_items']}  annotators: {report['n_annotators']}"
            f"  labels: {report['n_rows']}"
            f"  items labelled twice or more: {report['n_items_labelled_twice']}"
        ),
        f"Categories: {', '.join(report['categories']) or '(none)'}",
        "",
        f"Krippendorff's alpha ({report['level']}): {_fmt(report['alpha'])}",
    ]
    if report.get("first_failure"):
        out.append(
            f"Krippendorff's alpha, first-failure location: {_fmt(report['first_failure']['alpha'])}"
        )
    fleiss = report["fleiss_kappa"]
    out += [
        f"Gwet's AC1: {_fmt(report['gwet_ac1'])}",
        f"Percent agreement (pairwise): {_fmt(report['percent_agreement'], percent=True)}",
        f"Fleiss' kappa: {_fmt(fleiss)}"
        + (
            f"  ({fleiss['n_items_excluded']} items labelled once left out)"
            if fleiss["n_items_excluded"]
            else ""
        ),
        f"Cohen's kappa, mean over pairs: {_fmt(report['cohen_kappa']['mean'])}",
    ]
    summary = report["cohen_kappa"].get("summary")
    if report["cohen_kappa"].get("pairs_listed") == "lowest" and summary:
        out.append(
            f"  {summary['n_pairs']} pairs; over the {summary['n_pairs_min_items']} sharing "
            f"{summary['min_items']}+ items: median {_fmt(summary['median'])}, "
            f"quartiles {_fmt(summary['q1'])}–{_fmt(summary['q3'])}; the lowest:"
        )
    for pair in report["cohen_kappa"]["pairs"]:
        out.append(
            f"  {pair['annotator_a']} × {pair['annotator_b']}: kappa {_fmt(pair['kappa'])}, "
            f"agreement {_fmt(pair['percent_agreement'], percent=True)} on {pair['n_items']} items"
        )
    out += ["", "Leave-one-out agreement with the others' majority:"]
    for row in report["leave_one_out"]["annotators"]:
        out.append(
            f"  {row['annotator_id']}: {_fmt(row['agreement'], percent=True)} "
            f"({row['n_agree']}/{row['n_compared']}; others tied on {row['n_others_tied']}, "
            f"no others on {row['n_no_others']})"
        )
    majority = report["majority"]
    out += [
        "",
        "Majority label per item: "
        + ", ".join(f"{k} {v}" for k, v in majority["distribution"].items())
        + f"; ties {majority['n_ties']}",
    ]
    for tie in majority["ties"][:20]:
        out.append(
            f"  tie on {tie['item_id']}: " + ", ".join(f"{k} {v}" for k, v in tie["counts"].items())
        )
    if majority["n_ties"] > 20:
        out.append(f"  … and {majority['n_ties'] - 20} more (see --format json)")
    dist = report["label_distribution"]
    out += ["", "Label distribution: " + ", ".join(f"{k} {v}" for k, v in dist["overall"].items())]
    for annotator, row in dist["by_annotator"].items():
        out.append(f"  {annotator}: " + ", ".join(f"{k} {v}" for k, v in row.items()))
    for column, groups in report["groups"].items():
        out += ["", f"By {column}:"]
        for g in groups:
            out.append(
                f"  {g['group']} ({g['n_items']} items): alpha {_fmt(g['alpha'])}, "
                f"agreement {_fmt(g['percent_agreement'], percent=True)}"
            )
    return "\n".join(out) + "\n"
