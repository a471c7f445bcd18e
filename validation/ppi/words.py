"""The PPI-corrected How2Score in words: one sentence a researcher can paste into a paper, then
what the judge's bias on the labelled items was and why the corrected score may lie outside
both of its inputs. Pure: no Django; takes :func:`validation.ppi.stats.how2score_ppi`'s dict."""

from __future__ import annotations

from typing import Any


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def interval(ci: list[float] | None) -> str:
    """A How2Score interval in percent, clipped to 0–100 (the normal interval may leave it)."""
    if ci is None:
        return "—"
    return f"{100 * max(0.0, ci[0]):.1f}–{100 * min(1.0, ci[1]):.1f}%"


def _of(judge: str, group: str) -> str:
    return f"{group}'s How2Score judged by {judge}" if group else f"the How2Score judged by {judge}"


def headline(r: dict[str, Any], *, judge: str, group: str = "") -> str:
    """The sentence to paste: the corrected score and interval with λ and the two inputs, or
    why there is no corrected score."""
    n_all = r["n_labelled"] + r["n_unlabelled"]
    if r["how2score"] is None:
        why = r.get("undefined") or "it cannot be computed"
        return (
            f"No corrected score for {_of(judge, group)}: {why}. The judge alone gives "
            f"{pct(r['judge_only_how2score'])} on {n_all} items; people alone "
            f"{pct(r['human_only_how2score'])} on {r['n_labelled']} items."
        )
    lam = r.get("lambda")
    lam_text = "" if lam is None else f", λ = {lam:.2f}"
    return (
        f"Corrected with {r['n_labelled']} items labelled by people, {_of(judge, group)} is "
        f"{pct(r['how2score'])} (95% CI {interval(r['ci'])}; PPI++{lam_text}), against "
        f"{pct(r['judge_only_how2score'])} from the judge alone on {n_all} items and "
        f"{pct(r['human_only_how2score'])} from people alone on {r['n_labelled']} items."
    )


def bias_sentence(r: dict[str, Any]) -> str:
    """The direction and size of the judge's bias on the labelled items, and what the
    correction does with it; empty without labelled items."""
    bias = r.get("labelled_bias")
    if not bias:
        return ""
    extra, missed = bias["judge_only_failures"], bias["human_only_failures"]
    diff = bias["failure_rate_difference"]
    points = abs(100 * diff)
    found = (
        f"On the {bias['n']} items people labelled, the judge finds failures people do not on "
        f"{100 * extra:.0f}% of items and misses failures they find on {100 * missed:.0f}%"
    )
    if points < 0.05:
        return found + ", so its raw score is not biased on them and the correction is small."
    direction = "low" if diff > 0 else "high"
    return (
        f"{found}, so its raw score is about {points:.0f} points {direction} there; the "
        "correction takes that bias, weighted by λ, out of the judge's score on all items."
    )


def outside_note(r: dict[str, Any]) -> str:
    """Why the corrected score lies outside both inputs, when it does; else empty."""
    score, judge, human = r["how2score"], r["judge_only_how2score"], r["human_only_how2score"]
    if score is None or judge is None or human is None:
        return ""
    if min(judge, human) <= score <= max(judge, human):
        return ""
    return (
        "The corrected score lies outside both inputs: it is the judge's score on the "
        "unlabelled items shifted by the judge's error measured on the labelled ones, so when "
        "the judge's verdicts on the unlabelled items differ from those on the labelled items, "
        "the shift can carry it past both figures. It is not an average of the two."
    )


def ppi_sentences(r: dict[str, Any], *, judge: str, group: str = "") -> list[str]:
    """The headline, then the bias, then (when it applies) why it lies outside its inputs."""
    return [
        s for s in (headline(r, judge=judge, group=group), bias_sentence(r), outside_note(r)) if s
    ]
