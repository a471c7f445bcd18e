"""Seed 000 §4.3's study shape (3 annotators × 200 items, binary label + first-failure step):
the CSV command's figures equal an independent computation from the same file — α through
``krippendorff.alpha`` on the raw reliability matrix, leave-one-out by a plain loop."""

import csv
import json
from collections import Counter
from io import StringIO

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command

ANNOTATORS = ("p1", "p2", "p3")


def write_study(path, seed=2026):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(200):
        failing = rng.random() < 0.5
        step = int(rng.integers(1, 10))
        for a in ANNOTATORS:
            says = failing ^ (rng.random() < 0.12)
            at = (step if rng.random() < 0.55 else int(rng.integers(1, 10))) if says else None
            label = "has_failure" if says else "no_failure"
            rows.append((f"ex-{i}", a, label, "" if at is None else str(at)))
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "annotator_id", "label", "first_failure_step"])
        w.writerows(rows)
    return rows


def independent_alpha(rows, key):
    values = sorted({key(r) for r in rows})
    data = np.full((len(ANNOTATORS), 200), np.nan)
    for item, a, label, step in rows:
        data[ANNOTATORS.index(a), int(item[3:])] = values.index(key((item, a, label, step)))
    return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")


def test_section_4_3_figures_match_an_independent_computation(tmp_path):
    path = tmp_path / "study.csv"
    rows = write_study(path)
    out = StringIO()
    call_command("agreement_report", "--input", str(path), "--format", "json", stdout=out)
    report = json.loads(out.getvalue())

    assert report["n_items"] == 200 and report["n_annotators"] == 3
    binary = independent_alpha(rows, key=lambda r: r[2])
    location = independent_alpha(rows, key=lambda r: (r[2], r[3]))
    assert report["alpha"]["value"] == pytest.approx(binary)
    assert report["first_failure"]["alpha"]["value"] == pytest.approx(location)
    assert location < binary  # as in the paper: agreeing on the location is harder
    ci = report["alpha"]["ci"]
    assert ci["low"] < binary < ci["high"] and ci["high"] - ci["low"] < 0.3

    labels = {(r[0], r[1]): r[2] for r in rows}
    for row in report["leave_one_out"]["annotators"]:
        me = row["annotator_id"]
        agree = compared = tied = 0
        for i in range(200):
            others = Counter(labels[(f"ex-{i}", a)] for a in ANNOTATORS if a != me)
            (top, n), *rest = others.most_common()
            if rest and rest[0][1] == n:
                tied += 1
                continue
            compared += 1
            agree += labels[(f"ex-{i}", me)] == top
        assert (row["n_agree"], row["n_compared"], row["n_others_tied"]) == (agree, compared, tied)
        assert row["agreement"]["value"] == pytest.approx(agree / compared)
    lo = min(r["agreement"]["value"] for r in report["leave_one_out"]["annotators"])
    assert report["leave_one_out"]["min"]["value"] == pytest.approx(lo)
