"""A plan in words: one sentence a researcher can act on, then what it rests on. Pure."""

from __future__ import annotations

from typing import Any

from validation.active.stats import MIN_LABELLED_TO_STOP

SAME_WIDTH = 0.05  # within 5% of the uniform width: "about the same"


def money(amount: float, currency: str) -> str:
    return f"{amount:,.2f} {currency}".strip()


def points(half_width: float) -> str:
    """A half-width on How2Score (0 to 1) in points of the 0–100 score."""
    return f"±{100 * half_width:.1f} points"


def plan_sentence(plan: dict[str, Any], *, currency: str = "") -> str:
    """ "Label 464 items by people and have the judge label 2,392 …" — what to do and what it
    buys, against people alone."""
    n, big_n = plan["n"], plan["N"]
    conf = f"{round(100 * plan['confidence'])}%"
    width = f"{points(plan['half_width'])} on How2Score at {conf}"
    cost = money(plan["cost"], currency)
    if not plan["judge_pays"]:
        return (
            f"Label {n:,} items by people alone: {width} for {cost}. At these costs the judge's "
            f"verdicts do not pay for themselves (ρ = {plan['ppi_corr']:.2f})."
        )
    people = plan["people_only"]
    return (
        f"Label {n:,} items by people and have the judge label {plan['judge_verdicts']:,} "
        f"(those {n:,} and {big_n:,} more): {width} for {cost}, against "
        f"{money(people['cost'], currency)} with people alone ({people['n']:,} labels)."
    )


def basis_sentence(plan: dict[str, Any]) -> str:
    """What the plan rests on: the pilot's measured ρ and σ, or the researcher's stated ones."""
    rho, sigma = f"ρ = {plan['ppi_corr']:.2f}", f"σ = {plan['sigma']:.2f}"
    if plan["basis"] == "stated":
        return (
            f"This plan rests on the stated judge–human correlation {rho} and the spread of a "
            f"human label {sigma}; measure both on a pilot to check it."
        )
    pilot = plan["pilot"]
    return (
        f"The judge–human correlation {rho} and the spread of a human label {sigma} were "
        f"measured on {pilot['n_labelled']:,} pilot items labelled by people and the judge."
    )


def plan_sentences(plan: dict[str, Any], *, currency: str = "") -> list[str]:
    out = [plan_sentence(plan, currency=currency), basis_sentence(plan)]
    target = plan["target"]
    if target["kind"] == "budget" and plan["cost"] > target["value"]:
        out.append(
            f"Rounding to whole items puts the cost {money(plan['cost'] - target['value'], currency)} "
            "over the budget."
        )
    if plan.get("note"):
        out.append(f"Note: {plan['note']}.")
    return out


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _interval(ci) -> str:
    """A How2Score interval in percent, clipped to 0–100 (the normal interval may leave it)."""
    return f"{100 * max(0.0, ci[0]):.1f}–{100 * min(1.0, ci[1]):.1f}%"


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and value == value and abs(value) != float("inf")


def comparison_sentence(r: dict[str, Any], *, sampling: str) -> str:
    """The interval obtained against the one a uniform sample of the same size would have
    given, and what to do about it."""
    n, uniform = r["n_labelled"], r.get("uniform_half_width")
    if sampling != "uncertainty":
        return (
            f"The {n:,} items were drawn uniformly, so this is the interval a uniform sample of "
            "this size gives; to narrow it, label more items."
        )
    if not _finite(uniform):
        return (
            f"What a uniform sample of {n:,} items would have given cannot be said yet: "
            f"{r.get('uniform_undefined') or 'too few labelled items to measure it'}."
        )
    gain = 1 - r["half_width"] / uniform
    if abs(gain) < SAME_WIDTH:
        return (
            f"A uniform sample of the same {n:,} items would have given about {points(uniform)}, "
            "about the same: here the judge's doubt hardly pointed at the items it gets wrong, so "
            "either way of sampling will do."
        )
    if gain > 0:
        return (
            f"A uniform sample of the same {n:,} items would have given about {points(uniform)}: "
            f"labelling where the judge is unsure made the interval {100 * gain:.0f}% narrower, "
            "so keep sampling this way with this judge."
        )
    return (
        f"A uniform sample of the same {n:,} items would have given about {points(uniform)}: "
        "labelling where the judge is unsure did not narrow the interval here (the judge's doubt "
        "did not point at the items it gets wrong), so sample uniformly in the next study."
    )


def target_sentence(r: dict[str, Any], *, min_labelled: int = MIN_LABELLED_TO_STOP) -> str:
    """Where the study stands against its target (the width rule of validation.active: the
    half-width, and at least ``min_labelled`` items labelled by people)."""
    target = r.get("target")
    if target is None:
        return ""
    if r.get("reached"):
        return f"The target of {points(target)} is reached: no more labels are needed."
    n = r.get("n_labelled") or 0
    if _finite(r.get("half_width")) and r["half_width"] <= target and n < min_labelled:
        return (
            f"The interval is within the target of {points(target)}, but a study stops only once "
            f"{min_labelled:,} items carry people's label ({n:,} so far): keep labelling."
        )
    return f"The target of {points(target)} is not reached yet: keep labelling."


def interval_sentences(
    r: dict[str, Any], *, sampling: str, min_labelled: int = MIN_LABELLED_TO_STOP
) -> list[str]:
    """A study's corrected How2Score (:func:`validation.active.reads.study_interval`'s dict) in
    words: the score and its interval, the uniform comparison, the target; or why there is no
    score yet."""
    if r.get("how2score") is None or not r.get("ci"):
        why = r.get("undefined") or "it cannot be computed yet"
        return [f"No corrected How2Score yet: {why}."]
    out = [
        f"Corrected How2Score: {_pct(r['how2score'])} (95% interval {_interval(r['ci'])}, "
        f"{points(r['half_width'])}) from {r['n_labelled']:,} items labelled by people and the "
        f"judge's verdicts on {r['n_population']:,}.",
        comparison_sentence(r, sampling=sampling),
    ]
    return out + [s for s in (target_sentence(r, min_labelled=min_labelled),) if s]
