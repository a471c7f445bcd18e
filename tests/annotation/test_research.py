"""Researcher pages, exports and the study API."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Study
from annotation.services.assignment import participant_current_assignment
from annotation.services.submission import annotation_submit
from tests.annotation.factories import (
    full_label,
    make_generations,
    make_study,
    study_page_fields,
    working_participant,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    return client


def labelled_study():
    study = make_study(n_items=2, overlap=1, n_attention=1, attention_rate=1.0)
    p = working_participant(study, "PID_EXPORT")
    while (a := participant_current_assignment(participant=p)) is not None:
        Assignment.objects.filter(pk=a.pk).update(served_at=timezone.now() - timedelta(seconds=5))
        a.refresh_from_db()
        annotation_submit(
            assignment=a, label=full_label(has_failure=True, comments='a, "quoted"\nline')
        )
    return study


def test_create_study_from_the_researcher_page(researcher):
    gens = make_generations(5)
    r = researcher.post(reverse("annotation:study_create"), study_page_fields(gens, 4))
    study = Study.objects.get(name="Pilot")
    assert r.status_code == 302 and r.url == study.get_absolute_url()
    assert study.items.count() == 4 and study.completion_code == "C0DE"
    page = researcher.get(r.url).content.decode()
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in page and "0/12" in page


def _form(gens, limit: int, **extra) -> dict:
    return study_page_fields(gens, limit, name="With known", overlap=1, **extra)


def _jsonl(*rows) -> SimpleUploadedFile:
    body = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)
    return SimpleUploadedFile("known.jsonl", body.encode(), content_type="application/jsonl")


def test_create_form_takes_known_items_from_a_jsonl_file(researcher):
    gens = make_generations(6)
    known = _jsonl(
        {"generation_id": gens[0].pk, "kind": "attention", "expected_has_failure": True},
        {
            "source_example_id": gens[1].procedure.source_example_id,
            "kind": "training",
            "expected_has_failure": False,
            "explanation": "Nothing critical is missing.",
        },
    )
    r = researcher.post(
        reverse("annotation:study_create"), _form(gens, 3, known_items=known), follow=True
    )
    study = Study.objects.get(name="With known")
    items = {i.generation_id: i for i in study.items.all()}
    # the known generations are left out of the regular items: the next three are regular
    assert {g: items[g].kind for g in items} == {
        gens[0].pk: "attention",
        gens[1].pk: "training",
        gens[2].pk: "regular",
        gens[3].pk: "regular",
        gens[4].pk: "regular",
    }
    assert items[gens[0].pk].expected_has_failure is True
    assert items[gens[1].pk].explanation == "Nothing critical is missing."
    assert "created with 3 items and 2 known items." in r.content.decode()


RATING = {"form_type": "rating", "form_config": '{"preset": "scirecipe"}'}


def test_a_rating_study_takes_known_items_with_expected_label(researcher):
    gens = make_generations(4)
    known = _jsonl(
        {"generation_id": gens[3].pk, "kind": "gold", "expected_label": {"ratings": {"overall": 2}}}
    )
    r = researcher.post(
        reverse("annotation:study_create"),
        _form(gens, 3, known_items=known, **RATING),
        follow=True,
    )
    assert "created with 3 items and 1 known item." in r.content.decode()
    item = Study.objects.get(name="With known").items.get(generation=gens[3])
    assert item.kind == "gold" and item.expected_label == {"ratings": {"overall": 2}}


@pytest.mark.parametrize(
    ("body", "extra", "message"),
    [
        (
            b'{"generation_id": 1, "kind": "attention", "expected_has_failure": true}\n{"x": 1}\n',
            {},
            "known.jsonl line 2: give exactly one of generation_id or source_example_id",
        ),
        (
            b'{"source_example_id": "nope", "kind": "gold", "expected_has_failure": true}\n',
            {},
            "known.jsonl line 1: source_example_id 'nope' has no generation by",
        ),
        (b"\xff\xfe not text", {}, "known.jsonl: not UTF-8 text."),
        (b"{]\n", {}, "known.jsonl line 1: not valid JSON"),
        (
            b'{"generation_id": GEN, "kind": "attention", "expected_has_failure": true}',
            RATING,
            "known item 1: a rating study's known items give their answer as expected_label",
        ),
        (
            b'{"generation_id": GEN, "kind": "gold", "expected_label": {"ratings": {"x": 9}}}',
            RATING,
            "known item 1: ",
        ),
        (
            b'{"generation_id": GEN, "kind": "gold", "expected_label": [1]}',
            RATING,
            "known.jsonl line 1: field expected_label must be an object",
        ),
    ],
)
def test_a_bad_known_items_file_is_a_field_error_and_nothing_is_created(
    researcher, body, extra, message
):
    gens = make_generations(3)
    upload = SimpleUploadedFile("known.jsonl", body.replace(b"GEN", str(gens[2].pk).encode()))
    r = researcher.post(
        reverse("annotation:study_create"), _form(gens, 2, known_items=upload, **extra)
    )
    assert r.status_code == 200
    errors = r.context["form"].errors
    assert list(errors) == ["known_items"], errors
    assert message in errors["known_items"][0]
    assert not Study.objects.exists()


def test_create_form_names_the_bad_field(researcher):
    r = researcher.post(reverse("annotation:study_create"), {"name": "X", "overlap": 0})
    assert r.status_code == 200
    form = r.context["form"]
    assert "overlap" in form.errors and "dataset" in form.errors


def test_progress_page_and_status_buttons(researcher):
    study = labelled_study()
    page = researcher.get(reverse("annotation:study_progress", args=[study.pk])).content.decode()
    assert "PID_EXPORT" in page and "2/2" in page  # 2 of 2 annotations (k=1)
    researcher.post(reverse("annotation:study_status", args=[study.pk]), {"status": "paused"})
    study.refresh_from_db()
    assert study.status == "paused"


def test_jsonl_and_csv_exports(researcher):
    study = labelled_study()
    r = researcher.get(reverse("annotation:study_export", args=[study.pk, "jsonl"]))
    rows = [json.loads(line) for line in b"".join(r.streaming_content).decode().splitlines()]
    assert len(rows) == 3 and {r["item_kind"] for r in rows} == {"regular", "attention"}
    reg = next(x for x in rows if x["item_kind"] == "regular")
    assert (
        reg["prolific_pid"] == "PID_EXPORT"
        and reg["failures"][0]["l2_steps"] == [2]
        and reg["wall_ms"] >= 5000
    )
    assert next(x for x in rows if x["item_kind"] == "attention")["attention_passed"] is True
    r = researcher.get(reverse("annotation:study_export", args=[study.pk, "csv"]))
    table = list(csv.DictReader(io.StringIO(b"".join(r.streaming_content).decode())))
    assert len(table) == 3 and table[0]["comments"] == 'a, "quoted"\nline'
    assert json.loads(table[0]["failures"])[0]["description"] == "Step 2 contradicts the goal."
    assert (
        researcher.get(reverse("annotation:study_export", args=[study.pk, "xml"])).status_code
        == 404
    )


def test_api_create_progress_status_and_export(researcher):
    gens = make_generations(4)
    r = researcher.post(
        "/api/studies/",
        {
            "name": "API study",
            "generation_ids": [g.pk for g in gens[:3]],
            "overlap": 2,
            "known_items": [
                {"generation_id": gens[3].pk, "kind": "attention", "expected_has_failure": True}
            ],
        },
        content_type="application/json",
    )
    assert r.status_code == 201, r.content
    body = r.json()
    assert (
        body["n_items"] == 4 and body["overlap"] == 2 and body["entry_path"].startswith("/study/s/")
    )
    pk = body["id"]
    assert researcher.get(f"/api/studies/{pk}/progress/").json()["n_items"] == 3
    assert (
        researcher.post(
            f"/api/studies/{pk}/status/", {"status": "closed"}, content_type="application/json"
        ).json()["status"]
        == "closed"
    )
    assert researcher.get(f"/api/studies/{pk}/annotations/").json()["count"] == 0
    bad = researcher.post(
        "/api/studies/",
        {"name": "Bad", "generation_ids": [999999]},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "999999" in json.dumps(bad.json())


def test_api_export_rows(researcher):
    study = labelled_study()
    data = researcher.get(f"/api/studies/{study.pk}/annotations/").json()
    assert data["count"] == 3 and data["results"][0]["participant_id"]


def test_admin_pages_render(client, django_user_model):
    study = labelled_study()
    admin = django_user_model.objects.create_superuser("root", "r@example.org", "pw-Test-12345")
    client.force_login(admin)
    for name, args in (
        ("admin:annotation_study_changelist", []),
        ("admin:annotation_study_change", [study.pk]),
        ("admin:annotation_annotation_changelist", []),
        ("admin:annotation_participant_changelist", []),
    ):
        r = client.get(reverse(name, args=args))
        assert r.status_code == 200, name
    assert study.name in client.get(reverse("admin:annotation_study_changelist")).content.decode()
