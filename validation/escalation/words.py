"""An escalation report in words: what the judge may decide alone, what that guarantees, what
the held-out labels showed and what goes to people. Pure: the report dict in, sentences out."""

from __future__ import annotations

from typing import Any


def pct(share: float, digits: int = 0) -> str:
    return f"{100 * share:.{digits}f}%"


def levels(report: dict[str, Any]) -> str:
    return f"α = {report['alpha']:g}, δ = {report['delta']:g}"


def guarantee_sentence(report: dict[str, Any]) -> str:
    """The threshold and its guarantee, or that the judge decides nothing."""
    cal, judge = report["calibration"], report["judge"]["name"]
    sure = pct(1 - report["delta"])
    agree = pct(cal["guaranteed_agreement"])
    if cal["decides_nothing"]:
        top = cal["steps"][0]
        return (
            f"{judge} should decide nothing alone: even its most confident items (confidence "
            f"{top['threshold']:.2f}, {top['n']:,} of {cal['n_calibration']:,} calibration items, "
            f"{top['n_disagree']:,} against people) do not show agreement of at least {agree} "
            f"with {sure} certainty. Send every item to people, label more items, or accept a "
            f"larger α or δ."
        )
    return (
        f"{judge} can decide the items where its confidence is at least "
        f"{cal['threshold']:.2f} — {pct(cal['share_decided'])} of the "
        f"{cal['n_calibration']:,} calibration items — and on such items it agrees with the "
        f"human majority at least {agree} of the time, with {sure} certainty ({levels(report)})."
    )


def held_out_sentence(report: dict[str, Any]) -> str:
    """What the other half of the labelled items showed."""
    held, agree = report["held_out"], pct(report["calibration"]["guaranteed_agreement"])
    if not held["n_decided"]:
        return (
            f"On the {held['n']:,} held-out labelled items the judge decides none alone, so every "
            "one goes to people."
        )
    return (
        f"Checked on {held['n']:,} held-out labelled items: the judge would decide "
        f"{held['n_decided']:,} ({pct(held['share_decided'])}) and agreed with people on "
        f"{pct(held['agreement_decided'], 1)} of them (guaranteed: at least {agree})."
    )


def queue_sentence(report: dict[str, Any]) -> str:
    """What goes to people: the study's items below the threshold."""
    items = report["study_items"]
    if not items["n_decided"]:
        return f"All {items['n']:,} of the study's items go to people."
    missing = (
        f", {items['n_no_confidence']:,} of them because the judge has no confidence on them "
        "(not judged or no parsed sample)"
        if items["n_no_confidence"]
        else ""
    )
    return (
        f"{items['n_escalated']:,} of the study's {items['n']:,} items are below the threshold"
        f"{missing}: they are the ones to have people label first; the judge can decide the "
        f"other {items['n_decided']:,}."
    )


def report_sentences(report: dict[str, Any]) -> list[str]:
    out = [guarantee_sentence(report)]
    if not report["calibration"]["decides_nothing"]:
        out.append(held_out_sentence(report))
    out.append(queue_sentence(report))
    return out


def applied_sentence(escalation: dict[str, Any]) -> str:
    """What a study's recorded escalation did to its queue."""
    return (
        f"This study's queue puts {escalation['n_first']:,} items first: those below "
        f"{escalation['judge']}'s confidence threshold {escalation['threshold']:.2f} "
        f"(α = {escalation['alpha']:g}, δ = {escalation['delta']:g}, seed {escalation['seed']}), "
        f"set by {escalation['applied_by']} on {escalation['applied_at'][:10]}; the items are "
        "handed out in the fixed seeded order, these first."
    )
