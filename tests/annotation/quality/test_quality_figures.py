"""The quality page's figures against the hand-computed fixture (conftest.py).

Working, majority of the *others* per regular item (ties skipped):
- A: i0 others TTF→T ✓, i1 FFF→F ✓, i2 TF tie, i3 FT tie, i4 FTT→T ✓, i5 FFT→F ✓: 4/4;
  halves [✓✓][✓✓] → 1.0, 1.0, drift 0. Known 2/2. Checks 2/2. 50 s/item → keep.
- B: i0 ✓, i1 ✓, i2 tie, i3 tie, i4 others TTT→T but F ✗, i5 ✓: 3/4 = 0.75; halves [✓✓][✗✓]
  → 1.0, 0.5, drift −0.5 (warn). Known 1/2. Checks 1/2 (warn). 45 s/item → warn.
- C: i0 TTF→T ✓, i1 ✓, i2 TT→T ✗, i3 FF→F ✗, i4 TFT→T ✓, i5 FFT→F ✓: 4/6 ≈ 0.667; halves
  [✓✓✗][✗✓✓] → 2/3, 2/3, drift 0. No known items, no checks. 31 s/item → keep.
- D: i0 TTT→T ✗, i1 ✓, i4 TFT→T ✓, i5 FFF→F ✗: 2/4 = 0.5 (warn: < 0.6); halves [✗✓][✓✗] →
  0.5, 0.5. Known 0/2 (reject), checks 0/2 (reject), 20 s/item < 30 s (warn) → reject.
"""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from annotation.selectors.quality import quality_rows

pytestmark = pytest.mark.django_db

EXPECTED = {
    "PID_A": {
        "items_done": 6,
        "seconds_per_item": 50.0,
        "attention_passed": 2,
        "attention_total": 2,
        "majority_agreement": 1.0,
        "majority_compared": 4,
        "gold_agreement": 1.0,
        "gold_total": 2,
        "first_half": 1.0,
        "second_half": 1.0,
        "drift": 0.0,
        "action": "keep",
        "reasons": "no problem found",
    },
    "PID_B": {
        "items_done": 6,
        "seconds_per_item": 45.0,
        "attention_passed": 1,
        "attention_total": 2,
        "majority_agreement": 0.75,
        "majority_compared": 4,
        "gold_agreement": 0.5,
        "gold_total": 2,
        "first_half": 1.0,
        "second_half": 0.5,
        "drift": -0.5,
        "action": "warn",
        "reasons": "failed 1 of 2 attention checks; agreement fell from 100% to 50%",
    },
    "PID_C": {
        "items_done": 6,
        "seconds_per_item": 31.0,
        "attention_passed": 0,
        "attention_total": 0,
        "majority_agreement": 0.667,
        "majority_compared": 6,
        "gold_agreement": None,
        "gold_total": 0,
        "first_half": 0.667,
        "second_half": 0.667,
        "drift": 0.0,
        "action": "keep",
        "reasons": "no problem found",
    },
    "PID_D": {
        "items_done": 4,
        "seconds_per_item": 20.0,
        "attention_passed": 0,
        "attention_total": 2,
        "majority_agreement": 0.5,
        "majority_compared": 4,
        "gold_agreement": 0.0,
        "gold_total": 2,
        "first_half": 0.5,
        "second_half": 0.5,
        "drift": 0.0,
        "action": "reject",
        "reasons": "failed 2 of 2 attention checks; 0 of 2 known items right; agrees with "
        "the majority on 2 of 4 items; 20 s active per item, under the 30 s minimum",
    },
}


def test_every_figure_matches_the_hand_computation(quality_study):
    rows = {r["participant"]: r for r in quality_rows(study=quality_study)}
    assert set(rows) == set(EXPECTED)
    for pid, expected in EXPECTED.items():
        got = {k: rows[pid][k] for k in expected}
        assert got == expected, pid


def test_sorting(quality_study):
    by_action = [r["participant"] for r in quality_rows(study=quality_study)]
    assert by_action == ["PID_D", "PID_B", "PID_A", "PID_C"]  # reject, warn, keep (then name)
    by_agreement = quality_rows(study=quality_study, sort="majority_agreement", descending=True)
    assert [r["participant"] for r in by_agreement] == ["PID_A", "PID_B", "PID_C", "PID_D"]
    by_gold = quality_rows(study=quality_study, sort="gold_agreement")
    assert [r["participant"] for r in by_gold] == ["PID_D", "PID_B", "PID_A", "PID_C"]  # None last


def test_page_and_csv_export(quality_study, client, make_user):
    client.force_login(make_user("q-researcher", role="researcher"))
    page = client.get(reverse("annotation:quality", args=[quality_study.pk]) + "?sort=-drift")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.index('data-participant="PID_A"') < html.index('data-participant="PID_B"')
    assert "20 s active per item, under the 30 s minimum" in html
    r = client.get(reverse("annotation:quality_export", args=[quality_study.pk, "csv"]))
    assert r.status_code == 200
    rows = list(csv.DictReader(io.StringIO(b"".join(r.streaming_content).decode())))
    d = next(row for row in rows if row["participant"] == "PID_D")
    assert (d["action"], d["gold_agreement"], d["majority_compared"]) == ("reject", "0.0", "4")
    assert (
        client.get(reverse("annotation:quality_export", args=[quality_study.pk, "xml"])).status_code
        == 404
    )


def test_annotators_and_anonymous_are_kept_out(quality_study, client, make_user):
    url = reverse("annotation:quality", args=[quality_study.pk])
    assert client.get(url).status_code == 302
    client.force_login(make_user("q-annotator", role="annotator"))
    assert client.get(url).status_code == 403
