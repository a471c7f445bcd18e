"""Hand-computed cases for every statistic, the undefined cases, and the bootstrap."""

import json
import math

import krippendorff
import numpy as np
import pytest

from annotation import agreement as ag
from annotation.agreement.alpha import _alpha_from_pattern_weights, _value_domain
from annotation.agreement.matrix import pairable_counts
from tests.support.purity import django_imports, source_files

N = None


def items(*rows, **kwargs):
    return ag.LabelMatrix.from_rows([list(r) for r in rows], **kwargs)


# --- percent agreement and Fleiss with varying numbers of raters -------------------------------


def test_percent_agreement_by_hand():
    # item 1: a,a,b -> 1 agreeing pair of 3; item 2: a,a -> 1 of 1; item 3 labelled once: left out.
    m = items(["a", "a", "b"], ["a", "a", N], ["c", N, N])
    assert ag.percent_agreement(m) == pytest.approx((1 / 3 + 1) / 2)


def test_fleiss_with_varying_raters_by_hand():
    m = items(["a", "a", "b"], ["a", "a", N], ["c", N, N])
    # P-bar = 2/3; pooled labels of pairable items: a 4, b 1 -> Pe = .64 + .04 = .68.
    assert ag.fleiss_kappa(m) == pytest.approx((2 / 3 - 0.68) / (1 - 0.68))


def test_fleiss_equals_cohen_structure_on_perfect_agreement():
    m = items(["x", "x"], ["y", "y"], ["x", "x"])
    assert ag.fleiss_kappa(m) == pytest.approx(1.0)
    assert ag.krippendorff_alpha(m) == pytest.approx(1.0)


# --- Cohen ---------------------------------------------------------------------------------------


def test_pairwise_cohen_by_hand_with_missing_labels():
    # A and B share items 1-4: agree on 1,2,4 -> p_o .75; A: yes yes no no, B: yes yes yes no
    # -> p_e = .5*.75 + .5*.25 = .5 -> kappa .5. C shares only item 5 with A and nothing with B.
    m = items(
        ["yes", "yes", N], ["yes", "yes", N], ["no", "yes", N], ["no", "no", N], ["no", N, "no"]
    )
    pairs = {(p.annotator_a, p.annotator_b): p for p in ag.pairwise_cohen_kappa(m)}
    assert set(pairs) == {(0, 1), (0, 2)}  # B and C share no item: no pair
    ab = pairs[(0, 1)]
    assert ab.n_items == 4
    assert ab.percent_agreement == pytest.approx(0.75)
    assert ab.kappa == pytest.approx(0.5)
    # categories sorted: no, yes; rows are A's label, columns B's.
    assert ab.confusion.tolist() == [[1, 1], [0, 2]]
    ac = pairs[(0, 2)]  # one item in common: said, never a 0 or a 1 from one item
    assert ac.kappa == ag.Undefined(ag.ONE_ITEM_IN_COMMON)
    assert "1 item in common" in ag.ONE_ITEM_IN_COMMON


def test_cohen_no_shared_item_is_undefined():
    assert isinstance(ag.cohen_kappa(np.array([0, -1]), np.array([-1, 1]), 2), ag.Undefined)


# --- majority and ties ---------------------------------------------------------------------------


def test_majority_reports_ties_and_single_labels():
    m = items(["p", "p", "q"], ["p", "q", N], ["q", N, N], [N, N, N], ["p", "q", "r"])
    maj = ag.majority_labels(m)
    p, q = m.categories.index("p"), m.categories.index("q")
    assert maj.codes.tolist() == [p, -1, q, -1, -1]
    assert maj.tie.tolist() == [False, True, False, False, True]
    assert maj.tied_categories(1) == [p, q]
    assert maj.tied_categories(4) == [0, 1, 2]
    assert maj.n_labels.tolist() == [3, 2, 1, 0, 3]


# --- leave-one-out -------------------------------------------------------------------------------


def test_leave_one_out_by_hand():
    #            A    B    C
    m = items(
        ["f", "f", "f"],  # all agree
        ["f", "f", "n"],  # C against f,f: disagree; A against f,n: tie; B: tie
        ["n", "n", "n"],
        ["f", "n", N],  # A against n; B against f
        ["n", N, N],
    )  # nobody else
    by = {r.annotator: r for r in ag.leave_one_out(m)}
    a, b, c = by[0], by[1], by[2]
    assert (a.n_items, a.n_compared, a.n_agree, a.n_others_tied, a.n_no_others) == (5, 3, 2, 1, 1)
    assert a.agreement == pytest.approx(2 / 3)
    assert (b.n_compared, b.n_agree, b.n_others_tied) == (3, 2, 1)
    assert (c.n_items, c.n_compared, c.n_agree, c.n_others_tied) == (3, 3, 2, 0)
    assert c.agreement == pytest.approx(2 / 3)


def test_leave_one_out_undefined_when_others_always_tie():
    m = items(["x", "x", "y"])
    by = {r.annotator: r for r in ag.leave_one_out(m)}
    assert by[0].agreement == ag.Undefined("the other annotators tie on every shared item")
    assert by[2].agreement == pytest.approx(0.0)


# --- label kinds ---------------------------------------------------------------------------------


@pytest.mark.parametrize("yes, no", [("has_failure", "no_failure"), (1, 0), (True, False)])
def test_any_label_kind(yes, no):
    m = items([yes, yes], [no, no], [yes, no], [no, no])
    # 4 units, 8 values: yes 3, no 5; observed disagreements 2 (one unit) -> alpha by formula.
    d_o = 2
    d_e = (8 * 8 - (3**2 + 5**2)) / 7
    assert ag.krippendorff_alpha(m) == pytest.approx(1 - d_o / d_e)


def test_duplicate_pair_is_rejected():
    with pytest.raises(ValueError, match="labelled twice by annotator 'A'"):
        ag.LabelMatrix.from_triples([("i1", "A", "x"), ("i1", "A", "y")])


# --- undefined cases -----------------------------------------------------------------------------

UNDEFINED_CASES = [
    ("empty", ag.LabelMatrix.from_triples([]), ag.NO_LABELS),
    ("one annotator", items(["a"], ["b"], ["a"]), ag.ONE_ANNOTATOR),
    ("no item twice", items(["a", N], [N, "b"]), ag.NO_ITEM_TWICE),
]


@pytest.mark.parametrize(
    "name, matrix, reason", UNDEFINED_CASES, ids=[c[0] for c in UNDEFINED_CASES]
)
def test_undefined_cases(name, matrix, reason):
    for fn in (ag.krippendorff_alpha, ag.percent_agreement, ag.fleiss_kappa, ag.alpha_bootstrap_ci):
        value = fn(matrix)
        assert value == ag.Undefined(reason), fn.__name__
        assert ag.stat_json(value) == {"value": None, "undefined": reason}


def test_every_label_identical():
    m = items(["same", "same"], ["same", "same", "same"][:2])
    assert ag.krippendorff_alpha(m) == ag.Undefined(ag.ONE_CATEGORY)
    assert ag.fleiss_kappa(m) == ag.Undefined(ag.ONE_CATEGORY)
    assert ag.pairwise_cohen_kappa(m)[0].kappa == ag.Undefined(ag.ONE_CATEGORY)
    assert ag.percent_agreement(m) == 1.0  # raw agreement is defined: everyone agrees
    json.dumps(ag.stat_json(ag.krippendorff_alpha(m)), allow_nan=False)


def test_bad_level_is_a_clear_error():
    with pytest.raises(ValueError, match="level must be one of"):
        ag.krippendorff_alpha(items(["a", "b"]), level="ratio-ish")
    with pytest.raises(ValueError, match="interval level needs numeric labels"):
        ag.krippendorff_alpha(items(["a", "b"], ["a", "a"]), level="interval")


# --- bootstrap -----------------------------------------------------------------------------------


def random_study(n_items, n_annotators, n_categories, *, seed, agree=0.7, missing=0.0):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_categories, n_items)
    rows = []
    for i in range(n_items):
        row = []
        for _ in range(n_annotators):
            if rng.random() < missing:
                row.append(None)
            else:
                row.append(
                    int(truth[i]) if rng.random() < agree else int(rng.integers(0, n_categories))
                )
        rows.append(row)
    return ag.LabelMatrix.from_rows(rows)


@pytest.mark.parametrize("level", ag.LEVELS)
def test_vectorised_alpha_matches_the_package_on_arbitrary_resamples(level):
    """The bootstrap's vectorised α equals krippendorff.alpha on the explicitly resampled units."""
    m = random_study(60, 4, 4, seed=3, missing=0.2)
    counts = pairable_counts(m)
    patterns, inverse = np.unique(counts, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    rng = np.random.default_rng(11)
    for _ in range(5):
        pick = rng.integers(0, len(counts), len(counts))
        weights = np.bincount(inverse[pick], minlength=len(patterns)).astype(float)
        got = _alpha_from_pattern_weights(
            patterns, weights[None], level=level, domain=_value_domain(m, level)
        )[0]
        want = krippendorff.alpha(
            value_counts=counts[pick],
            value_domain=_value_domain(m, level),
            level_of_measurement=level,
        )
        assert got == pytest.approx(want, abs=1e-12)


def naive_bootstrap(m, n, seed, level="nominal"):
    counts = pairable_counts(m)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        sample = counts[rng.integers(0, len(counts), len(counts))]
        if (sample.sum(axis=0) > 0).sum() < 2:
            continue
        out.append(
            krippendorff.alpha(
                value_counts=sample,
                value_domain=_value_domain(m, level),
                level_of_measurement=level,
            )
        )
    return np.percentile(out, [2.5, 97.5])


@pytest.mark.parametrize("shape", [(300, 3, 2, 0.7), (200, 8, 9, 0.5)])
def test_bootstrap_ci_agrees_with_a_naive_unit_bootstrap(shape):
    n_items, n_annotators, n_categories, agree = shape
    m = random_study(n_items, n_annotators, n_categories, seed=5, agree=agree)
    n_patterns = len(np.unique(pairable_counts(m), axis=0))
    # both sampling paths are exercised: multinomial over patterns, and unit indices
    assert (n_patterns > n_items // 2) == (n_categories > 2)
    ci = ag.alpha_bootstrap_ci(m, n_resamples=2000, seed=1)
    low, high = naive_bootstrap(m, 1000, seed=2)
    point = ag.krippendorff_alpha(m)
    assert ci.low < point < ci.high
    assert ci.low == pytest.approx(low, abs=0.02)
    assert ci.high == pytest.approx(high, abs=0.02)
    assert ci.n_resamples == 2000 and ci.n_degenerate == 0


def test_bootstrap_is_reproducible_with_its_seed():
    m = random_study(100, 3, 2, seed=9)
    assert ag.alpha_bootstrap_ci(m, seed=4) == ag.alpha_bootstrap_ci(m, seed=4)
    assert ag.alpha_bootstrap_ci(m, seed=4) != ag.alpha_bootstrap_ci(m, seed=5)


def test_bootstrap_counts_degenerate_resamples():
    # One disagreeing unit among identical ones: many resamples contain a single category.
    m = items(["a", "a"], ["a", "a"], ["a", "b"], ["a", "a"])
    ci = ag.alpha_bootstrap_ci(m, n_resamples=500, seed=0)
    assert ci.n_degenerate > 0
    assert math.isfinite(ci.low) and math.isfinite(ci.high)


def test_agreement_package_has_no_django_imports():
    files = [p.name for p in source_files(ag)]
    assert {"matrix.py", "alpha.py", "kappa.py", "majority.py"} <= set(files)
    assert django_imports(ag) == {}
