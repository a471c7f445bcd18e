"""CustomPlans: the edit applier (the seed notes' worked example, §2.1), the step diff, and the
majority / FullyCorrect aggregation (§2.2, Table 2's k/206 percentages)."""

from __future__ import annotations

import pytest

from benchmarks.packs.customplans import (
    Edit,
    EditError,
    aggregate_ratings,
    apply_edits,
    edit_diff,
    edits_from_json,
    majority_yes,
    parse_edit_calls,
    step_diff,
    table_percentages,
)
from benchmarks.packs.registry import RecordError, get_pack

P = ["s1", "s2", "s3"]


def test_worked_example_replace_empty_and_inserts():
    edits = [Edit("replace", 2, ""), Edit("insert", 2, "X"), Edit("insert", 3, "Y")]
    assert apply_edits(P, edits).steps == ["s1", "X", "s3", "Y"]
    assert edits[0].op == "delete"


def test_prepend_order_of_inserts_and_replace_with_insert():
    edits = [
        Edit("insert", 1, "A"),
        Edit("insert", 0, "first"),
        Edit("insert", 1, "B"),
        Edit("replace", 1, "S1"),
    ]
    assert apply_edits(P, edits).steps == ["first", "S1", "A", "B", "s2", "s3"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            Edit("insert", 4, "Z"),
            r"edit 2 \(insert\(4, \"Z\"\)\): insert index must be between 0 and 3",
        ),
        (Edit("replace", 0, "Z"), r"edit 2 .*step index must be between 1 and 3"),
        (Edit("delete", 9), r"edit 2 \(delete\(9\)\): step index must be between 1 and 3"),
        (Edit("replace", 1, "again"), r"edit 2 .*step 1 is already replaced"),
    ],
)
def test_bad_indices_are_clear_errors_or_dropped(edit, message):
    edits = [Edit("replace", 1, "S1"), edit]
    with pytest.raises(EditError, match=message):
        apply_edits(P, edits)
    applied = apply_edits(P, edits, on_invalid="drop")
    assert applied.steps == ["S1", "s2", "s3"]
    assert [pos for pos, _e, _why in applied.dropped] == [1]


def test_edits_from_json_names_the_field():
    assert edits_from_json([{"op": "insert", "index": 0, "text": " Go "}]) == [
        Edit("insert", 0, "Go")
    ]
    for bad, field in [
        ([{"op": "move", "index": 1}], r"edits\[0\]\.op"),
        ([{"op": "delete", "index": "2"}], r"edits\[0\]\.index"),
        ([{"op": "insert", "index": 1, "text": ""}], r"edits\[0\]\.text"),
        ("x", "edits: must be a list"),
    ]:
        with pytest.raises(EditError, match=field):
            edits_from_json(bad)


def test_parse_edit_calls_from_model_output():
    text = (
        "Here are the revisions:\n"
        'replace(3, "Use a large pan (not a pot).")\n'
        "insert(2, Preheat the stovetop.)\n"
        '- replace(1, "")\n'
        "delete(4);\n"
        "Nothing else."
    )
    assert parse_edit_calls(text) == [
        Edit("replace", 3, "Use a large pan (not a pot)."),
        Edit("insert", 2, "Preheat the stovetop."),
        Edit("delete", 1),
        Edit("delete", 4),
    ]


def test_edit_diff_rows():
    edits = [
        Edit("replace", 2, ""),
        Edit("insert", 2, "X"),
        Edit("insert", 3, "Y"),
        Edit("replace", 1, "S1"),
    ]
    diff = edit_diff(P, edits)
    assert [(r.kind, r.left_index, r.right_index, r.right) for r in diff.rows] == [
        ("changed", 1, 1, "S1"),
        ("deleted", 2, None, ""),
        ("inserted", None, 2, "X"),
        ("equal", 3, 3, "s3"),
        ("inserted", None, 4, "Y"),
    ]
    assert diff.first_divergence == 0
    assert diff.counts == {"equal": 1, "changed": 1, "inserted": 2, "deleted": 1}
    assert [r.right for r in diff.rows if r.right_index] == apply_edits(P, edits).steps


def test_step_diff_without_edits():
    diff = step_diff(["a", "b", "c"], ["a", "B!", "c", "d"])
    assert [(r.kind, r.left_index, r.right_index) for r in diff.rows] == [
        ("equal", 1, 1),
        ("changed", 2, 2),
        ("equal", 3, 3),
        ("inserted", None, 4),
    ]


def test_majority_and_fully_correct_is_and_of_majorities():
    assert majority_yes([True, True, False]) and not majority_yes([True, False, False])
    assert not majority_yes([True, True, False, False])  # a tie is not a majority
    # Two raters say yes to each question, but only one to both: FullyCorrect is still 1,
    # because it is the AND of the two majorities.
    ratings = [
        {"q1": "yes", "q2": ["missing"]},
        {"q1": "yes", "q2": "yes"},
        {"q1": ["changed", "vague"], "q2": "yes"},
    ]
    agg = aggregate_ratings(ratings)
    assert (agg["executable"], agg["customized"], agg["fully_correct"]) == (1, 1, 1)
    assert agg["q2_missing"] == 1 and agg["q1_vague"] == 1 and agg["q1_deleted"] == 0
    not_custom = [
        {"q1": "yes", "q2": ["deleted"]},
        {"q1": "yes", "q2": ["vague"]},
        {"q1": "yes", "q2": "yes"},
    ]
    # The study form stores each answer as a list of options: ["yes"] is a yes.
    assert aggregate_ratings([{"q1": ["yes"], "q2": ["yes"]}])["fully_correct"] == 1
    agg = aggregate_ratings(not_custom)
    assert (agg["executable"], agg["customized"], agg["fully_correct"]) == (1, 0, 0)


def test_table2_percentages_are_k_over_206():
    # SEQUENTIAL: FullyCorrect 51.94 = 107/206, Executable 72.33 = 149/206, Customized 60.68 = 125/206.
    items = []
    for k in range(206):
        executable = int(k < 149)
        customized = int(k < 107 or 149 <= k < 149 + 18)
        items.append(
            {
                "executable": executable,
                "customized": customized,
                "fully_correct": executable and customized,
            }
        )
    table = table_percentages(items)
    assert round(table["fully_correct"], 2) == 51.94
    assert round(table["executable"], 2) == 72.33
    assert round(table["customized"], 2) == 60.68
    assert table["n"] == 206


@pytest.mark.parametrize(
    ("ratings", "field", "message"),
    [
        ([], "ratings", "non-empty list"),
        ([{"q1": "yes"}], "ratings[0].q2", "is required"),
        ([{"q1": "yes", "q2": ["wrong"]}], "ratings[0].q2", "unknown error type 'wrong'"),
        ([{"q1": [], "q2": "yes"}], "ratings[0].q1", 'must be "yes" or a list'),
        ([{"q1": ["yes", "vague"], "q2": "yes"}], "ratings[0].q1", "cannot be combined"),
    ],
)
def test_bad_ratings_name_the_field(ratings, field, message):
    with pytest.raises(RecordError) as caught:
        aggregate_ratings(ratings)
    assert caught.value.field == field and message in caught.value.message


def test_registered_pack_scores_records():
    pack = get_pack("customplans")
    row = pack.score(
        {
            "id": "c1",
            "steps": P,
            "edits": 'replace(2, "")\ninsert(2, "X")\ninsert(3, "Y")\ninsert(9, "Z")',
            "ratings": [
                {"q1": "yes", "q2": "yes"},
                {"q1": "yes", "q2": ["vague"]},
                {"q1": ["missing"], "q2": "yes"},
            ],
        }
    )
    assert row.metrics == {
        "executable": 1,
        "customized": 1,
        "fully_correct": 1,
        "n_edits": 4,
        "n_steps_out": 4,
    }
    assert row.breakdown["customized_steps"] == ["s1", "X", "s3", "Y"]
    assert row.breakdown["dropped_edits"] == [
        'edit 4 (insert(9, "Z")): insert index must be between 0 and 3'
    ]
    other = pack.score({"ratings": [{"q1": "yes", "q2": ["missing"]}] * 3})
    summary = pack.summary([row.metrics, other.metrics])
    assert summary["fully_correct"] == 0.5 and summary["n"] == 2 and summary["n_edits"] == 4
    with pytest.raises(RecordError, match="needs ratings, edits"):
        pack.score({"id": "x"})
    with pytest.raises(RecordError) as caught:
        pack.score({"edits": [{"op": "delete", "index": None}]})
    assert caught.value.field == "edits[0].index"
    assert pack.options == {"on_invalid": "drop"}
    with pytest.raises(RecordError, match=r"edit 2 \(insert\(9, \"Z\"\)\): insert index"):
        pack.score_with({"steps": P, "edits": 'delete(1)\ninsert(9, "Z")'}, {"on_invalid": "error"})
