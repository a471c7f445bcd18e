"""Length bias of a judge (pure: numpy and statsmodels, no Django): does the judge flag long
answers more than people do?

A logistic regression (maximum likelihood, ``statsmodels`` ``Logit``, Newton) of the judge's
``has_failure`` on the candidate's length in units of 100 o200k tokens, with the human
majority (1 = has_failure) as a covariate::

    logit P(judge says failure) = β0 + β1 · tokens/100 + β2 · human_majority

``odds_ratio`` = exp(β1) is how the judge's odds of saying "failure" change per 100 more
tokens *at the same human verdict*, with its 95% Wald CI exp(β1 ± z·se). Above 1 (CI above 1):
the judge punishes length beyond what the annotators see; 1: no length bias. When the human
majority is the same on every item it cannot be a covariate and is left out (said so).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from core.lazy import lazy_module

np = lazy_module("numpy")


MIN_ITEMS = 10
PER_TOKENS = 100


def _undefined(reason: str, n: int) -> dict[str, Any]:
    return {"n_items": n, "odds_ratio": None, "undefined": reason}


def length_bias(
    judge: Sequence[bool | int],
    tokens: Sequence[float],
    human: Sequence[bool | int],
    *,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The fit on items with a parsed judge verdict, a length and a clear human majority:
    ``odds_ratio`` per :data:`PER_TOKENS` tokens with ``ci_low``/``ci_high`` and ``p_value``,
    the human covariate's odds ratio, or ``undefined`` with the reason (too few items, one
    judge verdict only, separation)."""
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import ConvergenceWarning, PerfectSeparationWarning

    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    y = np.asarray(judge, dtype=np.float64)
    length = np.asarray(tokens, dtype=np.float64) / PER_TOKENS
    h = np.asarray(human, dtype=np.float64)
    if not (y.shape == length.shape == h.shape) or y.ndim != 1:
        raise ValueError("judge, tokens and human must be flat sequences of the same length")
    n = len(y)
    if n < MIN_ITEMS:
        return _undefined(f"fewer than {MIN_ITEMS} items (has {n})", n)
    if y.min() == y.max():
        return _undefined("the judge gave the same verdict on every item", n)
    if length.min() == length.max():
        return _undefined("every candidate has the same length", n)
    with_human = bool(h.min() != h.max())
    columns = [np.ones(n), length] + ([h] if with_human else [])
    x = np.column_stack(columns)
    if np.linalg.matrix_rank(x) < x.shape[1]:
        return _undefined("the covariates are collinear", n)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerfectSeparationWarning)
        warnings.simplefilter("error", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            result = sm.Logit(y, x).fit(disp=0, method="newton", maxiter=100)
        except (PerfectSeparationWarning, np.linalg.LinAlgError) as exc:
            return _undefined(f"the judge's verdict is perfectly separated ({exc})", n)
        except ConvergenceWarning:
            return _undefined("the fit did not converge (quasi-separation)", n)
    params = np.asarray(result.params)
    ci = np.asarray(result.conf_int(alpha=1 - confidence))
    pvalues = np.asarray(result.pvalues)
    if not np.all(np.isfinite(ci)):
        return _undefined("the standard errors are not finite (quasi-separation)", n)
    out: dict[str, Any] = {
        "n_items": n,
        "per_tokens": PER_TOKENS,
        "odds_ratio": float(np.exp(params[1])),
        "ci_low": float(np.exp(ci[1, 0])),
        "ci_high": float(np.exp(ci[1, 1])),
        "p_value": float(pvalues[1]),
        "coef": float(params[1]),
        "confidence": confidence,
        "human_covariate": with_human,
        "human_odds_ratio": float(np.exp(params[2])) if with_human else None,
        "mean_tokens": float(length.mean() * PER_TOKENS),
        "method": "logistic regression (statsmodels Logit, Wald CI)",
    }
    if not with_human:
        out["note"] = "the human majority is the same on every item: left out of the model"
    return out
