"""Published values: Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability",
the `krippendorff` package's documented examples, Fleiss (1971) as worked on Wikipedia,
and Cohen's κ as worked on Wikipedia."""

import numpy as np
import pytest

from annotation import agreement as ag

N = None

# Krippendorff (2011), section C: 4 observers x 12 units, nominal values 1-5, missing data.
K2011_C = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


def wide(observers):
    """Observers x units (the paper's layout) -> a LabelMatrix of items x annotators."""
    return ag.LabelMatrix.from_rows([list(unit) for unit in zip(*observers, strict=True)])


def test_section_a_binary_two_observers():
    ben = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    gerry = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    m = wide([ben, gerry])
    assert round(ag.krippendorff_alpha(m), 3) == 0.095
    # The paper's observed agreement for this example: 6 of 10 units.
    assert ag.percent_agreement(m) == pytest.approx(0.6)


def test_section_b_nominal_two_observers():
    ben = ["a", "a", "b", "b", "d", "c", "c", "c", "e", "d", "d", "a"]
    gerry = ["b", "a", "b", "b", "b", "c", "c", "c", "e", "d", "d", "d"]
    assert round(ag.krippendorff_alpha(wide([ben, gerry])), 3) == 0.692


def test_section_c_nominal_many_observers_missing_values():
    assert round(ag.krippendorff_alpha(wide(K2011_C), level="nominal"), 3) == 0.743


def test_section_c_same_result_with_string_labels():
    words = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    observers = [[words[v] if v else None for v in row] for row in K2011_C]
    m = wide(observers)
    assert round(ag.krippendorff_alpha(m), 3) == 0.743
    ordered = ag.LabelMatrix.from_rows(
        [list(u) for u in zip(*observers, strict=True)], categories=list(words.values())
    )
    assert round(ag.krippendorff_alpha(ordered, level="ordinal"), 3) == 0.815


@pytest.mark.parametrize(
    "level, expected", [("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_section_d_other_metrics(level, expected):
    assert round(ag.krippendorff_alpha(wide(K2011_C), level=level), 3) == expected


def test_krippendorff_package_doc_example():
    nan = N
    data = [
        [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
        [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
        [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
    ]
    m = wide(data)
    assert round(ag.krippendorff_alpha(m, level="nominal"), 6) == 0.691358
    assert round(ag.krippendorff_alpha(m, level="interval"), 6) == 0.810845


FLEISS_WIKIPEDIA = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)


def test_fleiss_1971_wikipedia_example_from_counts():
    assert round(ag.fleiss_kappa_from_counts(FLEISS_WIKIPEDIA), 3) == 0.210


def test_fleiss_wikipedia_example_from_a_label_matrix():
    # Spell the counts out as 14 raters per subject (rater identities do not matter to Fleiss).
    rows = []
    for counts in FLEISS_WIKIPEDIA:
        rows.append([cat for cat, n in enumerate(counts, start=1) for _ in range(n)])
    m = ag.LabelMatrix.from_rows(rows)
    assert round(ag.fleiss_kappa(m), 3) == 0.210
    # P-bar of the worked example (0.378) is the pairwise percent agreement.
    assert round(ag.percent_agreement(m), 3) == 0.378


def test_cohen_wikipedia_example():
    # 50 proposals: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 -> p_o .7, p_e .5, kappa .4.
    table = np.array([[20, 5], [10, 15]])
    assert ag.cohen_kappa_from_confusion(table) == pytest.approx(0.4)
    a = np.repeat([0, 0, 1, 1], [20, 5, 10, 15])
    b = np.repeat([0, 1, 0, 1], [20, 5, 10, 15])
    assert ag.cohen_kappa(a, b, 2) == pytest.approx(0.4)
