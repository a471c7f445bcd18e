"""The label-set file (annotation.label_set_file) and its adapters (validation.label_sets.
adapters): what is read, what is refused with the line and the column named, and the inputs
each statistic gets. Pure: no database."""

from __future__ import annotations

import pytest

from annotation.label_set_file import (
    BINARY,
    CATEGORICAL,
    NUMERIC,
    LabelSetError,
    agreement_rows,
    parse_label_set,
)
from tests.validation.label_sets.scenario import csv_text, jsonl_text, rows
from validation.label_sets.adapters import (
    ALL_GROUPS,
    alt_test_inputs,
    disagreement_rows,
    human_majority,
    ppi_inputs,
)

HEADER = "item_id,source,kind,label\n"


def _parse(text: str, **kwargs):
    return parse_label_set(text.encode(), **kwargs)


def test_csv_and_jsonl_give_the_same_labels():
    records = rows()
    a = _parse(csv_text(records), name="labels.csv")
    b = _parse(jsonl_text(records), name="labels.jsonl")
    assert (a.file_format, b.file_format) == ("csv", "jsonl")
    strip = [(x.item_id, x.source, x.kind, x.label, x.group, x.text) for x in a.labels]
    assert strip == [(x.item_id, x.source, x.kind, x.label, x.group, x.text) for x in b.labels]
    assert a.counts() == {"n_labels": 780, "n_items": 600, "n_human_items": 60,
                          "n_judge_items": 600, "n_annotators": 3, "n_judges": 1,
                          "n_groups": 2}  # fmt: skip
    assert a.label_kind == BINARY and a.groups == ["model-a", "model-b"]


def test_label_kinds_and_json_numbers():
    numbers = _parse('{"item_id": "a", "source": "x", "kind": "human", "label": 4.0}\n'
                     '{"item_id": "a", "source": "j", "kind": "judge", "label": 3.5}\n')  # fmt: skip
    assert [x.label for x in numbers.labels] == ["4", "3.5"] and numbers.label_kind == NUMERIC
    words = _parse(HEADER + "a,x,human,yes\na,j,judge,no\n")
    assert words.label_kind == CATEGORICAL
    assert alt_test_inputs(numbers)[2] == "neg_rmse" and alt_test_inputs(words)[2] == "accuracy"


def test_a_row_without_group_takes_its_items_group():
    s = _parse("item_id,source,kind,label,group\na,x,human,1,\na,j,judge,0,g1\n")
    assert [x.group for x in s.labels] == ["g1", "g1"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        ("  \n\n", "the file is empty"),
        ("item_id,source,label\na,x,1\n", "line 1: missing column\\(s\\) kind"),
        ("item_id,source,kind,label,colour\n", "line 1: unknown column\\(s\\) 'colour'"),
        ("item_id,source,kind,label,label\n", "line 1: column\\(s\\) label appear twice"),
        (HEADER, "no label rows"),
        (HEADER + "a,x,person,1\n", "line 2, column 'kind': unknown kind 'person'"),
        (HEADER + "a,x,human,1\nb,x,human\n", "line 3: expected 4 fields"),
        (HEADER + "a,x,human,\n", "line 2, column 'label': empty"),
        (HEADER + "a,x,human,1\na,x,human,0\n", "line 3, column 'item_id': .*twice by 'x' "
         "\\(lines 2 and 3\\)"),
        (HEADER + "a,x,human,1\nb,x,judge,0\n", "line 3, column 'kind': source 'x' is judge"),
        ("item_id,source,kind,label,group\na,x,human,1,g1\na,y,human,1,g2\n",
         "line 3, column 'group': item 'a' is in group 'g2'"),
        (HEADER + "a,x,human,1\nb,x\x00,human,1\n", "line 3: contains a control character "
         "\\(U\\+0000 NUL\\) at character 4"),
        (HEADER + "a,x,human," + "y" * 101 + "\n", "line 2, column 'label': 101 characters"),
        ('{"item_id": "a", "source": "x", "kind": "human"}\n', "line 1: missing column\\(s\\) "
         "label"),
        ('{"item_id": "a", "source": "x", "kind": "human", "label": 1}\n{oops\n',
         "line 2: not JSON"),
        ('{"item_id": "a", "source": "x", "kind": "human", "label": true}\n',
         "line 1, column 'label': expected text or a number"),
        ('{"item_id": "a", "source": "x\\u0000", "kind": "human", "label": 1}\n',
         "line 1, column 'source': contains a control character"),
    ],
)  # fmt: skip
def test_refusals_name_the_line_and_the_column(text, message):
    with pytest.raises(LabelSetError, match=message):
        _parse(text)


def test_size_and_encoding_refusals():
    big = (HEADER + "a,x,human,1\n").encode() + b"x" * (50 * 2**20)
    with pytest.raises(LabelSetError, match="over the limit of 20 MiB"):
        parse_label_set(big)
    with pytest.raises(LabelSetError, match="over the limit of 1 MiB"):
        parse_label_set(b"x" * (2**20 + 1), max_bytes=2**20)
    with pytest.raises(LabelSetError, match="line 2: not UTF-8 text"):
        parse_label_set(HEADER.encode() + b"a,\xff,human,1\n")


def test_ppi_needs_zero_one_labels_and_names_the_line():
    s = _parse(HEADER + "a,x,human,1\na,j,judge,yes\n")
    with pytest.raises(LabelSetError, match="line 3, column 'label': PPI takes 0/1 labels"):
        ppi_inputs(s)
    with pytest.raises(LabelSetError, match="no judge labels"):
        ppi_inputs(_parse(HEADER + "a,x,human,1\n"))


def test_majority_ties_are_unlabelled_for_ppi():
    s = _parse(
        HEADER
        + "a,x,human,1\na,y,human,1\na,z,human,0\n"  # majority 1
        + "b,x,human,1\nb,y,human,0\n"  # tie: unlabelled
        + "c,x,human,0\n"  # one annotator: their label
        + "a,j,judge,1\nb,j,judge,0\nc,j,judge,1\nd,j,judge,0\n"
    )
    majority, n = human_majority(s)
    assert majority == {"a": "1", "b": None, "c": "0"} and n == {"a": 3, "b": 2, "c": 1}
    assert ppi_inputs(s)[ALL_GROUPS] == {"human": [1, 0], "judge": [1, 1], "unlabelled": [0, 0]}
    kinds = {r["item_id"]: r["kind"] for r in disagreement_rows(s)}
    assert kinds == {"a": "both_failure", "b": "people_split", "c": "judge_failure"}


def test_ppi_inputs_per_group_add_up_to_the_whole():
    s = _parse(csv_text(rows()))
    inputs = ppi_inputs(s)
    assert list(inputs) == [ALL_GROUPS, "model-a", "model-b"]
    for key in ("human", "judge", "unlabelled"):
        assert len(inputs["model-a"][key]) + len(inputs["model-b"][key]) == len(inputs[""][key])
    assert len(inputs[""]["unlabelled"]) == 540 and list(ppi_inputs(s, group="model-b")) == [
        "model-b"
    ]


def test_agreement_rows_are_the_human_labels():
    s = _parse(csv_text(rows()))
    got = agreement_rows(s)
    assert len(got) == 180 and {r.annotator_id for r in got} == {"ann1", "ann2", "ann3"}
    assert got[0].groups == {"group": "model-a"}
    assert {r.label for r in got} == {"0", "1"}
