"""A plan in words: one sentence a researcher can act on, then what it rests on. Pure."""

from __future__ import annotations

from typing import Any


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
