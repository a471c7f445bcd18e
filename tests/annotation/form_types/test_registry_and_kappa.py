"""The form-type registry (names, dotted paths, config errors naming the setting) and the
weighted κ added to ``annotation.agreement`` for rating scales (pure)."""

import numpy as np
import pytest

from annotation import agreement as ag
from annotation.form_types.base import FormType
from annotation.form_types.registry import (
    FORM_TYPES,
    FormConfigError,
    form_checked,
    form_choices,
    form_for,
    get_form_type,
)


def test_every_registered_type_loads_with_its_partial_name():
    for name in FORM_TYPES:
        form_type = get_form_type(name)
        assert isinstance(form_type, FormType)
        assert form_type.name == name
        assert form_type.template == f"annotation/forms/_{name}.html"
    assert [n for n, _ in form_choices()] == list(FORM_TYPES)


def test_dotted_path_and_unknown_names():
    assert get_form_type("annotation.form_types.rating.RatingForm").name == "rating"
    with pytest.raises(FormConfigError) as exc:
        get_form_type("likert")
    assert exc.value.field == "form_type" and "critical_failure" in exc.value.message
    with pytest.raises(FormConfigError, match="not a FormType"):
        get_form_type("annotation.form_types.base.ItemView")


def test_config_errors_name_the_setting():
    with pytest.raises(FormConfigError) as exc:
        form_for("critical_failure", {"x": 1})
    assert exc.value.field == "form_config"
    with pytest.raises(FormConfigError) as exc:
        form_for("rating", {"points": 1})
    assert exc.value.field == "form_config.points"
    with pytest.raises(FormConfigError) as exc:
        form_for("rating", {"dimensions": [{"key": "a", "label": "A"}, {"key": "a", "label": "B"}]})
    assert exc.value.field == "form_config.dimensions[2].key"
    with pytest.raises(FormConfigError) as exc:
        form_for("rating", {"dimensions": [{"key": "a", "label": "A", "anchors": {"7": "x"}}]})
    assert exc.value.field == "form_config.dimensions[1].anchors"
    with pytest.raises(FormConfigError) as exc:
        form_for("pairwise", {"allow_tie": "yes"})
    assert exc.value.field == "form_config.allow_tie"
    with pytest.raises(FormConfigError) as exc:
        form_for("solve", {})
    assert exc.value.field == "form_config.pack"
    with pytest.raises(FormConfigError) as exc:
        form_checked("solve", {"pack": "no-such-pack"})
    assert exc.value.field == "form_config.pack" and "not available" in exc.value.message
    with pytest.raises(FormConfigError, match="JSON object"):
        form_for("rating", ["overall"])


def test_weighted_kappa_hand_computed():
    """Two raters, 3 ordered categories; table rows A, columns B:
    [[2,1,0],[0,2,1],[0,0,2]] (n=8). Linear weights w=|i-j|/2: observed Σ w·O = (1+1)·0.5/8
    = 0.125; marginals A=(3,3,2)/8, B=(2,3,3)/8; expected Σ w·E = Σ_ij w_ij a_i b_j
    = (0.5·(3·3+3·2+3·3+2·3) + 1·(3·3+2·2))/64 = (0.5·30 + 13)/64 = 28/64 = 0.4375;
    κ_w = 1 − 0.125/0.4375 = 0.7142857. Quadratic w=(|i-j|/2)²: observed 0.0625,
    expected (0.25·30 + 13)/64 = 20.5/64; κ_w = 1 − 0.0625·64/20.5 = 0.804878."""
    table = np.array([[2, 1, 0], [0, 2, 1], [0, 0, 2]])
    assert ag.weighted_kappa_from_confusion(table, weights="linear") == pytest.approx(5 / 7)
    assert ag.weighted_kappa_from_confusion(table, weights="quadratic") == pytest.approx(
        1 - 4 / 20.5
    )
    perfect = np.diag([3, 2, 1])
    assert ag.weighted_kappa_from_confusion(perfect) == pytest.approx(1.0)
    assert isinstance(ag.weighted_kappa_from_confusion(np.zeros((3, 3))), ag.Undefined)
    with pytest.raises(ValueError, match="linear or quadratic"):
        ag.weighted_kappa_from_confusion(table, weights="cubic")


def test_weighted_kappa_matches_sklearn_style_definition_on_random_data():
    """Against a direct O(n²) implementation of Cohen (1968)."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, 60)
    b = np.clip(a + rng.integers(-1, 2, 60), 0, 4)
    table = ag.confusion_matrix(a, b, 5)
    w = (np.subtract.outer(np.arange(5), np.arange(5)) / 4) ** 2
    pa, pb = np.bincount(a, minlength=5) / 60, np.bincount(b, minlength=5) / 60
    direct = (
        1 - np.mean([w[x, y] for x, y in zip(a, b, strict=True)]) / (w * np.outer(pa, pb)).sum()
    )
    assert ag.weighted_kappa_from_confusion(table) == pytest.approx(direct)


def test_mean_pairwise_weighted_kappa_weights_pairs_by_shared_items():
    matrix = ag.LabelMatrix.from_rows(
        [[0, 0, 1], [1, 1, 1], [2, 2, None], [3, 3, 3], [4, 3, None]], categories=range(5)
    )
    value = ag.mean_pairwise_weighted_kappa(matrix)
    pairs = ag.pairwise_cohen_kappa(matrix)
    expected = sum(ag.weighted_kappa_from_confusion(p.confusion) * p.n_items for p in pairs) / sum(
        p.n_items for p in pairs
    )
    assert value == pytest.approx(expected)
    assert 0.8 < value < 1
    lone = ag.LabelMatrix.from_rows([[0, None], [None, 1]], categories=range(5))
    assert isinstance(ag.mean_pairwise_weighted_kappa(lone), ag.Undefined)


def test_critical_failure_type_wraps_labels_py():
    from annotation.form_types.base import AnnotatedAnswer, ItemView

    form = form_for("critical_failure", None)
    item = ItemView(goal="g", l1=["a", "b"], l2=["x", "y"])
    data = {"goal_ack": ["1"], "read": ["1", "2"], "read_l1": ["1", "2"], "choice": ["failure"]}
    data |= {"f-0-desc": ["Wrong time"], "f-0-l2": ["2"]}
    answer = form.parse(data, item)
    assert answer["has_failure"] is True and answer["failures"][0]["l2_steps"] == [2]
    assert form.errors(answer, item) == []
    assert form.errors(form.parse({}, item), item)[0].startswith("Goal:")
    assert form.matches(answer, {"has_failure": True})
    answers = [
        AnnotatedAnswer(i, a, {"choice": "failure" if (i + a) % 3 else "none", "failures": []})
        for i in range(6)
        for a in range(3)
    ]
    report = form.agreement(answers, n_resamples=20)
    assert report["sections"][0]["rows"][0]["name"] == "Krippendorff α"
    assert report["report"]["n_items"] == 6


@pytest.mark.parametrize(
    "name, config",
    [
        ("rating", {"preset": ["scirecipe"]}),
        ("rating", {"dimensions": "overall"}),
        ("rating", {"dimensions": [["overall"]]}),
        ("rating", {"dimensions": [{"key": "a", "label": "A", "anchors": {"0": 5}}]}),
        ("rating", {"points": True}),
        ("customplans", {"show_original": "no"}),
        ("pairwise", {"question": ""}),
        ("solve", {"pack": 3}),
        ("solve", {"pack": "x", "answer_field": "not a name"}),
    ],
)
def test_odd_json_settings_are_refused_never_crash(name, config):
    with pytest.raises(FormConfigError):
        form_for(name, config)


def test_form_types_are_pure_python_in_a_fresh_interpreter():
    """Importing every form type (and running one agreement level) loads no Django."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from annotation.form_types.registry import FORM_TYPES, get_form_type\n"
        "for name in FORM_TYPES: get_form_type(name)\n"
        "from annotation.form_types.base import AnnotatedAnswer\n"
        "from annotation.form_types.registry import form_for\n"
        "f = form_for('rating', {})\n"
        "f.agreement([AnnotatedAnswer(1, 'a', {'ratings': {'overall': 1}})], n_resamples=0)\n"
        "assert not any(m == 'django' or m.startswith('django.') for m in sys.modules), 'django'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=".")
    assert done.returncode == 0, done.stderr
