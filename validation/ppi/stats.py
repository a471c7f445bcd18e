"""How2Score corrected with human labels: prediction-powered inference (PPI++; Angelopoulos,
Duchi & Zrnic 2023, arXiv 2311.01453) through the ``ppi-python`` package. Pure: no Django.

The failure rate is the mean of the human has_failure label; the judge's has_failure on the
labelled items (``judge``) and on the other judged items (``unlabelled``) are the predictions.
``ppi_py.ppi_mean_pointestimate`` / ``ppi_mean_ci`` (λ power-tuned, clipped to [0, 1]) give
the corrected rate and its 95% interval; How2Score = 1 − rate, its interval [1 − high, 1 − low].
Beside it, with ``ppi_py.classical_mean_ci`` (the same normal interval): the judge-only
estimate on every judged item and the human-only estimate on the labelled ones.

λ is reported (``lambda``), computed as ``ppi_py`` computes it inside ``ppi_mean_ci`` (its
``_calc_lam_glm`` around the λ = 1 estimate; ppi-python is pinned below 0.3), and so is the
judge's bias on the labelled items (``labelled_bias``): the share of them where the judge
finds a failure people do not, where it misses one they find, and the difference of the two
failure rates — what the correction removes.

One case ``ppi_py`` leaves undefined: a judge that gives the same verdict everywhere makes λ's
formula 0/0. Any λ then gives the same estimate (the classical mean of the human labels), so
λ = 0 is used and said (``lambda_note``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.lazy import lazy_module

np = lazy_module("numpy")


ALPHA = 0.05
MIN_LABELLED = 2
NO_UNLABELLED = (
    "no unlabelled judged items to correct: PPI needs the judge's verdicts on items people did "
    "not label (every judged item here has a human label, so the human-only figure is the answer)"
)


def _ppi():
    import ppi_py  # numba and scikit-learn: seconds to import, so only when used

    return ppi_py


def _interval(low: float, high: float) -> list[float]:
    return [float(low), float(high)]


def _flip(rate: float, ci: Sequence[float]) -> tuple[float, list[float]]:
    """A failure rate and its interval as How2Score (1 − rate) and its interval."""
    return 1.0 - float(rate), [1.0 - float(ci[1]), 1.0 - float(ci[0])]


def _binary(values: Sequence[Any], *, name: str) -> np.ndarray:
    array = np.asarray([int(v) for v in values], dtype=float)
    if array.size and not np.isin(array, (0.0, 1.0)).all():
        raise ValueError(f"{name}: has_failure must be 0 or 1")
    return array


def classical(values: Sequence[int], *, alpha: float = ALPHA) -> dict[str, Any]:
    """The mean of 0/1 failure flags with ``ppi_py.classical_mean_ci``, as How2Score."""
    y = _binary(values, name="values")
    if y.size < MIN_LABELLED:
        return {"how2score": None, "ci": None, "n": int(y.size),
                "undefined": f"fewer than {MIN_LABELLED} items"}  # fmt: skip
    low, high = _ppi().classical_mean_ci(y, alpha=alpha)
    score, ci = _flip(y.mean(), (np.ravel(low)[0], np.ravel(high)[0]))
    return {"how2score": score, "ci": ci, "n": int(y.size)}


def tuned_lambda(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> float:
    """The power-tuned λ that ``ppi_py.ppi_mean_ci`` uses (clipped to [0, 1])."""
    from ppi_py.ppi import _calc_lam_glm  # the package's own λ, so the figure shown is the one used

    theta = float(np.ravel(_ppi().ppi_mean_pointestimate(y, yhat, yhat_u, lam=1))[0])
    lam = _calc_lam_glm(y - theta, yhat - theta, yhat_u - theta, np.eye(1), coord=None, clip=True)
    return float(np.ravel(lam)[0])


def labelled_bias(y: np.ndarray, yhat: np.ndarray) -> dict[str, Any] | None:
    """On the labelled items: the share where the judge finds a failure people do not
    (``judge_only_failures``), where people find one the judge does not
    (``human_only_failures``), and ``failure_rate_difference`` = judge − human failure rate
    (positive: the judge's raw How2Score is that much too low). None without labelled items."""
    if y.size == 0:
        return None
    return {
        "judge_only_failures": float(np.mean((yhat == 1) & (y == 0))),
        "human_only_failures": float(np.mean((yhat == 0) & (y == 1))),
        "failure_rate_difference": float(yhat.mean() - y.mean()),
        "n": int(y.size),
    }


def how2score_ppi(
    *,
    human: Sequence[int],
    judge: Sequence[int],
    unlabelled: Sequence[int],
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """PPI++ How2Score from ``human`` and ``judge`` has_failure on the labelled items (paired)
    and the judge's has_failure on the unlabelled ones. Keys: ``how2score``, ``ci``,
    ``failure_rate``, ``failure_rate_ci``, ``judge_only_how2score`` (+ ``_ci``,
    on labelled and unlabelled items together), ``human_only_how2score`` (+ ``_ci``),
    ``n_labelled``, ``n_unlabelled``, ``lambda``, ``labelled_bias`` (:func:`labelled_bias`);
    ``undefined`` (with the numbers None) when there are
    fewer than 2 labelled or no unlabelled items."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha: expected a number between 0 and 1, got {alpha!r}")
    y, yhat = _binary(human, name="human"), _binary(judge, name="judge")
    yhat_u = _binary(unlabelled, name="unlabelled")
    if y.size != yhat.size:
        raise ValueError("human and judge: one value each per labelled item")
    judge_only = classical(np.concatenate([yhat, yhat_u]), alpha=alpha)
    human_only = classical(y, alpha=alpha)
    out: dict[str, Any] = {
        "how2score": None,
        "ci": None,
        "failure_rate": None,
        "failure_rate_ci": None,
        "judge_only_how2score": judge_only["how2score"],
        "judge_only_ci": judge_only["ci"],
        "human_only_how2score": human_only["how2score"],
        "human_only_ci": human_only["ci"],
        "n_labelled": int(y.size),
        "n_unlabelled": int(yhat_u.size),
        "alpha": alpha,
        "lambda": None,
    }
    out["labelled_bias"] = labelled_bias(y, yhat)
    if y.size < MIN_LABELLED:
        out["undefined"] = f"fewer than {MIN_LABELLED} labelled items"
        return out
    if yhat_u.size == 0:
        out["undefined"] = NO_UNLABELLED
        return out
    ppi = _ppi()
    lam = None  # PPI++: ppi_py tunes λ
    if np.ptp(np.concatenate([yhat, yhat_u])) == 0:
        lam = 0.0
        out["lambda_note"] = (
            "the judge gave one verdict everywhere: λ is 0/0 and any λ gives the classical "
            "mean of the human labels; λ = 0 used"
        )
    if lam is None:
        lam = tuned_lambda(y, yhat, yhat_u)
    out["lambda"] = float(lam)
    rate = float(np.ravel(ppi.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam))[0])
    low, high = ppi.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam)
    rate_ci = _interval(np.ravel(low)[0], np.ravel(high)[0])
    score, ci = _flip(rate, rate_ci)
    out.update(how2score=score, ci=ci, failure_rate=rate, failure_rate_ci=rate_ci)
    return out
