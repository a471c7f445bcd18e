"""Pure tests of the label parser/validator (the attention schedule: test_rules)."""

from annotation.labels import (
    cleaned_failures,
    first_failure_step,
    parse_label,
    submission_errors,
)


def form(**kw):
    return {k: v if isinstance(v, list) else [v] for k, v in kw.items()}


def test_parse_full_failure_label_and_drop_out_of_range_steps():
    data = form(
        goal_ack="1",
        read=["1", "2", "3", "9", "x"],
        choice="failure",
        comments=" ok ",
        **{
            "f-0-desc": " Wrong order ",
            "f-0-l1": ["1", "7"],
            "f-0-l2": ["3"],
            "f-2-desc": "Missing rinse",
            "f-2-l1": [],
            "f-2-l2": ["2"],
        },
    )
    label = parse_label(data, n_l1=4, n_l2=3)
    assert label.goal_ack and label.read_steps == [1, 2, 3]
    assert label.has_failure is True
    assert label.failures == [
        {"description": "Wrong order", "l1_steps": [1], "l2_steps": [3]},
        {"description": "Missing rinse", "l1_steps": [], "l2_steps": [2]},
    ]
    assert submission_errors(label, n_l2=3) == []


def test_errors_name_each_missing_field():
    label = parse_label(
        form(read=["1"], choice="failure", **{"f-0-desc": "", "f-1-desc": "x"}), n_l1=3, n_l2=3
    )
    errors = submission_errors(label, n_l2=3)
    assert any(e.startswith("Goal:") for e in errors)
    assert any("2 left: L2.2, L2.3" in e for e in errors)
    assert "Failure 1: write a short description." in errors
    assert "Failure 1: link at least one L1 or L2 step." in errors
    assert "Failure 2: link at least one L1 or L2 step." in errors


def test_choice_required_and_failure_choice_needs_a_failure():
    label = parse_label(form(goal_ack="1", read=["1"]), n_l1=1, n_l2=1)
    assert any(e.startswith("Choice:") for e in submission_errors(label, n_l2=1))
    label = parse_label(form(goal_ack="1", read=["1"], choice="failure"), n_l1=1, n_l2=1)
    assert any(e.startswith("Critical failures:") for e in submission_errors(label, n_l2=1))


def test_no_failure_choice_discards_failure_blocks():
    label = parse_label(
        form(goal_ack="1", read=["1"], choice="none", **{"f-0-desc": "x", "f-0-l2": "1"}),
        n_l1=1,
        n_l2=1,
    )
    assert label.has_failure is False and cleaned_failures(label) == []


def test_first_failure_step_is_earliest_l2_step():
    assert (
        first_failure_step(
            [{"l2_steps": [4, 3]}, {"l2_steps": [2]}, {"l1_steps": [1], "l2_steps": []}]
        )
        == 2
    )
    assert first_failure_step([{"l1_steps": [1], "l2_steps": []}]) is None
