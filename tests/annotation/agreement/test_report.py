"""The report builder and the CSV parser (pure; no database)."""

import io
import json

import pytest

from annotation.agreement import ONE_ANNOTATOR
from annotation.agreement_report import build_report, location_label, report_to_text
from annotation.label_file import LabelFileError, LabelRow, parse_label_csv

CSV = """item_id,annotator_id,label,first_failure_step,topic
i1,a,has_failure,2,cooking
i1,b,has_failure,2,cooking
i1,c,no_failure,,cooking
i2,a,no_failure,,diy
i2,b,no_failure,,diy
i2,c,no_failure,,diy
i3,a,has_failure,1,diy
i3,b,has_failure,3,diy
i3,c,has_failure,1,diy
i4,a,no_failure,,cooking
i4,b,has_failure,4,cooking
"""


def parse(text, **kw):
    return parse_label_csv(io.StringIO(text), **kw)


def test_report_by_hand():
    f = parse(CSV, group_columns=["topic"])
    assert f.has_location and len(f.rows) == 11
    r = build_report(f.rows, with_location=True, group_columns=["topic"], n_resamples=200)
    assert (r["n_items"], r["n_annotators"], r["n_items_labelled_twice"]) == (4, 3, 4)
    assert r["categories"] == ["has_failure", "no_failure"]
    # 11 pairable values: has 6, no 5; disagreement per unit: i1 2*1*2/2=2, i4 2*1*1/1=2.
    d_e = (11 * 11 - (36 + 25)) / 10
    assert r["alpha"]["value"] == pytest.approx(1 - 4 / d_e)
    assert r["alpha"]["ci"]["low"] <= r["alpha"]["value"] <= r["alpha"]["ci"]["high"]
    assert r["alpha"]["ci"]["n_resamples"] == 200
    # pair agreement per item: 1/3, 1, 1, 0 -> 7/12
    assert r["percent_agreement"]["value"] == pytest.approx(7 / 12)
    assert r["majority"]["n_ties"] == 1
    assert r["majority"]["ties"] == [
        {"item_id": "i4", "counts": {"has_failure": 1, "no_failure": 1}}
    ]
    assert r["majority"]["distribution"] == {"has_failure": 2, "no_failure": 1}
    loo = {row["annotator_id"]: row for row in r["leave_one_out"]["annotators"]}
    assert (loo["a"]["n_compared"], loo["a"]["n_agree"], loo["a"]["n_others_tied"]) == (3, 2, 1)
    assert r["label_distribution"]["by_annotator"]["b"] == {"has_failure": 3, "no_failure": 1}
    # Location: i3 is "has_failure @ step 1" x2 and "@ step 3" -> less agreement than the label.
    assert r["first_failure"]["alpha"]["value"] < r["alpha"]["value"]
    assert r["first_failure"]["n_categories"] == 5
    groups = {g["group"]: g for g in r["groups"]["topic"]}
    assert groups["diy"]["alpha"]["value"] == pytest.approx(1.0)
    assert groups["cooking"]["n_items"] == 2 and groups["cooking"]["n_labels"] == 5
    pair = r["cohen_kappa"]["pairs"][0]
    assert (pair["annotator_a"], pair["annotator_b"], pair["n_items"]) == ("a", "b", 4)
    assert pair["confusion"] == [[2, 0], [1, 1]]
    json.dumps(r, allow_nan=False)  # no NaN anywhere
    text = report_to_text(r)
    assert "tie on i4" in text and "first-failure location" in text and "By topic" in text


def test_location_label():
    assert location_label("has_failure", 3) == "has_failure @ step 3"
    assert location_label("no_failure", None) == "no_failure"


def test_empty_and_single_annotator_reports_are_undefined_not_errors():
    empty = build_report([])
    assert empty["alpha"] == {"value": None, "undefined": "no labels"}
    assert empty["leave_one_out"]["annotators"] == []
    json.dumps(empty, allow_nan=False)
    assert "undefined (no labels)" in report_to_text(empty)
    one = build_report([LabelRow("i1", "a", "x"), LabelRow("i2", "a", "y")])
    assert one["alpha"] == {"value": None, "undefined": ONE_ANNOTATOR}
    assert one["fleiss_kappa"]["value"] is None


def test_numeric_labels_sort_numerically_and_ordinal_words_need_an_order():
    rows = [
        LabelRow(f"i{i}", a, str(v))
        for i, (x, y) in enumerate([(1, 2), (10, 10), (2, 2)])
        for a, v in (("a", x), ("b", y))
    ]
    assert build_report(rows, level="ordinal", n_resamples=0)["categories"] == ["1", "2", "10"]
    words = [
        LabelRow("i1", "a", "low"),
        LabelRow("i1", "b", "high"),
        LabelRow("i2", "a", "mid"),
        LabelRow("i2", "b", "mid"),
    ]
    with pytest.raises(ValueError, match="explicit category order"):
        build_report(words, level="ordinal")
    r = build_report(words, level="ordinal", categories=["low", "mid", "high"], n_resamples=0)
    assert r["categories"] == ["low", "mid", "high"] and "ci" not in r["alpha"]
    with pytest.raises(ValueError, match="missing from the category order: mid"):
        build_report(words, categories=["low", "high"])


# --- CSV errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "the file is empty; expected a header line: item_id,annotator_id,label"),
        ("item_id,label\ni1,x\n", "line 1: missing column(s) 'annotator_id'"),
        ("item_id,annotator_id,label\ni1,a,x\ni1,,x\n", "line 3: empty field 'annotator_id'"),
        ("item_id,annotator_id,label\ni1,a,  \n", "line 2: empty field 'label'"),
        (
            "item_id,annotator_id,label,first_failure_step\ni1,a,x,two\n",
            "line 2: bad first_failure_step 'two'",
        ),
        (
            "item_id,annotator_id,label,first_failure_step\ni1,a,x,0\n",
            "line 2: bad first_failure_step '0'",
        ),
        (
            "item_id,annotator_id,label,first_failure_step\ni1,a,x,1.5\n",
            "line 2: bad first_failure_step '1.5'",
        ),
        (
            "item_id,annotator_id,label\ni1,a,x\ni2,a,y\n\ni1,a,y\n",
            "line 5: item 'i1' is labelled twice by annotator 'a' (lines 2 and 5)",
        ),
        (
            "item_id,annotator_id,label\ni1,a\n",
            "line 2: expected 3 fields like the header, found 2",
        ),
        ("item_id,annotator_id,label,label\n", "line 1: column(s) 'label' appear twice"),
    ],
)
def test_malformed_files_name_the_line(text, message):
    with pytest.raises(LabelFileError) as exc:
        parse(text)
    assert str(exc.value).startswith(message)


def test_group_column_errors():
    with pytest.raises(LabelFileError, match="line 1: missing column\\(s\\) 'generator'"):
        parse(CSV, group_columns=["generator"])
    bad = CSV.replace("i1,c,no_failure,,cooking", "i1,c,no_failure,,diy")
    with pytest.raises(
        LabelFileError, match="line 4: item 'i1' has topic 'diy' but line 2 gave 'cooking'"
    ):
        parse(bad, group_columns=["topic"])


def test_header_with_bom_spaces_and_extra_columns_and_quoted_newlines():
    text = '\ufeff Item_ID , annotator_id,label,note\n"i1",a,x,"two\nlines"\ni1,b,x,\ni2,a,y,ok\n'
    f = parse(text)
    assert [(r.item_id, r.annotator_id, r.label, r.line) for r in f.rows] == [
        ("i1", "a", "x", 2),
        ("i1", "b", "x", 4),
        ("i2", "a", "y", 5),
    ]
    assert not f.has_location
