"""Per-item label exports (page, API, export_labels command): each annotator's label, the
majority with ties explicit, and the adjudicated label."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.selectors import exports
from annotation.services import adjudication as adj
from tests.annotation.factories import NO, label_study, make_study

pytestmark = pytest.mark.django_db


def download(client, study, fmt):
    r = client.get(reverse("annotation:labels_export", args=[study.pk, fmt]))
    assert r.status_code == 200
    assert f'filename="study-{study.pk}-labels.{fmt}"' in r["Content-Disposition"]
    return b"".join(r.streaming_content).decode()


def test_majority_of_reports_ties():
    assert exports.majority_of([True, True, False]) == ("failure", False)
    assert exports.majority_of([False, False, True]) == ("no failure", False)
    assert exports.majority_of([True, False]) == ("tie", True)
    assert exports.majority_of([]) == ("", False)


def test_jsonl_has_every_label_majority_and_adjudication(
    labelled_study, researcher_client, researcher_user
):
    item2 = labelled_study.items_by_position[2]
    adj.adjudication_record(
        item=item2,
        has_failure=True,
        failures=[{"description": "d", "l1_steps": [1], "l2_steps": []}],
        note="n",
        adjudicator=researcher_user,
    )
    rows = [
        json.loads(line)
        for line in download(researcher_client, labelled_study, "jsonl").splitlines()
    ]
    assert [r["item_id"] for r in rows] == [
        labelled_study.items_by_position[p].pk for p in range(6)
    ]
    by_item = {r["item_id"]: r for r in rows}
    r2 = by_item[item2.pk]
    assert [x["annotator_id"] for x in r2["labels"]] == ["A", "B", "C"]
    assert [x["has_failure"] for x in r2["labels"]] == [True, True, False]
    assert (
        r2["labels"][1]["failures"][0]["l2_steps"] == [3]
        and r2["labels"][2]["comments"] == "C says fine"
    )
    assert r2["first_failure_l2_steps"] == {"A": 1, "B": 3, "C": None}
    assert (r2["majority"], r2["majority_tie"], r2["n_failure"], r2["n_no_failure"]) == (
        "failure",
        False,
        2,
        1,
    )
    assert r2["adjudicated_has_failure"] is True and r2["adjudication_note"] == "n"
    assert r2["adjudicated_by"] == "report-adjudicator"
    r1 = by_item[labelled_study.items_by_position[1].pk]
    assert r1["majority"] == "no failure" and r1["adjudicated_has_failure"] is None


def test_csv_with_ties(researcher_client):
    study = make_study(n_items=2, overlap=2, items_per_participant=2, attention_rate=0.0)
    label_study(study, {0: {"A": 2, "B": NO}, 1: {"A": NO, "B": NO}}, ["A", "B"])
    rows = list(csv.DictReader(io.StringIO(download(researcher_client, study, "csv"))))
    assert tuple(rows[0].keys()) == exports.ITEM_EXPORT_FIELDS
    assert [(r["majority"], r["majority_tie"]) for r in rows] == [
        ("tie", "True"),
        ("no failure", "False"),
    ]
    assert json.loads(rows[0]["labels"])[0]["failures"][0]["l2_steps"] == [2]
    assert rows[0]["adjudicated_has_failure"] == ""


def test_export_labels_command(labelled_study, tmp_path):
    out = io.StringIO()
    call_command("export_labels", study=labelled_study.pk, format="jsonl", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 6 and json.loads(lines[0])["n_labels"] == 3
    path = tmp_path / "labels.csv"
    err = io.StringIO()
    call_command(
        "export_labels", study=labelled_study.pk, format="csv", output=str(path), stderr=err
    )
    assert "6 rows written" in err.getvalue()
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert len(rows) == 6 and rows[0]["majority"] == "failure"
    with pytest.raises(CommandError, match="--study 999999: no such study"):
        call_command("export_labels", study=999999, format="csv")


def test_export_labels_command_gold(labelled_study, researcher_user):
    adj.adjudication_record(
        item=labelled_study.items_by_position[3], has_failure=False, adjudicator=researcher_user
    )
    out = io.StringIO()
    call_command(
        "export_labels",
        study=labelled_study.pk,
        format="jsonl",
        gold=True,
        kind="attention",
        stdout=out,
    )
    row = json.loads(out.getvalue())
    assert row["kind"] == "attention" and row["expected_has_failure"] is False
    assert row["generation_id"] == labelled_study.items_by_position[3].generation_id


def test_labels_api_is_paginated(labelled_study, researcher_client):
    body = researcher_client.get(reverse("annotation_api:labels", args=[labelled_study.pk])).json()
    assert body["count"] == 6 and len(body["results"]) == 6
    assert body["results"][0]["majority"] == "failure"


def test_unknown_format_is_404(labelled_study, researcher_client):
    r = researcher_client.get(reverse("annotation:labels_export", args=[labelled_study.pk, "xml"]))
    assert r.status_code == 404
