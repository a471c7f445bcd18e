"""Adjudication: the queue, the item page, recording (with history), bad input, the API, and the
gold set's round trip into a new study through ``create_study --known-items``."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.known_items import parse_known_items
from annotation.models import Adjudication, Study, StudyItem
from annotation.selectors import adjudication
from annotation.services import adjudication as adj

pytestmark = pytest.mark.django_db


def ids(study, *positions):
    return [study.items_by_position[p].pk for p in positions]


def test_queue_lists_label_disagreements_unadjudicated_first(labelled_study, researcher_user):
    queue = adjudication.adjudication_queue(study=labelled_study)
    assert [q["item_id"] for q in queue] == ids(labelled_study, 2, 3, 5)
    assert all(q["reason"] == "label" and q["n_labels"] == 3 for q in queue)
    with_location = adjudication.adjudication_queue(study=labelled_study, include_location=True)
    assert [q["item_id"] for q in with_location] == ids(labelled_study, 2, 3, 5, 4)
    assert with_location[-1]["reason"] == "location"
    adj.adjudication_record(
        item=labelled_study.items_by_position[2], has_failure=False, adjudicator=researcher_user
    )
    queue = adjudication.adjudication_queue(study=labelled_study)
    assert [q["item_id"] for q in queue] == ids(labelled_study, 3, 5, 2)
    assert queue[-1]["adjudicated"] and queue[-1]["adjudicated_label"] == "no failure"


def test_queue_page(labelled_study, researcher_client):
    r = researcher_client.get(reverse("annotation:queue", args=[labelled_study.pk]))
    html = r.content.decode()
    assert r.status_code == 200
    for item_id in ids(labelled_study, 2, 3, 5):
        assert reverse("annotation:adjudicate", args=[labelled_study.pk, item_id]) in html
    assert (
        reverse("annotation:adjudicate", args=[labelled_study.pk, ids(labelled_study, 4)[0]])
        not in html
    )
    r = researcher_client.get(
        reverse("annotation:queue", args=[labelled_study.pk]), {"location": "1"}
    )
    assert (
        reverse("annotation:adjudicate", args=[labelled_study.pk, ids(labelled_study, 4)[0]])
        in r.content.decode()
    )


def test_item_page_shows_everything_side_by_side(labelled_study, researcher_client):
    item = labelled_study.items_by_position[2]
    r = researcher_client.get(reverse("annotation:adjudicate", args=[labelled_study.pk, item.pk]))
    html = r.content.decode()
    assert r.status_code == 200
    proc = item.generation.procedure
    assert proc.goal in html
    assert proc.steps[0] in html and item.generation.predicted_steps[-1] in html
    assert "A: step 1 is wrong" in html and "B: step 3 is wrong" in html
    assert "C says fine" in html and "A found a failure" in html
    assert "L2 3" in html  # B's failure links L2 step 3


def test_record_edit_keeps_history_and_moves_to_next_item(labelled_study, researcher_client):
    item = labelled_study.items_by_position[2]
    url = reverse("annotation:adjudicate", args=[labelled_study.pk, item.pk])
    r = researcher_client.post(
        url,
        {
            "has_failure": "1",
            "f-0-desc": "Step 3 burns the coffee",
            "f-0-l1": "",
            "f-0-l2": "3, 2",
            "f-1-desc": "",
            "note": "B is right",
        },
    )
    assert r.status_code == 302
    assert r["Location"] == reverse(
        "annotation:adjudicate", args=[labelled_study.pk, ids(labelled_study, 3)[0]]
    )
    a = Adjudication.objects.get(item=item)
    assert a.has_failure and a.note == "B is right"
    assert a.failures == [
        {"description": "Step 3 burns the coffee", "l1_steps": [], "l2_steps": [2, 3]}
    ]
    assert a.adjudicator.username == "report-researcher" and a.history == []
    r = researcher_client.post(url, {"has_failure": "0", "note": "on reflection, fine"})
    assert r.status_code == 302
    a.refresh_from_db()
    assert not a.has_failure and a.failures == [] and a.note == "on reflection, fine"
    assert len(a.history) == 1 and a.history[0]["has_failure"] is True
    assert a.history[0]["failures"][0]["l2_steps"] == [2, 3]
    assert Adjudication.objects.filter(item=item).count() == 1
    page = researcher_client.get(url).content.decode()
    assert "1 earlier version kept" in page and "on reflection, fine" in page


@pytest.mark.parametrize(
    "data, message",
    [
        ({"note": "x"}, "has_failure: Choose “critical failure” or “no critical failure”."),
        (
            {"has_failure": "1", "f-0-desc": "bad", "f-0-l2": "9"},
            "Failure 1 L2 steps: step 9 does not exist (this item has 4)",
        ),
        (
            {"has_failure": "1", "f-0-desc": "bad", "f-0-l1": "two"},
            "Failure 1 L1 steps: &#x27;two&#x27; is not a step number",
        ),
        (
            {"has_failure": "1", "f-0-desc": "", "f-0-l2": "1"},
            "Failure 1: write a short description.",
        ),
        (
            {"has_failure": "1", "f-0-desc": "no steps"},
            "Failure 1: link at least one L1 or L2 step.",
        ),
    ],
)
def test_bad_input_names_the_field_and_saves_nothing(
    labelled_study, researcher_client, data, message
):
    item = labelled_study.items_by_position[3]
    r = researcher_client.post(
        reverse("annotation:adjudicate", args=[labelled_study.pk, item.pk]), data
    )
    assert r.status_code == 400
    assert message in r.content.decode()
    assert not Adjudication.objects.filter(item=item).exists()


def test_service_refuses_known_answer_items(labelled_study):
    from django.core.exceptions import ValidationError

    from tests.annotation.factories import make_study

    study = make_study(n_items=1, n_attention=1)
    attention = study.items.get(kind=StudyItem.Kind.ATTENTION)
    with pytest.raises(ValidationError, match="only regular study items"):
        adj.adjudication_record(item=attention, has_failure=True, failures=[])


def test_item_of_another_study_is_404(labelled_study, researcher_client):
    from tests.annotation.factories import make_study

    other = make_study(n_items=1)
    r = researcher_client.get(
        reverse("annotation:adjudicate", args=[other.pk, labelled_study.items_by_position[2].pk])
    )
    assert r.status_code == 404


def test_api_put_and_get(labelled_study, researcher_client):
    item = labelled_study.items_by_position[5]
    url = reverse("annotation_api:item_adjudication", args=[item.pk])
    assert researcher_client.get(url).status_code == 404
    r = researcher_client.put(
        url,
        {
            "has_failure": True,
            "failures": [{"description": "wrong order", "l1_steps": [1], "l2_steps": [4]}],
            "note": "api",
        },
        content_type="application/json",
    )
    assert r.status_code == 200, r.content
    assert r.json()["failures"][0]["l2_steps"] == [4]
    assert researcher_client.get(url).json()["note"] == "api"
    r = researcher_client.put(
        url,
        {"has_failure": False, "failures": [{"description": "x", "l2_steps": [1]}]},
        content_type="application/json",
    )
    assert r.status_code == 400 and "Give no failures" in json.dumps(r.json())
    queue = researcher_client.get(
        reverse("annotation_api:adjudication_queue", args=[labelled_study.pk])
    ).json()
    assert queue["count"] == 3 and queue["results"][-1]["item_id"] == item.pk


def test_gold_set_round_trip_into_a_new_study(
    labelled_study, researcher_client, researcher_user, tmp_path
):
    item2, item3 = labelled_study.items_by_position[2], labelled_study.items_by_position[3]
    adj.adjudication_record(
        item=item2,
        has_failure=True,
        failures=[{"description": "step 3 is unsafe", "l1_steps": [], "l2_steps": [3]}],
        note="",
        adjudicator=researcher_user,
    )
    adj.adjudication_record(
        item=item3, has_failure=False, note="C misread step 2", adjudicator=researcher_user
    )
    generation = item2.generation
    dataset, generator = generation.procedure.dataset, generation.generator

    for kind, key in (("qualification", "generation_id"), ("attention", "source_example_id")):
        r = researcher_client.get(
            reverse("annotation:gold_export", args=[labelled_study.pk, "jsonl"]),
            {"kind": kind, "key": key},
        )
        assert r.status_code == 200
        text = b"".join(r.streaming_content).decode()
        parsed = parse_known_items(text.splitlines())
        assert [p["expected_has_failure"] for p in parsed] == [True, False]
        assert (
            parsed[0]["explanation"] == "step 3 is unsafe"
            and parsed[1]["explanation"] == "C misread step 2"
        )
        path = tmp_path / f"gold-{kind}.jsonl"
        path.write_text(text, encoding="utf-8")
        call_command(
            "create_study",
            name=f"Next study {kind}",
            dataset=f"{dataset.name}@{dataset.version}",
            generator=generator.name,
            known_items=str(path),
            limit=2,
        )
        new = Study.objects.get(name=f"Next study {kind}")
        known = {i.generation_id: i for i in new.items.filter(kind=kind)}
        assert set(known) == {item2.generation_id, item3.generation_id}
        assert known[item2.generation_id].expected_has_failure is True
        assert known[item3.generation_id].expected_has_failure is False
        assert known[item3.generation_id].explanation == "C misread step 2"

    r = researcher_client.get(
        reverse("annotation:gold_export", args=[labelled_study.pk, "jsonl"]),
        {"kind": "bogus"},
    )
    assert r.status_code == 400 and b"kind must be one of" in r.content
    api = researcher_client.get(
        reverse("annotation_api:gold", args=[labelled_study.pk]),
        {"key": "source_example_id"},
    ).json()
    assert api["count"] == 2 and "generation_id" not in api["results"][0]
