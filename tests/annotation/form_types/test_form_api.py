"""Form types through the researcher's doors: the API and the new-study page refuse bad
settings naming the field (400, nothing created) and keep good ones with their defaults; the
report API carries the form type's agreement level."""

import json

import pytest
from django.urls import reverse

from annotation.models import Study
from tests.annotation.factories import (
    make_form_study,
    make_generations,
    make_pair_generations,
    study_page_fields,
    submit_form_answer,
    working_participant,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher(client, make_user):
    client.force_login(make_user("res-f", role="researcher"))
    return client


def test_api_study_with_a_form_type(researcher):
    gens = make_generations(2)
    base = {"name": "Ratings", "generation_ids": [g.pk for g in gens], "form_type": "rating"}
    bad = researcher.post(
        "/api/studies/", {**base, "form_config": {"points": 40}}, content_type="application/json"
    )
    assert bad.status_code == 400 and "form_config.points" in json.dumps(bad.json())
    assert not Study.objects.filter(name="Ratings").exists()
    odd = researcher.post(
        "/api/studies/", {**base, "form_config": ["overall"]}, content_type="application/json"
    )
    assert odd.status_code == 400 and "JSON object" in json.dumps(odd.json())
    good = researcher.post(
        "/api/studies/",
        {**base, "form_config": {"preset": "scirecipe"}},
        content_type="application/json",
    )
    assert good.status_code == 201, good.content
    study = Study.objects.get(pk=good.json()["id"])
    assert study.form_type == "rating" and len(study.form_config["dimensions"]) == 4
    assert study.form_config["points"] == 5


def test_new_study_page_takes_the_form_type(researcher):
    gens = make_generations(3)
    fields = study_page_fields(gens, 3, name="Page pairwise", form_type="customplans")
    r = researcher.post(reverse("annotation:study_create"), {**fields, "form_config": '{"x": 1}'})
    assert r.status_code == 200 and "unknown setting(s): x" in r.content.decode()
    assert not Study.objects.filter(name="Page pairwise").exists()
    r = researcher.post(reverse("annotation:study_create"), {**fields, "form_type": "pairwise"})
    assert (
        r.status_code == 200 and "A pairwise study needs a second generator" in r.content.decode()
    )
    r = researcher.post(reverse("annotation:study_create"), {**fields, "form_config": ""})
    study = Study.objects.get(name="Page pairwise")
    assert r.status_code == 302 and study.form_type == "customplans"
    assert study.form_config == {"show_original": False}


def test_api_pairwise_study_from_pairs(researcher):
    firsts, seconds = make_pair_generations(3)
    base = {"name": "Pairs", "form_type": "pairwise"}
    pairs = [[a.pk, b.pk] for a, b in zip(firsts, seconds, strict=True)]

    def post(body):
        return researcher.post("/api/studies/", {**base, **body}, content_type="application/json")

    nothing = post({})
    assert nothing.status_code == 400 and "generation_ids" in nothing.json()
    singles = post({"generation_ids": [firsts[0].pk]})
    assert singles.status_code == 400 and "give pairs" in json.dumps(singles.json())
    crossed = post({"pairs": [pairs[0], [firsts[1].pk, seconds[2].pk]]})
    assert crossed.status_code == 400
    assert "item 2: generation_b_id must be a generation of the same procedure" in json.dumps(
        crossed.json()
    )
    short = post({"pairs": [[firsts[0].pk]]})
    assert short.status_code == 400 and "pairs" in short.json()
    assert not Study.objects.filter(name="Pairs").exists()  # nothing half-written
    rated = researcher.post(
        "/api/studies/",
        {"name": "Pairs", "form_type": "rating", "pairs": pairs},
        content_type="application/json",
    )
    assert rated.status_code == 400 and "pairwise studies only" in json.dumps(rated.json())
    good = post({"pairs": pairs})
    assert good.status_code == 201, good.content
    study = Study.objects.get(pk=good.json()["id"])
    got = sorted(study.items.values_list("generation_id", "generation_b_id", "kind"))
    assert got == sorted((a, b, "regular") for a, b in pairs) and good.json()["n_items"] == 3


def test_new_study_page_pairs_two_generators(researcher):
    firsts, seconds = make_pair_generations(3)
    extra = make_generations(1)[0]  # a procedure of another dataset: never paired
    seconds[2].delete()  # procedure 3 has no second generation: left out
    fields = study_page_fields(
        firsts,
        10,
        name="Page pairs",
        min_seconds_per_item=0,
        attention_rate=0,
        form_type="pairwise",
    )
    url = reverse("annotation:study_create")
    same = researcher.post(url, {**fields, "generator_b": firsts[0].generator_id})
    assert same.status_code == 200 and "other than the first" in same.content.decode()
    none = researcher.post(url, {**fields, "generator_b": extra.generator_id})
    assert none.status_code == 200 and "no procedure of this dataset in common" in (
        none.content.decode()
    )
    rating = researcher.post(
        url, {**fields, "form_type": "rating", "generator_b": seconds[0].generator_id}
    )
    assert rating.status_code == 200 and "for pairwise studies only" in rating.content.decode()
    assert not Study.objects.filter(name="Page pairs").exists()
    r = researcher.post(url, {**fields, "generator_b": seconds[0].generator_id})
    study = Study.objects.get(name="Page pairs")
    assert r.status_code == 302 and study.form_type == "pairwise"
    got = sorted(study.items.values_list("generation_id", "generation_b_id"))
    assert got == [(firsts[0].pk, seconds[0].pk), (firsts[1].pk, seconds[1].pk)]


def test_report_api_has_the_form_report(researcher):
    gens = make_generations(1)
    study = make_form_study("pairwise", specs=[], items_per_participant=1)
    assert researcher.get(f"/api/studies/{study.pk}/report/").json()["form_type"] == "pairwise"
    study = make_form_study(
        "rating", specs=[{"generation_id": gens[0].pk}], items_per_participant=1
    )
    for pid, value in (("A", "3"), ("B", "4")):
        submit_form_answer(working_participant(study, pid), {"r-overall": [value]})
    body = researcher.get(f"/api/studies/{study.pk}/report/").json()
    assert body["form_type"] == "rating" and body["form_report"]["n_annotations"] == 2
    names = [r["name"] for r in body["form_report"]["sections"][0]["rows"]]
    assert "Weighted κ (quadratic, mean over pairs)" in names


def test_add_form_items_command_names_the_line(tmp_path, capsys):
    from io import StringIO

    from django.core.management import CommandError, call_command

    from benchmarks.models import Generation, Generator

    gens = make_generations(2)
    other = Generator.objects.create(name="sys-b", model="m")
    b = [
        Generation.objects.create(procedure=g.procedure, generator=other, predicted_steps=["x"])
        for g in gens
    ]
    study = make_form_study("pairwise", specs=[], items_per_participant=1)
    bad = tmp_path / "pairs.jsonl"
    bad.write_text(
        json.dumps({"generation_id": gens[0].pk, "generation_b_id": b[0].pk})
        + "\n\n"
        + json.dumps({"generation_id": gens[1].pk, "generation_b_id": b[0].pk})
        + "\n"
    )
    with pytest.raises(CommandError, match=r"pairs\.jsonl line 3: generation_b_id must be"):
        call_command("add_form_items", "--study", str(study.pk), str(bad))
    assert not study.items.exists()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    with pytest.raises(CommandError, match=r"broken\.jsonl line 1: not JSON"):
        call_command("add_form_items", "--study", str(study.pk), str(broken))
    good = tmp_path / "good.jsonl"
    good.write_text(
        "\n".join(
            json.dumps({"generation_id": g.pk, "generation_b_id": x.pk})
            for g, x in zip(gens, b, strict=True)
        )
    )
    out = StringIO()
    call_command("add_form_items", "--study", str(study.pk), str(good), stdout=out)
    assert "added 2 pairwise items" in out.getvalue()
    assert sorted(study.items.values_list("generation_b_id", flat=True)) == sorted(x.pk for x in b)


def test_api_known_items_of_other_form_types_give_expected_label(researcher):
    gens = make_generations(4)
    base = {"name": "Rated known", "generation_ids": [gens[0].pk, gens[1].pk]}

    def post(form_type, known):
        body = {**base, "form_type": form_type, "known_items": known}
        return researcher.post("/api/studies/", body, content_type="application/json")

    missing = post("rating", [{"generation_id": gens[2].pk, "kind": "attention"}])
    assert missing.status_code == 400
    assert "known item 1: a rating study's known items give their answer as expected_label" in (
        json.dumps(missing.json())
    )
    wrong = post(
        "rating",
        [
            {"generation_id": gens[2].pk, "kind": "gold", "expected_label": {"ratings": {}}},
        ],
    )
    assert wrong.status_code == 400 and "known item 1: expected_label: give ratings" in json.dumps(
        wrong.json()
    )
    assert not Study.objects.filter(name="Rated known").exists()  # nothing half-written
    good = post(
        "rating",
        [
            {
                "generation_id": gens[2].pk,
                "kind": "gold",
                "expected_label": {"ratings": {"overall": 4}},
            },
            {
                "generation_id": gens[3].pk,
                "kind": "qualification",
                "attempt": 2,
                "expected_label": {"ratings": {"overall": 0}},
                "explanation": "Unusable steps.",
            },
        ],
    )
    assert good.status_code == 201, good.content
    study = Study.objects.get(pk=good.json()["id"])
    known = sorted(
        study.items.exclude(kind="regular").values_list(
            "generation_id", "kind", "attempt", "expected_label", "explanation"
        )
    )
    assert known == [
        (gens[2].pk, "gold", 1, {"ratings": {"overall": 4}}, ""),
        (gens[3].pk, "qualification", 2, {"ratings": {"overall": 0}}, "Unusable steps."),
    ]
    # a critical-failure study still takes expected_has_failure, and says so when it is missing
    cf = post("critical_failure", [{"generation_id": gens[2].pk, "kind": "attention"}])
    assert cf.status_code == 400 and "expected_has_failure must be true or false" in (
        json.dumps(cf.json())
    )
