"""What the escalation page shows: the report of :mod:`validation.escalation.reads` in words
(:mod:`validation.escalation.words`), its figures formatted once, the scan of thresholds, the
items below the threshold, and the escalation recorded on the study."""

from __future__ import annotations

from typing import Any

from annotation.models import Study
from core.formatting import fmt_number, fmt_percent
from validation.escalation.reads import source_ids
from validation.escalation.words import applied_sentence, report_sentences

ITEMS_SHOWN = 200


def _yes_no(value: bool | None, *, yes: str, no: str) -> str:
    return "—" if value is None else (yes if value else no)


def figures(report: dict[str, Any]) -> list[tuple[str, str]]:
    cal, held = report["calibration"], report["held_out"]
    return [
        ("Confidence threshold", fmt_number(cal["threshold"], 2, undefined="none passed")),
        ("Share the judge decides (calibration half)", fmt_percent(cal["share_decided"], 1)),
        (
            "Guaranteed agreement",
            f"≥ {fmt_percent(cal['guaranteed_agreement'], 0)} with probability "
            f"≥ {fmt_percent(1 - report['delta'], 0)}",
        ),
        (
            "Share the judge decides (held-out half)",
            fmt_percent(held["share_decided"], 1, undefined="—"),
        ),
        (
            "Agreement observed on held-out labels",
            fmt_percent(held["agreement_decided"], 1, undefined="— (the judge decides none)"),
        ),
        ("Calibration items", f"{cal['n_calibration']:,}"),
        ("Held-out items", f"{held['n']:,}"),
    ]


def steps(report: dict[str, Any]) -> list[dict[str, str]]:
    return [
        {
            "threshold": fmt_number(s["threshold"], 2),
            "n": f"{s['n']:,}",
            "disagree": f"{s['n_disagree']:,}",
            "risk": fmt_percent(s["risk"], 1),
            "p": f"{s['p_value']:.3g}",
            "passed": "passed" if s["passed"] else "failed: the scan stops",
        }
        for s in report["calibration"]["steps"]
    ]


def escalated_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    shown = report["escalated"][:ITEMS_SHOWN]
    sources = source_ids([e["generation_id"] for e in shown])
    return [
        {
            "item_id": e["item_id"],
            "source": sources.get(e["generation_id"], f"generation {e['generation_id']}"),
            "confidence": fmt_number(
                e["confidence"], 2, undefined="none (not judged, or no parsed sample)"
            ),
            "judge": _yes_no(e["judge_says_failure"], yes="has_failure", no="no_failure"),
            "human": _yes_no(e["human_majority_failure"], yes="has_failure", no="no_failure"),
        }
        for e in shown
    ]


def recorded(study: Study | None) -> str:
    """The escalation recorded on the study, in words; empty when none."""
    escalation = ((study.design or {}).get("escalation") if study else None) or {}
    return applied_sentence(escalation) if escalation else ""


def report_context(report: dict[str, Any]) -> dict[str, Any]:
    return {
        "report": report,
        "sentences": report_sentences(report),
        "figures": figures(report),
        "steps": steps(report),
        "escalated": escalated_rows(report),
        "n_escalated_hidden": max(0, len(report["escalated"]) - ITEMS_SHOWN),
    }
