"""Plan a study: the cost-optimal number of human labels ``n`` and judge verdicts for a target
budget, effective sample size or interval half-width on How2Score. Pure: no Django.

The allocation is ``ppi_py.ppi_mean_power`` (the power analysis of the Mixed Subjects Design,
Broska, Howes & van Loon 2024, doi 10.31235/osf.io/j3bnt, packaged in ``ppi-python``): PPI with
``n`` items labelled by people (and the judge) and ``N`` more items labelled by the judge alone
has the standard error of a people-only mean over

    effective_n = n (n + N) / (n + (1 − ρ²) N)

items, where ρ (``ppi_corr``) is the correlation of the judge's verdict with people's label. It
spends ``n · cost_human + (n + N) · cost_judge``; for a budget it maximises ``effective_n``, for
an effective_n it minimises the cost. When the judge's verdict does not pay for itself (ρ too
small for its cost) it plans people alone (``N`` = 0).

The interval: the 95% half-width from ``effective_n`` is ``z · σ / √effective_n`` with
z = 1.96 (the normal quantile at 0.975) and σ the standard deviation of people's failure flag
(from the pilot's human labels: √(p (1 − p)), p their failure rate; or stated). A target
half-width H asks for ``effective_n = ⌈(z σ / H)²⌉``. People alone reach the plan's half-width
with ``effective_n`` labels (the classical ``n = (z σ / H)²``), at ``effective_n · cost_human``.

From pilot labels (items people and the judge both labelled, and the count of items the judge
alone labelled) ρ and σ are measured; without them the researcher states both and the plan says
it rests on them (``basis`` = ``stated``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from core.lazy import lazy_module

np = lazy_module("numpy")

CONFIDENCE = 0.95
MIN_PILOT = 2
BUDGET, EFFECTIVE_N, HALF_WIDTH = "budget", "effective_n", "half_width"
TARGETS = (BUDGET, EFFECTIVE_N, HALF_WIDTH)
MIN_COST = 1e-6  # a millionth of the currency: below it the arithmetic overflows, not the plan
MAX_TARGET = 1e12  # a budget or an effective n past this is a typing slip, not a study


class PlanError(ValueError):
    """Inputs a plan cannot be made from; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


def z_value(confidence: float = CONFIDENCE) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + confidence / 2))


def _ppi():
    import ppi_py  # numba and scikit-learn: seconds to import, so only when used

    return ppi_py


def half_width(effective_n: float, sigma: float, confidence: float = CONFIDENCE) -> float:
    """``z · σ / √effective_n``: the half-width of the interval on the failure rate (and so on
    How2Score = 1 − rate)."""
    if effective_n <= 0:
        return math.inf
    return z_value(confidence) * sigma / math.sqrt(effective_n)


def effective_n_for(target: float, sigma: float, confidence: float = CONFIDENCE) -> int:
    """The smallest effective sample size whose half-width is at most ``target``."""
    return max(1, math.ceil((z_value(confidence) * sigma / target) ** 2 - 1e-9))


def _positive(field: str, value: float | None) -> float:
    if value is None or not math.isfinite(value) or value <= 0:
        raise PlanError(field, f"expected a number above 0, got {value!r}")
    return float(value)


def _cost(field: str, value: float | None) -> float:
    value = _positive(field, value)
    if value < MIN_COST:
        raise PlanError(field, f"at least {MIN_COST} is expected, got {value!r}")
    return value


def _target(target: str, value: float) -> tuple[float, str]:
    if target not in TARGETS:
        raise PlanError("target", f"expected one of {', '.join(TARGETS)}, got {target!r}")
    value = _positive(target, value)
    if value > MAX_TARGET:
        raise PlanError(target, f"at most {MAX_TARGET:,.0f} is planned, got {value!r}")
    if target == HALF_WIDTH and value >= 0.5:
        raise PlanError(
            target, f"a half-width on How2Score (0 to 1) below 0.5 is expected, got {value!r}"
        )
    if target == EFFECTIVE_N and value != int(value):
        raise PlanError(target, f"a whole number of items is expected, got {value!r}")
    return value, target


def _power(kwargs: dict[str, Any], target: str, value: float, sigma: float) -> dict[str, Any]:
    if target == BUDGET:
        kwargs["budget"] = value
    elif target == EFFECTIVE_N:
        kwargs["effective_n"] = int(value)
    else:
        kwargs["effective_n"] = effective_n_for(value, sigma)
    return kwargs


def _finish(
    raw: dict[str, Any],
    *,
    sigma: float,
    cost_human: float,
    cost_judge: float,
    target: str,
    value: float,
    basis: str,
) -> dict[str, Any]:
    n, big_n, eff = int(raw["n"]), int(raw["N"]), int(raw["effective_n"])
    people_n = eff
    out = {
        "n": n,
        "N": big_n,
        "judge_verdicts": n + big_n if big_n else 0,
        "cost": float(raw["cost"]),
        "effective_n": eff,
        "ppi_corr": float(raw["ppi_corr"]),
        "sigma": sigma,
        "half_width": half_width(eff, sigma),
        "confidence": CONFIDENCE,
        "people_only": {"n": people_n, "cost": float(people_n * cost_human)},
        "cost_human": cost_human,
        "cost_judge": cost_judge,
        "target": {"kind": target, "value": value},
        "basis": basis,
        "judge_pays": big_n > 0,
    }
    out["saving"] = out["people_only"]["cost"] - out["cost"]
    return out


def plan_stated(
    *,
    ppi_corr: float,
    sigma: float,
    cost_human: float,
    cost_judge: float,
    target: str,
    value: float,
) -> dict[str, Any]:
    """A plan from a stated judge–human correlation ``ppi_corr`` and σ of people's failure flag
    (``ppi_py.ppi_power`` with no cost for an unlabelled item); ``basis`` = ``stated``."""
    if ppi_corr is None or not math.isfinite(ppi_corr) or not -1 < ppi_corr < 1:
        raise PlanError(
            "ppi_corr", f"expected a number strictly between -1 and 1, got {ppi_corr!r}"
        )
    sigma = _positive("sigma", sigma)
    if sigma > 0.5:
        raise PlanError("sigma", f"σ of a 0/1 failure flag is at most 0.5, got {sigma!r}")
    cost_human, cost_judge = (
        _cost("cost_human", cost_human),
        _cost("cost_judge", cost_judge),
    )
    value, target = _target(target, value)
    kwargs = _power(
        {"cost_X": 0, "cost_Y": cost_human, "cost_Yhat": cost_judge}, target, value, sigma
    )
    raw = _ppi().ppi_power(float(ppi_corr), **kwargs)
    return _finish(raw, sigma=sigma, cost_human=cost_human, cost_judge=cost_judge,
                   target=target, value=value, basis="stated")  # fmt: skip


def plan_from_pilot(
    *,
    human: Sequence[int],
    judge: Sequence[int],
    unlabelled: int = 0,
    cost_human: float,
    cost_judge: float,
    target: str,
    value: float,
) -> dict[str, Any]:
    """A plan from pilot labels: ``human`` and ``judge`` 0/1 failure flags on the same items
    (paired), ``unlabelled`` the number of items the judge alone labelled (reported under
    ``pilot``). ρ and the allocation are ``ppi_py.ppi_mean_power``'s; σ is the standard
    deviation of ``human``. ``basis`` = ``pilot``."""
    y = np.asarray([int(v) for v in human], dtype=float)
    yhat = np.asarray([int(v) for v in judge], dtype=float)
    if y.size != yhat.size:
        raise PlanError("labels", "human and judge: one value each per labelled item")
    if y.size < MIN_PILOT:
        raise PlanError(
            "labels",
            f"{y.size} item(s) labelled by people and the judge: a pilot needs at least "
            f"{MIN_PILOT} to measure their agreement",
        )
    sigma = float(np.std(y))
    if sigma == 0:
        raise PlanError(
            "labels",
            "people gave every pilot item the same label: the spread of a label (σ) cannot be "
            "measured; label more items, or state the correlation and σ instead",
        )
    cost_human, cost_judge = (
        _cost("cost_human", cost_human),
        _cost("cost_judge", cost_judge),
    )
    value, target = _target(target, value)
    kwargs = _power({"cost_Y": cost_human, "cost_Yhat": cost_judge}, target, value, sigma)
    if np.ptp(yhat) == 0:  # ρ is 0/0: a judge with one verdict carries no information
        raw = _ppi().ppi_power(0.0, cost_X=0, **kwargs)
        note = "the judge gave one verdict on every pilot item: it carries no information (ρ = 0)"
    elif abs(float(np.corrcoef(y, yhat)[0, 1])) < 1e-9:
        # ppi_mean_power divides by ρ's rounding error here (N = NaN): the plan is ρ = 0's
        raw = _ppi().ppi_power(0.0, cost_X=0, **kwargs)
        note = "the judge's verdicts are uncorrelated with people's on the pilot (ρ = 0)"
    else:
        raw = _ppi().ppi_mean_power(y, yhat, **kwargs)
        note = ""
    out = _finish(raw, sigma=sigma, cost_human=cost_human, cost_judge=cost_judge,
                  target=target, value=value, basis="pilot")  # fmt: skip
    out["pilot"] = {"n_labelled": int(y.size), "n_unlabelled": int(unlabelled)}
    if note:
        out["note"] = note
    return out
