"""Gwet's AC1 against published and hand-computed values, its bootstrap CI, and its place in
every human↔human agreement report (``agreement_report --format json`` key ``gwet_ac1``)."""

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from annotation import agreement as ag
from annotation.agreement_report import build_report
from annotation.label_file import LabelRow
from tests.annotation.agreement.test_published_values import K2011_C, wide


def test_gwet_handbook_example_four_raters_with_missing_ratings():
    """Gwet, Handbook of Inter-Rater Reliability (4th ed.), the 12 units × 4 raters, categories
    1–5 with missing ratings (Krippendorff 2011's data; irrCAC's ``cac.raw4raters``):
    published p_a = 0.8181818, p_e = 0.1903212, AC1 = 0.77544.

    By hand: the 11 units rated at least twice agree fully (1) on units 1, 3, 4, 5, 7, 9, 10,
    11, half (3·2/(4·3) = 0.5) on units 2 and 8, not at all on unit 6: p_a = 9/11. π_k is the
    mean over the 12 rated units of r_ik/r_i: π = (3.0, 3.25, 3.5, 1.25, 1.0)/12, so
    p_e = Σ π_k(1 − π_k)/(5 − 1) = 0.7612847/4 = 0.1903212 and AC1 = (9/11 − p_e)/(1 − p_e)."""
    matrix = wide(K2011_C)
    parts = ag.gwet_ac1_from_counts(matrix.value_counts())
    assert parts.pa == pytest.approx(9 / 11)
    assert parts.pe == pytest.approx(0.1903212, abs=1e-7)
    assert round(parts.value, 5) == 0.77544
    assert ag.gwet_ac1(matrix) == pytest.approx(parts.value)


def test_two_raters_skewed_labels_hand_computed():
    """Two raters, 125 items, one category dominant (the κ paradox): 118 both +, 5 (+, −),
    2 (−, +), 0 both −. p_a = 118/125 = 0.944; π+ = (123 + 120)/250 = 0.972;
    p_e = 2·0.972·0.028 = 0.054432; AC1 = (0.944 − 0.054432)/(1 − 0.054432) = 0.940776.
    Cohen's κ on the same table: p_e = 0.984·0.96 + 0.016·0.04 = 0.94528,
    κ = (0.944 − 0.94528)/(1 − 0.94528) = −0.023392: κ says chance, AC1 says near-perfect."""
    rows = [("+", "+")] * 118 + [("+", "-")] * 5 + [("-", "+")] * 2
    matrix = ag.LabelMatrix.from_rows([list(r) for r in rows], categories=("+", "-"))
    assert ag.gwet_ac1(matrix) == pytest.approx(0.889568 / 0.945568)
    assert round(ag.gwet_ac1(matrix), 6) == 0.940776
    table = ag.confusion_matrix(matrix.codes[:, 0], matrix.codes[:, 1], 2)
    assert ag.cohen_kappa_from_confusion(table) == pytest.approx(-0.00128 / 0.05472)


def test_undefined_cases():
    one = ag.LabelMatrix.from_triples([("i", "a", "x"), ("j", "a", "y")])
    assert ag.gwet_ac1(one) == ag.Undefined(ag.ONE_ANNOTATOR)
    assert isinstance(ag.gwet_ac1_from_counts(np.zeros((0, 2))), ag.Undefined)
    # every label the same: perfect agreement, AC1 = 1 (not undefined, unlike κ)
    same = ag.LabelMatrix.from_rows([["x", "x"], ["x", "x"]], categories=("x", "y"))
    assert ag.gwet_ac1(same) == 1.0


def test_bootstrap_ci_is_reproducible_and_matches_resampling_items():
    matrix = wide(K2011_C)
    counts = matrix.value_counts()
    ci = ag.ac1_bootstrap_ci(counts, n_resamples=2000, seed=7)
    again = ag.ac1_bootstrap_ci(counts, n_resamples=2000, seed=7)
    other = ag.ac1_bootstrap_ci(counts, n_resamples=2000, seed=8)
    assert ci == again and (ci.low, ci.high) != (other.low, other.high)
    assert ci.low < 0.77544 <= ci.high <= 1.0
    # the same interval, within Monte Carlo error, by resampling item rows explicitly
    rng = np.random.default_rng(0)
    values = []
    for _ in range(2000):
        sample = counts[rng.integers(0, len(counts), len(counts))]
        parts = ag.gwet_ac1_from_counts(sample, 5)
        if not isinstance(parts, ag.Undefined):
            values.append(parts.value)
    low, high = np.percentile(values, [2.5, 97.5])
    assert ci.low == pytest.approx(low, abs=0.05)
    assert ci.high == pytest.approx(high, abs=0.02)


def test_report_has_gwet_ac1_with_ci():
    rows = [
        LabelRow(str(i), a, label)
        for i, unit in enumerate(zip(*K2011_C, strict=True))
        for a, label in zip("ABCD", unit, strict=True)
        if label is not None
    ]
    report = build_report(rows, n_resamples=500, seed=1)
    ac1 = report["gwet_ac1"]
    assert round(ac1["value"], 5) == 0.77544
    assert ac1["pa"] == pytest.approx(9 / 11) and ac1["n_categories"] == 5
    assert ac1["ci"]["n_resamples"] == 500 and ac1["ci"]["seed"] == 1
    assert ac1["ci"]["low"] < ac1["value"] <= ac1["ci"]["high"]
    assert "ci" not in build_report(rows, n_resamples=0)["gwet_ac1"]
    grouped = build_report(
        [LabelRow(r.item_id, r.annotator_id, r.label, groups={"half": str(int(r.item_id) < 6)})
         for r in rows],
        group_columns=["half"],
        n_resamples=100,
    )  # fmt: skip
    halves = {g["group"]: g["gwet_ac1"] for g in grouped["groups"]["half"]}
    assert set(halves) == {"True", "False"} and halves["True"]["ci"]["n_resamples"] == 100


def test_agreement_report_command_json_has_gwet_ac1(tmp_path):
    """Two raters on 4 items: i1 (has, has), i2 (has, no), i3 (no, no), i4 (no, no).
    p_a = 3/4; π_has = (1 + 1 + 0.5 + 0)... per item r_ik/r_i: i1 1, i2 0.5, i3 0, i4 0 →
    π_has = 1.5/4 = 0.375; p_e = 2·0.375·0.625 = 0.46875; AC1 = (0.75 − 0.46875)/0.53125."""
    path = tmp_path / "labels.csv"
    path.write_text(
        "item_id,annotator_id,label\n"
        "i1,p1,has_failure\ni1,p2,has_failure\n"
        "i2,p1,has_failure\ni2,p2,no_failure\n"
        "i3,p1,no_failure\ni3,p2,no_failure\n"
        "i4,p1,no_failure\ni4,p2,no_failure\n",
        encoding="utf-8",
    )
    out = StringIO()
    call_command("agreement_report", "--input", str(path), "--format", "json", stdout=out)
    ac1 = json.loads(out.getvalue())["gwet_ac1"]
    assert ac1["value"] == pytest.approx(0.28125 / 0.53125)
    assert ac1["pe"] == pytest.approx(0.46875)
    assert ac1["ci"]["n_resamples"] == 1000 and ac1["ci"]["seed"] == 0
    text = StringIO()
    call_command("agreement_report", "--input", str(path), "--format", "text", stdout=text)
    assert "Gwet's AC1: 0.529" in text.getvalue()
