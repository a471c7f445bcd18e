"""What the label-set pages show: the list with its provenance, and one label set's answers —
the judge-replacement verdict, the corrected How2Score per group with its interval and a small
forest plot (corrected, judge only, people only), α / κ / AC1, the disagreements — formatted
once, each naming the data it was computed on."""

from __future__ import annotations

from typing import Any

from core.formatting import fmt_interval, fmt_stat
from validation.alt_test.stats import ANNOTATORS_SAID
from validation.alt_test.words import annotator_line
from validation.models import LabelSet
from validation.ppi.page import forest_svg
from validation.ppi.words import interval, pct


def provenance(label_set: LabelSet) -> dict[str, Any]:
    c = label_set.counts or {}
    sources = []
    if label_set.filename:
        sources.append(
            f"file {label_set.filename} ({label_set.file_format.upper()}, "
            f"{label_set.file_bytes:,} bytes)"
        )
    if label_set.study_id:
        sources.append(f"people's labels of study {label_set.study.name}")
    if label_set.judge_id:
        sources.append(f"verdicts of judge {label_set.judge.name}")
    who = label_set.uploaded_by.get_username() if label_set.uploaded_by_id else "unknown"
    return {
        "sources": "; ".join(sources) or "no source recorded",
        "who": who,
        "when": label_set.uploaded_at,
        "counts": (
            f"{c.get('n_labels', 0):,} labels: {c.get('n_annotators', 0)} annotators on "
            f"{c.get('n_human_items', 0):,} items, {c.get('n_judges', 0)} judge(s) on "
            f"{c.get('n_judge_items', 0):,} items, {c.get('n_groups', 0)} group(s)"
        ),
        "annotators": ANNOTATORS_SAID.get(label_set.annotator_kind, label_set.annotator_kind),
    }


def _ppi_rows(ppi: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for i, g in enumerate(ppi["groups"]):
        rows.append(
            {
                "name": g["name"],
                "ppi": pct(g["how2score"]),
                "ci": interval(g["ci"]),
                "lam": "—" if g.get("lambda") is None else f"{g['lambda']:.2f}",
                "judge": pct(g["judge_only_how2score"]),
                "judge_ci": interval(g["judge_only_ci"]),
                "human": pct(g["human_only_how2score"]),
                "human_ci": interval(g["human_only_ci"]),
                "n_labelled": g["n_labelled"],
                "n_unlabelled": g["n_unlabelled"],
                "sentences": g["sentences"],
                "note": g.get("lambda_note", ""),
                "chart": forest_svg(g, name=g["name"], prefix=f"ppi-forest-{i}"),
            }
        )
    return rows


def _stat(stat: dict | None) -> dict[str, str]:
    if not stat:
        return {"value": "no value", "ci": ""}
    text = fmt_stat(stat, undefined="not computed: {reason}")
    return {"value": text, "ci": fmt_interval(stat) or ""}


def _agreement(report: dict[str, Any]) -> dict[str, Any]:
    if "undefined" in report:
        return {"undefined": report["undefined"]}
    return {
        "n_items": report["n_items"],
        "n_annotators": report["n_annotators"],
        "n_twice": report["n_items_labelled_twice"],
        "rows": [
            {"name": "Krippendorff's α", "key": "alpha", **_stat(report["alpha"])},
            {
                "name": "Cohen's κ, mean over pairs",
                "key": "kappa",
                **_stat(report["cohen_kappa"]["mean"]),
            },
            {"name": "Fleiss' κ", "key": "fleiss", **_stat(report["fleiss_kappa"])},
            {"name": "Gwet's AC1", "key": "ac1", **_stat(report["gwet_ac1"])},
            {
                "name": "Percent agreement",
                "key": "percent",
                "value": fmt_stat(
                    report["percent_agreement"], percent=True, undefined="not computed: {reason}"
                ),
                "ci": "",
            },
        ],
        "groups": [
            {
                "group": g["group"],
                "n_items": g["n_items"],
                "alpha": _stat(g["alpha"])["value"],
                "ac1": _stat(g["gwet_ac1"])["value"],
            }
            for g in report["groups"].get("group", [])
        ],
    }


def label_set_context(label_set: LabelSet, report: dict[str, Any]) -> dict[str, Any]:
    alt = report["alt_test"]
    return {
        "label_set": label_set,
        "provenance": provenance(label_set),
        "report": report,
        "alt": alt,
        "alt_lines": [annotator_line(a) for a in alt.get("annotators", [])],
        "ppi_rows": _ppi_rows(report["ppi"]),
        "agreement": _agreement(report["agreement"]),
        "disagreements": report["disagreements"],
    }
