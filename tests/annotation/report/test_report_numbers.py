"""The study report's numbers against an independent computation on a study labelled through
the real flow; the page, the partial, the API and the query budget."""

from __future__ import annotations

import itertools
import re

import krippendorff
import numpy as np
import pytest
from django.core.cache import cache
from django.urls import reverse

from annotation.models import AttentionCheckResult
from annotation.selectors import report as rs
from tests.annotation.factories import ANNOTATORS, LABELS, NO, TOPIC_ITEMS, label_study, make_study

pytestmark = pytest.mark.django_db

POSITIONS = sorted(LABELS)


def binary(position, annotator):
    return 0 if LABELS[position][annotator] == NO else 1


def location(position, annotator):
    step = LABELS[position][annotator]
    return 0 if step == NO else step  # 0 = no failure, n = failure at L2 step n


def alpha_of(values):
    return krippendorff.alpha(
        reliability_data=np.array(values, dtype=float).T, level_of_measurement="nominal"
    )


def hand_percent_agreement(positions):
    agree = total = 0
    for p in positions:
        for a, b in itertools.combinations(ANNOTATORS, 2):
            total += 1
            agree += binary(p, a) == binary(p, b)
    return agree / total


def hand_fleiss(positions):
    n = len(ANNOTATORS)
    counts = np.array(
        [
            [sum(1 - binary(p, a) for a in ANNOTATORS), sum(binary(p, a) for a in ANNOTATORS)]
            for p in positions
        ]
    )
    p_i = ((counts * (counts - 1)).sum(axis=1)) / (n * (n - 1))
    p_bar = p_i.mean()
    p_j = counts.sum(axis=0) / counts.sum()
    p_e = (p_j**2).sum()
    return (p_bar - p_e) / (1 - p_e)


def test_report_numbers_match_an_independent_computation(labelled_study):
    report = rs.study_report(study=labelled_study, use_cache=False)
    assert report["n_items"] == 6 and report["n_annotators"] == 3 and report["n_rows"] == 18

    expected_alpha = alpha_of([[binary(p, a) for a in ANNOTATORS] for p in POSITIONS])
    assert report["alpha"]["value"] == pytest.approx(expected_alpha)
    ci = report["alpha"]["ci"]
    assert ci["low"] <= expected_alpha <= ci["high"] and ci["confidence"] == 0.95

    expected_location = alpha_of([[location(p, a) for a in ANNOTATORS] for p in POSITIONS])
    assert report["first_failure"]["alpha"]["value"] == pytest.approx(expected_location)
    assert expected_location < expected_alpha  # the stricter variable agrees less here

    assert report["percent_agreement"]["value"] == pytest.approx(hand_percent_agreement(POSITIONS))
    assert report["fleiss_kappa"]["value"] == pytest.approx(hand_fleiss(POSITIONS))

    # leave-one-out: each annotator vs the majority of the other two (ties not counted)
    for row in report["leave_one_out"]["annotators"]:
        me = row["annotator_id"]
        others = [a for a in ANNOTATORS if a != me]
        compared = [p for p in POSITIONS if binary(p, others[0]) == binary(p, others[1])]
        agree = sum(binary(p, me) == binary(p, others[0]) for p in compared)
        assert row["n_compared"] == len(compared)
        assert row["agreement"]["value"] == pytest.approx(agree / len(compared))

    # per topic: α over the topic's items only
    by_topic = {g["group"]: g for g in report["groups"]["topic"]}
    assert set(by_topic) == {"Report topic", rs.NO_TOPIC}
    topic_alpha = alpha_of([[binary(p, a) for a in ANNOTATORS] for p in TOPIC_ITEMS])
    assert by_topic["Report topic"]["alpha"]["value"] == pytest.approx(topic_alpha)
    assert by_topic["Report topic"]["n_items"] == 3
    assert [g["n_items"] for g in report["groups"]["generator"]] == [6]

    # label distribution
    n_fail = sum(binary(p, a) for p in POSITIONS for a in ANNOTATORS)
    assert report["label_distribution"]["overall"] == {"no failure": 18 - n_fail, "failure": n_fail}


def test_annotator_table(labelled_study):
    p = labelled_study.participants_by_name["A"]
    AttentionCheckResult.objects.create(participant=p, kind="planted", passed=True)
    AttentionCheckResult.objects.create(participant=p, kind="planted", passed=False)
    AttentionCheckResult.objects.create(participant=p, kind="interface", passed=False)
    report = rs.study_report(study=labelled_study, use_cache=False)
    rows = {r["annotator_id"]: r for r in report["annotators"]}
    assert set(rows) == set(ANNOTATORS)
    assert rows["A"]["items_done"] == 6
    # active_ms = 1000 * (10 + position): median of 10..15 s is 12.5 s
    assert rows["A"]["median_active_seconds"]["value"] == pytest.approx(12.5)
    assert rows["A"]["attention"] == {"value": 0.5, "passed": 1, "total": 2}
    assert rows["B"]["attention"]["value"] is None
    loo = {r["annotator_id"]: r["agreement"] for r in report["leave_one_out"]["annotators"]}
    assert rows["C"]["agreement_with_others"] == loo["C"]


def test_report_page_shows_numbers_explanations_and_plots(labelled_study, researcher_client):
    r = researcher_client.get(reverse("annotation:report", args=[labelled_study.pk]))
    assert r.status_code == 200
    html = r.content.decode()
    report = rs.study_report(study=labelled_study)
    assert f"{report['alpha']['value']:.3f}" in html
    assert f"{report['first_failure']['alpha']['value']:.3f}" in html
    assert "0.593" in html and "0.307" in html and "84.7–88.5%" in html
    assert "regular items" in html and "attention-check items are left out" in html
    assert html.count("<svg") >= 4
    assert 'hx-trigger="every 10s"' in html
    assert not re.search(r"\bnan\b", html, re.IGNORECASE)


def test_progress_page_links_to_the_report(labelled_study, researcher_client):
    r = researcher_client.get(reverse("annotation:study_progress", args=[labelled_study.pk]))
    assert reverse("annotation:report", args=[labelled_study.pk]) in r.content.decode()


def test_undefined_statistics_are_text_not_nan(researcher_client, db):
    study = make_study(n_items=2, overlap=1, items_per_participant=2, attention_rate=0.0)
    label_study(study, {0: {"A": NO}, 1: {"A": NO}}, ["A"])
    r = researcher_client.get(reverse("annotation:report", args=[study.pk]))
    html = r.content.decode()
    assert r.status_code == 200
    # a dash, and what is missing in small type; never NaN or "undefined"
    assert '— <small class="missing">only one annotator</small>' in html
    assert not re.search(r"\bnan\b", html, re.IGNORECASE)
    assert not re.search(r"\bundefined\b", html)


def test_empty_study_report_renders(researcher_client, db):
    study = make_study(n_items=2)
    r = researcher_client.get(reverse("annotation:report", args=[study.pk]))
    assert r.status_code == 200
    assert "No regular item has been labelled yet" in r.content.decode()


def test_partial_is_204_until_a_new_label_arrives(labelled_study, researcher_client):
    url = reverse("annotation:report_partial", args=[labelled_study.pk])
    signature = rs.report_signature(study=labelled_study)
    assert researcher_client.get(url, {"since": signature}).status_code == 204
    r = researcher_client.get(url, {"since": "0-0-0"})
    assert r.status_code == 200 and 'id="report-body"' in r.content.decode()
    assert "<html" not in r.content.decode()


def test_report_queries_are_bounded(
    labelled_study, researcher_client, django_assert_max_num_queries
):
    url = reverse("annotation:report", args=[labelled_study.pk])
    with django_assert_max_num_queries(12):
        assert researcher_client.get(url).status_code == 200
    # a second study twice the size costs the same number of queries
    big = make_study(n_items=12, overlap=3, items_per_participant=12, attention_rate=0.0)
    plan = {p: LABELS[p % 6] for p in range(12)}
    label_study(big, plan, ANNOTATORS)
    with django_assert_max_num_queries(12):
        assert researcher_client.get(reverse("annotation:report", args=[big.pk])).status_code == 200


def test_report_api(labelled_study, researcher_client):
    r = researcher_client.get(reverse("annotation_api:report", args=[labelled_study.pk]))
    assert r.status_code == 200
    body = r.json()
    expected = alpha_of([[binary(p, a) for a in ANNOTATORS] for p in POSITIONS])
    assert body["alpha"]["value"] == pytest.approx(expected)
    assert len(body["annotators"]) == 3


def test_first_failure_location_in_sql_matches_the_python_definition(db):
    from datetime import timedelta

    from django.utils import timezone

    from annotation.labels import first_failure_step
    from annotation.models import Annotation, Assignment
    from annotation.services.assignment import participant_current_assignment
    from annotation.services.submission import annotation_submit
    from tests.annotation.factories import full_label, working_participant

    study = make_study(n_items=3, overlap=1, items_per_participant=3, attention_rate=0.0)
    plans = [
        [
            {"description": "a", "l1_steps": [1], "l2_steps": [3, 2]},
            {"description": "b", "l1_steps": [], "l2_steps": [4]},
        ],
        [{"description": "L1 only", "l1_steps": [2], "l2_steps": []}],
        None,
    ]
    p = working_participant(study, "SQL")
    for failures in plans:
        a = participant_current_assignment(participant=p)
        Assignment.objects.filter(pk=a.pk).update(served_at=timezone.now() - timedelta(seconds=60))
        a.refresh_from_db()
        annotation_submit(
            assignment=a, label=full_label(has_failure=failures is not None, failures=failures)
        )
        p.refresh_from_db()
    got = {x.item_id: x.first_step for x in rs.study_labels(study=study)}
    want = {
        a.item_id: first_failure_step(a.failures)
        for a in Annotation.objects.filter(item__study=study)
    }
    assert got == want and sorted(got.values(), key=str) == [2, None, None]


def test_cached_report_refreshes_when_an_attention_check_is_recorded(labelled_study):
    first = rs.study_report(study=labelled_study)
    again = rs.study_report(study=labelled_study)
    assert again["signature"] == first["signature"]
    p = labelled_study.participants_by_name["B"]
    AttentionCheckResult.objects.create(participant=p, kind="planted", passed=False)
    fresh = rs.study_report(study=labelled_study)
    assert fresh["signature"] != first["signature"]
    rows = {r["annotator_id"]: r for r in fresh["annotators"]}
    assert rows["B"]["attention"] == {"value": 0.0, "passed": 0, "total": 1}


def test_a_report_is_built_once_until_its_study_changes(labelled_study):
    cache.clear()
    built = []

    def build(signature):
        built.append(signature)
        return {"signature": signature}

    args = {"study": labelled_study, "name": "built-once", "n_resamples": 0, "build": build}
    first = rs.cached_study_report(**args, use_cache=True)
    assert rs.cached_study_report(**args, use_cache=True) == first and len(built) == 1
    p = labelled_study.participants_by_name["B"]
    AttentionCheckResult.objects.create(participant=p, kind="planted", passed=True)
    assert rs.cached_study_report(**args, use_cache=True) != first and len(built) == 2
    rs.cached_study_report(**args, use_cache=False)
    assert len(built) == 3
