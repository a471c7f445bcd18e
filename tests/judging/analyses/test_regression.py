"""D.5 regression: our fit against statsmodels' formula API run directly on the same frame."""

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from judging.analyses.regression import difficulty_regression, fit


def frame(n=600, seed=1, generator="g"):
    rng = np.random.default_rng(seed)
    topics = rng.choice(["Art & Design", "Food & Dining", "Industrial"], size=n)
    steps = rng.integers(5, 16, size=n)
    resources = rng.integers(0, 9, size=n)
    ratio = rng.uniform(60, 140, size=n)
    offset = {"Art & Design": 0.0, "Food & Dining": 0.8, "Industrial": -0.6}
    logit = 1.5 - 0.25 * steps + 0.05 * resources + 0.015 * ratio
    logit += np.array([offset[t] for t in topics])
    y = rng.random(n) < 1 / (1 + np.exp(-logit))
    return [
        {
            "generator": generator,
            "topic": str(t),
            "ref_steps": int(s),
            "n_resources": int(r),
            "ratio_pp": float(x),
            "no_failure": int(v),
        }
        for t, s, r, x, v in zip(topics, steps, resources, ratio, y, strict=True)
    ]


def test_matches_statsmodels_formula_on_the_same_frame():
    rows = frame()
    rows.append({**rows[0], "ratio_pp": None})  # an undefined token ratio is left out
    ours = fit(rows)
    df = pd.DataFrame(rows[:-1])
    ref = smf.logit("no_failure ~ ref_steps + n_resources + ratio_pp + C(topic)", data=df).fit(
        disp=0
    )
    ci = ref.conf_int()
    assert ours["n"] == 600 and ours["n_dropped"] == 1
    assert ours["baseline_topic"] == "Art & Design"
    for term in ours["covariates"]:
        name = term["name"]
        assert term["odds_ratio"] == pytest.approx(math.exp(ref.params[name]), rel=1e-6)
        assert term["ci_low"] == pytest.approx(math.exp(ci.loc[name, 0]), rel=1e-6)
        assert term["ci_high"] == pytest.approx(math.exp(ci.loc[name, 1]), rel=1e-6)
        assert term["p_value"] == pytest.approx(ref.pvalues[name], rel=1e-5, abs=1e-12)
    for term in ours["topics"]:
        name = f"C(topic)[T.{term['topic']}]"
        assert term["coef"] == pytest.approx(ref.params[name], rel=1e-6)
    assert ours["pseudo_r2"] == pytest.approx(ref.prsquared)
    steps = ours["covariates"][0]
    assert steps["odds_ratio"] < 1 and steps["ci_high"] < 1 and steps["significant"]


def test_per_generator_and_overall():
    rows = frame(seed=2, generator="a") + frame(seed=3, generator="b")
    report = difficulty_regression(rows)
    assert [m["generator"] for m in report["models"]] == sorted(
        ["a", "b"], key=lambda g: np.mean([r["no_failure"] for r in rows if r["generator"] == g])
    )
    assert report["overall"]["n"] == 1200 and report["overall"]["generator"] == "Overall"


def test_undefined_fits_say_why():
    rows = frame(n=50)
    assert "fewer than 10" in fit(rows[:5])["undefined"]
    same = [{**r, "no_failure": 1} for r in rows]
    assert fit(same)["undefined"] == "every row has the same outcome"
    constant = [{**r, "n_resources": 3} for r in rows]
    assert "collinear" in fit(constant)["undefined"]
    separated = [{**r, "no_failure": int(r["ref_steps"] < 10)} for r in rows]
    assert "separat" in fit(separated)["undefined"]
