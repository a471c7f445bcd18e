"""The alt-test's verdict in words: one sentence a researcher can paste into a paper (whether
the judge may replace the annotators at the chosen ε, the ε's origin, against how many
annotators it won), then, when it did not pass, whether that is for lack of items (the
planner's estimate, K from the labels). Pure: no Django; takes
:meth:`validation.alt_test.stats.AltTestResult.to_json`'s dict."""

from __future__ import annotations

from typing import Any

from validation.alt_test.stats import ANNOTATORS_SAID, EPSILON_BY_ANNOTATORS, PASS_WINNING_RATE

SCORING_SAID = {"accuracy": "accuracy", "neg_rmse": "negative RMSE"}


def epsilon_said(epsilon: float, annotators: str | None) -> str:
    """``ε = 0.1 (the alt-test paper's value for crowd workers)`` or ``ε = 0.12 (chosen)``."""
    if annotators in EPSILON_BY_ANNOTATORS and EPSILON_BY_ANNOTATORS[annotators] == epsilon:
        return f"ε = {epsilon:g} (the alt-test paper's value for {ANNOTATORS_SAID[annotators]})"
    return f"ε = {epsilon:g} (chosen)"


def verdict_sentence(r: dict[str, Any], *, judge: str, annotators: str | None = None) -> str:
    """The paste-able sentence. ``judge`` is named as given."""
    tested = r["annotators"]
    eps = epsilon_said(r["epsilon"], annotators)
    scoring = SCORING_SAID.get(r["scoring"], r["scoring"])
    if not tested:
        most = max((a["n_items"] for a in r["skipped"]["annotators"]), default=0)
        return (
            f"The alt-test of {judge} cannot be computed: {r.get('undefined', 'no annotator')} "
            f"(the most any annotator has is {most})."
        )
    won = sum(a["rejected"] for a in tested)
    omega, rho = r["winning_rate"], r["advantage_probability"]
    may = "may replace" if r["passed"] else "may not replace"
    compare = "≥" if r["passed"] else "<"
    return (
        f"By the alternative annotator test (Calderon et al., 2025; {scoring}, {eps}, "
        f"Benjamini–Yekutieli at q = {r['q']:g}), {judge} {may} the annotators: it won against "
        f"{won} of {len(tested)} annotators (winning rate ω = {omega:.2f} {compare} "
        f"{PASS_WINNING_RATE:g}) on {r['n_items']} items, with an advantage probability "
        f"ρ = {rho:.2f}."
    )


def power_sentence(r: dict[str, Any], estimate: dict[str, Any] | None) -> str:
    """When the judge did not pass: whether more items could change that, from the planner's
    ``estimate`` (:func:`validation.alt_test.planner.items_needed`). Empty when it passed."""
    if r["passed"] or estimate is None:
        return ""
    per_annotator = [a["n_items"] for a in r["annotators"]] or [
        a["n_items"] for a in r["skipped"]["annotators"]
    ]
    have = min(per_annotator, default=0)
    k, m = estimate["n_categories"], estimate["n_annotators"]
    assumptions = (
        f"the planner, for {k} label categories as in these labels and {m} annotators per "
        "item, with a judge as good as the annotators"
    )
    need = estimate["n_items"]
    if need is None:
        return (
            f"Whether more items would help is unclear: {assumptions}, does not expect it to pass "
            f"within {estimate['largest']} items at this ε."
        )
    if have < need:
        return (
            f"This may be for lack of items: each annotator has {have} or more items here, and "
            f"{assumptions}, expects a pass from about {need} items per annotator."
        )
    return (
        f"It is not for lack of items: each annotator has {have} or more items here, and "
        f"{assumptions}, expects a pass from about {need}; the judge falls short of the "
        "annotators."
    )


def annotator_line(a: dict[str, Any]) -> str:
    """One annotator's row in words: names as given, "rejected"/"not rejected"."""
    p = "undefined (every difference equals ε)" if a["p_value"] is None else f"{a['p_value']:.4g}"
    outcome = "rejected: the judge won" if a["rejected"] else "not rejected"
    return (
        f"{a['annotator']}: p {p}, {outcome} (n {a['n_items']}, "
        f"judge wins {a['advantage_probability']:.2f} of items)"
    )
