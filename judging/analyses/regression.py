"""D.5 (Table 10): logistic regression of ``no_failure`` on the reference step count, the
resource count and the gen/ref token ratio (percentage points), with topic fixed effects:

    logit p(no_failure) = β0 + β_steps·|S*| + β_res·|R| + β_ratio·ρ + Σ_t γ_t·[topic = t]

fitted by maximum likelihood with statsmodels (``Logit``, Newton), one fit per generator and
one on the pooled rows ("Overall"). The baseline topic is the first in lexicographic order
among the rows' topics. Odds ratios exp(β) with Wald 95% CIs exp(β ± 1.96·SE) from the
inverse Hessian, and two-sided p-values. The paper adds an L2 penalty of 1e-6 "for numerical
stability; effects are unchanged at this scale" — this fit is unpenalised.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from core.lazy import lazy_module

np = lazy_module("numpy")


COVARIATES = (
    ("ref_steps", "per +1 reference step"),
    ("n_resources", "per +1 resource"),
    ("ratio_pp", "per +1 pp gen/ref token ratio"),
)
MIN_ROWS = 10


def usable_rows(rows: Iterable[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], int]:
    """Rows with every field of the model (those with an undefined token ratio left out, as
    in the paper), and how many were left out."""
    kept, dropped = [], 0
    for r in rows:
        if any(r.get(k) is None for k, _ in COVARIATES) or r.get("no_failure") is None:
            dropped += 1
        else:
            kept.append(r)
    return kept, dropped


def design(rows: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray, list[str], str]:
    """(y, X, column names, baseline topic): X = const, the covariates, one dummy per topic
    other than the baseline."""
    topics = sorted({str(r.get("topic") or "") for r in rows})
    baseline = topics[0] if topics else ""
    others = topics[1:]
    y = np.asarray([int(r["no_failure"]) for r in rows], dtype=np.float64)
    columns = ["const", *(k for k, _ in COVARIATES), *(f"topic[{t}]" for t in others)]
    x = np.zeros((len(rows), len(columns)))
    x[:, 0] = 1.0
    index = {t: 1 + len(COVARIATES) + i for i, t in enumerate(others)}
    for i, r in enumerate(rows):
        for j, (key, _) in enumerate(COVARIATES):
            x[i, 1 + j] = float(r[key])
        column = index.get(str(r.get("topic") or ""))
        if column is not None:
            x[i, column] = 1.0
    return y, x, columns, baseline


def _undefined(reason: str, n: int, n_dropped: int) -> dict[str, Any]:
    return {"n": n, "n_dropped": n_dropped, "undefined": reason}


def fit(rows: Iterable[Mapping[str, Any]], *, confidence: float = 0.95) -> dict[str, Any]:
    """One regression: odds ratios with Wald CIs and p-values for the covariates and the topic
    offsets, or ``{"undefined": reason}`` (too few rows, one outcome only, separation, a
    singular design)."""
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import ConvergenceWarning, PerfectSeparationWarning

    kept, dropped = usable_rows(rows)
    n = len(kept)
    if n < MIN_ROWS:
        return _undefined(f"fewer than {MIN_ROWS} rows with every field", n, dropped)
    y, x, columns, baseline = design(kept)
    if y.min() == y.max():
        return _undefined("every row has the same outcome", n, dropped)
    if np.linalg.matrix_rank(x) < x.shape[1]:
        return _undefined(
            "the covariates are collinear (e.g. a covariate constant within the data)", n, dropped
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerfectSeparationWarning)
        warnings.simplefilter("error", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            result = sm.Logit(y, x).fit(disp=0, method="newton", maxiter=100)
        except (PerfectSeparationWarning, np.linalg.LinAlgError) as exc:
            return _undefined(f"the outcome is perfectly separated ({exc})", n, dropped)
        except ConvergenceWarning:
            return _undefined("the fit did not converge (quasi-separation)", n, dropped)
    params = np.asarray(result.params)
    ci = np.asarray(result.conf_int(alpha=1 - confidence))
    pvalues = np.asarray(result.pvalues)
    if not np.all(np.isfinite(ci)):
        return _undefined("the standard errors are not finite (quasi-separation)", n, dropped)

    def term(i: int, **extra) -> dict[str, Any]:
        return {
            **extra,
            "coef": float(params[i]),
            "odds_ratio": float(np.exp(params[i])),
            "ci_low": float(np.exp(ci[i, 0])),
            "ci_high": float(np.exp(ci[i, 1])),
            "p_value": float(pvalues[i]),
            "significant": bool(pvalues[i] < 1 - confidence),
        }

    return {
        "n": n,
        "n_dropped": dropped,
        "n_no_failure": int(y.sum()),
        "how2score": float(y.mean()),
        "baseline_topic": baseline,
        "covariates": [
            term(1 + j, name=key, unit=unit) for j, (key, unit) in enumerate(COVARIATES)
        ],
        "topics": [
            term(i, topic=name[len("topic[") : -1])
            for i, name in enumerate(columns)
            if name.startswith("topic[")
        ],
        "intercept": float(params[0]),
        "pseudo_r2": float(result.prsquared),
        "log_likelihood": float(result.llf),
        "confidence": confidence,
    }


def difficulty_regression(
    rows: Iterable[Mapping[str, Any]], *, confidence: float = 0.95
) -> dict[str, Any]:
    """Table 10: one fit per generator and one on the pooled rows (``overall``)."""
    rows = list(rows)
    by_generator: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_generator.setdefault(r["generator"], []).append(r)
    models = [
        {"generator": name, **fit(group, confidence=confidence)}
        for name, group in sorted(by_generator.items())
    ]
    models.sort(key=lambda m: (m.get("how2score") is None, m.get("how2score") or 0))
    return {
        "models": models,
        "overall": {"generator": "Overall", **fit(rows, confidence=confidence)},
        "method": (
            "logistic regression (statsmodels Logit, maximum likelihood) with topic fixed "
            "effects; odds ratios with Wald CIs from the inverse Hessian"
        ),
    }
