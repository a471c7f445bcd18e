"""alt_test, how2score_ppi and agreement_report on a label-set file (--labels): the same
numbers as their own formats on the same data, names kept as given, answers in words, and
refusals naming the line and the column."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.validation.label_sets.scenario import csv_text, jsonl_text, rows

DATA = Path(__file__).resolve().parents[1] / "data" / "alt_test"


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("dataset", "scoring", "epsilon"),
    [("mtbench", "accuracy", 0.2), ("cebab_stars", "neg_rmse", 0.1)],
)
def test_alt_test_on_a_label_file_equals_the_reference_format(tmp_path, dataset, scoring, epsilon):
    """The reference repository's JSON files rewritten as one label file (JSONL)."""
    humans = json.loads((DATA / dataset / "human_annotations.json").read_text())
    llms = json.loads((DATA / dataset / "llm_annotations.json").read_text())
    records = [
        {"item_id": item, "source": who, "kind": kind, "label": label}
        for kind, table in (("human", humans), ("judge", llms))
        for who, labels in table.items()
        for item, label in labels.items()
    ]
    path = _write(tmp_path, "labels.jsonl", jsonl_text(records))
    common = ("--epsilon", str(epsilon), "--format", "json")
    today = json.loads(
        _run("alt_test", "--humans", str(DATA / dataset / "human_annotations.json"),
             "--llm", str(DATA / dataset / "llm_annotations.json"), "--scoring", scoring,
             *common)
    )  # fmt: skip
    got = json.loads(_run("alt_test", "--labels", path, *common))
    assert got == today and list(got) == list(llms)  # keyed by judge, in the file's order
    assert {r["scoring"] for r in got.values()} == {scoring}  # numbers → negative RMSE


def test_alt_test_keeps_names_and_says_not_rejected(tmp_path):
    path = _write(tmp_path, "labels.csv", csv_text(rows()))
    text = _run("alt_test", "--labels", path)
    assert "my-judge may not replace the annotators" in text and "My-judge" not in text
    assert "ε = 0.1 (the alt-test paper's value for crowd workers)" in text
    assert "won against 0 of 3 annotators" in text
    assert "ann1: p 0.3095, not rejected" in text and "kept" not in text
    assert "This may be for lack of items" in text and "2 label categories" in text
    experts = json.loads(
        _run("alt_test", "--labels", path, "--annotator-kind", "experts", "--format", "json")
    )
    assert experts["my-judge"]["epsilon"] == 0.2
    text = _run("alt_test", "--labels", path, "--annotator-kind", "experts")
    assert "ε = 0.2 (the alt-test paper's value for experts)" in text


def test_how2score_ppi_on_a_label_file_equals_the_csv_pair(tmp_path):
    records = rows()
    path = _write(tmp_path, "labels.csv", csv_text(records))
    # the same data in today's format, the majority worked out by hand
    votes: dict[str, list[int]] = {}
    for r in records:
        if r["kind"] == "human":
            votes.setdefault(r["item_id"], []).append(int(r["label"]))
    judge = {r["item_id"]: (r["label"], r["group"]) for r in records if r["kind"] == "judge"}
    for group in (None, "model-b"):
        labelled, unlabelled = ["id,human,judge"], ["id,judge"]
        for item, (verdict, g) in judge.items():
            if group and g != group:
                continue
            if item in votes:
                labelled.append(f"{item},{int(sum(votes[item]) >= 2)},{verdict}")
            else:
                unlabelled.append(f"{item},{verdict}")
        lab = _write(tmp_path, "L.csv", "\n".join(labelled) + "\n")
        unl = _write(tmp_path, "U.csv", "\n".join(unlabelled) + "\n")
        today = json.loads(
            _run("how2score_ppi", "--labelled", lab, "--unlabelled", unl, "--format", "json")
        )
        extra = ["--group", group] if group else []
        got = json.loads(_run("how2score_ppi", "--labels", path, *extra, "--format", "json"))
        assert {k: got[k] for k in today} == today
        assert got["judge"] == "my-judge" and got["group"] == group
        assert 0 <= today["lambda"] <= 1 and today["labelled_bias"]["n"] == 60 // (
            2 if group else 1
        )
    whole = json.loads(_run("how2score_ppi", "--labels", path, "--format", "json"))
    assert sorted(whole["groups"]) == ["model-a", "model-b"]
    assert whole["groups"]["model-b"]["how2score"] == got["how2score"]


def test_how2score_ppi_text_opens_with_a_sentence(tmp_path):
    path = _write(tmp_path, "labels.csv", csv_text(rows()))
    text = _run("how2score_ppi", "--labels", path)
    first = text.splitlines()[0]
    assert first.startswith("Corrected with 60 items labelled by people, the How2Score judged "
                            "by my-judge is 70.4% (95% CI 59.9–80.9%; PPI++, λ = 0.")  # fmt: skip
    assert "the judge finds failures people do not on 15% of items" in text
    assert "model-b's How2Score judged by my-judge" in text


def test_how2score_ppi_with_only_labelled_items_says_what_it_needs(tmp_path):
    text = "item_id,source,kind,label\n" + "".join(
        f"i{i},a,human,{i % 2}\ni{i},b,human,{i % 2}\ni{i},j,judge,{(i // 2) % 2}\n"
        for i in range(6)
    )
    out = _run("how2score_ppi", "--labels", _write(tmp_path, "l.csv", text))
    assert "PPI needs the judge's verdicts on items people did not label" in out


def test_agreement_report_on_a_label_file_equals_the_long_csv(tmp_path):
    records = rows()
    path = _write(tmp_path, "labels.csv", csv_text(records))
    long_csv = "item_id,annotator_id,label,group\n" + "".join(
        f"{r['item_id']},{r['source']},{r['label']},{r['group']}\n"
        for r in records
        if r["kind"] == "human"
    )
    old = _write(tmp_path, "old.csv", long_csv)
    opts = ("--format", "json", "--bootstrap", "50")
    today = json.loads(_run("agreement_report", "--input", old, "--group-by", "group", *opts))
    got = json.loads(_run("agreement_report", "--labels", path, *opts))
    assert got == today
    assert got["alpha"]["value"] == pytest.approx(0.577, abs=5e-4)


@pytest.mark.parametrize(
    ("command", "text", "message"),
    [
        ("alt_test", "item_id,source,kind,label\na,x,robot,1\n",
         "labels.csv line 2, column 'kind': unknown kind 'robot'"),
        ("how2score_ppi", "item_id,source,kind,label\na,x,human,1\na,j,judge,2\n",
         "line 3, column 'label': PPI takes 0/1 labels"),
        ("agreement_report", "item_id,annotator,label\n", "line 1: missing column"),
        ("alt_test", "", "the file is empty"),
    ],
)  # fmt: skip
def test_label_file_refusals(tmp_path, command, text, message):
    with pytest.raises(CommandError, match=message):
        _run(command, "--labels", _write(tmp_path, "labels.csv", text))


def test_agreement_on_one_shared_item_says_so(tmp_path):
    """The first failure located differently by two people on their one shared item: α would
    be 0.000 with a 0.000–0.000 interval; it says why there is no value instead."""
    path = _write(tmp_path, "one.csv", "item_id,annotator_id,label,first_failure_step\n"
                  "a,x,1,2\na,y,1,3\nb,x,0,\nc,y,1,1\n")  # fmt: skip
    text = _run("agreement_report", "--input", path, "--bootstrap", "20")
    assert "first-failure location: undefined (1 item in common" in text
    assert "0.000" not in text


def test_an_empty_unlabelled_file_says_what_ppi_needs(tmp_path):
    lab = _write(tmp_path, "L.csv", "id,human,judge\na,1,1\nb,0,1\n")
    unl = _write(tmp_path, "U.csv", "id,judge\n")
    with pytest.raises(CommandError, match=r"U\.csv: no data rows; PPI needs the judge's verdicts "
                       r"on items people did not label"):  # fmt: skip
        _run("how2score_ppi", "--labelled", lab, "--unlabelled", unl)
