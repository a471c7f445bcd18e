"""The Django admin for benchmark data: columns, filters, search, read-only for researchers, query counts."""

from __future__ import annotations

import pytest
from django.urls import reverse

from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic
from tests.benchmarks.factories import make_benchmark


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    # PBKDF2 costs ~0.3 s per user on this machine; the hasher is not what these tests test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


MODELS = ("topic", "dataset", "procedure", "generator", "generation")


@pytest.fixture
def bench(db):
    return make_benchmark(n_procedures=6, n_generators=3)


@pytest.fixture
def admin_client_role(client, make_user):
    client.force_login(make_user("boss", role="admin", staff=True))
    return client


@pytest.fixture
def researcher_client(client, make_user):
    client.force_login(make_user("rita", role="researcher", staff=True))
    return client


def _changelist(model: str) -> str:
    return reverse(f"admin:benchmarks_{model}_changelist")


def _change(obj) -> str:
    return reverse(f"admin:benchmarks_{obj._meta.model_name}_change", args=[obj.pk])


def test_every_benchmark_model_is_registered():
    from django.contrib import admin

    from benchmarks.models import GenerationRun

    for model in (Topic, Dataset, Procedure, Generator, Generation, GenerationRun):
        assert admin.site.is_registered(model)


@pytest.mark.parametrize("model", MODELS)
def test_changelists_render_with_a_fixed_number_of_queries(
    db, admin_client_role, django_assert_max_num_queries, model
):
    make_benchmark(n_procedures=30, n_generators=3)
    admin_client_role.get(_changelist(model))
    with django_assert_max_num_queries(12):
        response = admin_client_role.get(_changelist(model))
    assert response.status_code == 200
    assert response.context["cl"].result_count > 0


def test_procedure_changelist_columns(bench, admin_client_role):
    response = admin_client_role.get(_changelist("procedure"), {"q": "sourdough"})
    cl = response.context["cl"]
    assert [p.source_example_id for p in cl.result_list] == ["ex-0000"]
    html = response.content.decode()
    for header in ("Source example id", "Goal", "Topic", "Dataset", "Steps", "Generations"):
        assert header.lower() in html.lower()
    row = cl.result_list[0]
    assert row._n_generations == 3
    assert "source_text" in row.get_deferred_fields()


def test_procedure_changelist_filters(bench, admin_client_role):
    topic = bench["topics"][1]
    by_topic = admin_client_role.get(
        _changelist("procedure"), {"topic__id__exact": topic.pk}
    ).context["cl"]
    assert sorted(p.source_example_id for p in by_topic.result_list) == ["ex-0001", "ex-0004"]
    by_ds = admin_client_role.get(
        _changelist("procedure"), {"dataset__id__exact": bench["dataset2"].pk}
    ).context["cl"]
    assert [p.goal for p in by_ds.result_list] == ["Same id, other version"]


def test_generation_changelist_filters_and_search(bench, admin_client_role):
    gen = bench["generators"][2]
    cl = admin_client_role.get(_changelist("generation"), {"generator__id__exact": gen.pk}).context[
        "cl"
    ]
    assert cl.result_count == 6 and {g.generator_id for g in cl.result_list} == {gen.pk}
    cl = admin_client_role.get(_changelist("generation"), {"generator__backend": "openai"}).context[
        "cl"
    ]
    assert cl.result_count == 7
    cl = admin_client_role.get(_changelist("generation"), {"q": "model-1"}).context["cl"]
    assert cl.result_count == 6
    cl = admin_client_role.get(_changelist("generation"), {"q": "ex-0003"}).context["cl"]
    assert cl.result_count == 3
    html = admin_client_role.get(_changelist("generation"), {"q": "ex-0003"}).content.decode()
    assert "Do task number 3" in html


def test_generator_changelist_counts_and_filter(bench, admin_client_role):
    cl = admin_client_role.get(_changelist("generator"), {"backend__exact": "vllm"}).context["cl"]
    assert {g.name: g._n_generations for g in cl.result_list} == {"gen-1": 6, "gen-2": 6}


def test_procedure_change_page_shows_steps_readably_and_generations(bench, admin_client_role):
    proc = bench["procedures"][2]
    response = admin_client_role.get(_change(proc))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<li>step 1</li><li>step 2</li><li>step 3</li><li>step 4</li><li>step 5</li>" in html
    assert "gen-0" in html and "gen-2" in html
    assert proc.get_absolute_url() in html


def test_autocomplete_for_procedure_dataset(bench, admin_client_role):
    response = admin_client_role.get(
        "/admin/autocomplete/",
        {
            "app_label": "benchmarks",
            "model_name": "procedure",
            "field_name": "dataset",
            "term": "bench",
        },
    )
    assert response.status_code == 200
    assert {r["text"] for r in response.json()["results"]} == {"bench@v1", "bench@v2"}


def test_admin_role_can_change_procedure(bench, admin_client_role):
    proc = bench["procedures"][0]
    data = {
        "dataset": proc.dataset_id,
        "source_example_id": proc.source_example_id,
        "topic": proc.topic_id,
        "goal": "Bake a better sourdough",
        "url": "",
        "steps": '["a", "b"]',
        "resources": "[]",
        "source_text": "",
        "generations-TOTAL_FORMS": "3",
        "generations-INITIAL_FORMS": "3",
        "generations-MIN_NUM_FORMS": "0",
        "generations-MAX_NUM_FORMS": "1000",
    }
    for i, g in enumerate(proc.generations.order_by("pk")):
        data[f"generations-{i}-id"] = g.pk
        data[f"generations-{i}-procedure"] = proc.pk
    response = admin_client_role.post(_change(proc), data)
    assert response.status_code == 302, (
        response.context["adminform"].form.errors if response.context else response
    )
    proc.refresh_from_db()
    assert proc.goal == "Bake a better sourdough" and proc.steps == ["a", "b"]


@pytest.mark.parametrize("model", MODELS)
def test_researcher_views_but_cannot_change(bench, researcher_client, model):
    obj = {
        "topic": bench["topics"][0],
        "dataset": bench["dataset"],
        "procedure": bench["procedures"][0],
        "generator": bench["generators"][0],
        "generation": bench["procedures"][0].generations.first(),
    }[model]
    assert researcher_client.get(_changelist(model)).status_code == 200
    page = researcher_client.get(_change(obj))
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()  # a read-only view
    assert researcher_client.get(reverse(f"admin:benchmarks_{model}_add")).status_code == 403
    assert (
        researcher_client.post(_change(obj), {"name": "changed", "goal": "changed"}).status_code
        == 403
    )
    assert (
        researcher_client.post(
            reverse(f"admin:benchmarks_{model}_delete", args=[obj.pk]), {"post": "yes"}
        ).status_code
        == 403
    )
    assert type(obj).objects.filter(pk=obj.pk).exists()


def test_admin_change_page_has_save_button(bench, admin_client_role):
    html = admin_client_role.get(_change(bench["generators"][0])).content.decode()
    assert 'name="_save"' in html


def test_annotator_gets_nothing_in_the_admin(bench, client, make_user):
    client.force_login(make_user("ann", role="annotator", staff=True))
    for model in MODELS:
        assert client.get(_changelist(model)).status_code == 403
    index = client.get(reverse("admin:index"))
    assert "Benchmarks" not in index.content.decode()


def test_created_at_is_read_only(bench, admin_client_role):
    form = admin_client_role.get(_change(bench["dataset"])).context["adminform"].form
    assert "created_at" not in form.fields
    assert "name" in form.fields
