"""The read-only REST API: roles, token auth, filters, representations, pagination, schema, query counts."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.staticfiles import finders
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.benchmarks.factories import make_benchmark


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    # PBKDF2 costs ~0.3 s per user on this machine; the hasher is not what these tests test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


PASSWORD = "pw-Test-12345"


@pytest.fixture
def bench(db):
    return make_benchmark()


@pytest.fixture
def api_for(make_user):
    def _client(role: str | None, *, staff: bool = False) -> APIClient:
        client = APIClient()
        if role is not None:
            client.force_login(make_user(f"{role}-user", role=role, staff=staff))
        return client

    return _client


@pytest.fixture
def researcher_api(api_for):
    return api_for("researcher")


def endpoints(b: dict) -> list[str]:
    p = b["procedures"][0]
    g = p.generations.first()
    return [
        "/api/datasets/",
        f"/api/datasets/{b['dataset'].pk}/",
        "/api/topics/",
        f"/api/topics/{b['topics'][0].slug}/",
        "/api/procedures/",
        f"/api/procedures/{p.pk}/",
        "/api/generators/",
        f"/api/generators/{b['generators'][0].pk}/",
        "/api/generations/",
        f"/api/generations/{g.pk}/",
    ]


# --- who may use the API -------------------------------------------------------------------------


def test_anonymous_gets_401_or_403_on_every_endpoint(bench, api_for):
    client = api_for(None)
    for url in endpoints(bench):
        response = client.get(url)
        assert response.status_code in (401, 403), url
        assert "results" not in response.json()


def test_annotator_gets_403_on_every_endpoint_by_session_and_by_token(bench, api_for, make_user):
    session_client = api_for("annotator")
    annotator = make_user("annotator-2", role="annotator")
    token_client = APIClient()
    token_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator).key}")
    for url in endpoints(bench):
        for client in (session_client, token_client):
            response = client.get(url)
            assert response.status_code == 403, url
            assert response.json()["detail"] == "This endpoint is for researchers and admins."


@pytest.mark.parametrize("role", ["researcher", "admin"])
def test_researcher_and_admin_read_every_endpoint(bench, api_for, role):
    client = api_for(role)
    for url in endpoints(bench):
        assert client.get(url).status_code == 200, url


def test_api_is_read_only_even_for_admins(bench, api_for):
    client = api_for("admin")
    proc = bench["procedures"][0]
    assert client.post("/api/procedures/", {"goal": "x"}, format="json").status_code == 405
    assert (
        client.patch(f"/api/procedures/{proc.pk}/", {"goal": "x"}, format="json").status_code == 405
    )
    assert client.delete(f"/api/procedures/{proc.pk}/").status_code == 405
    proc.refresh_from_db()
    assert proc.goal == "Bake sourdough bread"


def test_token_endpoint_gives_researchers_a_token_that_works(bench, make_user):
    make_user("rita", role="researcher")
    client = APIClient()
    response = client.post(
        "/api/auth/token/", {"username": "rita", "password": PASSWORD}, format="json"
    )
    assert response.status_code == 200
    key = response.json()["token"]
    assert Token.objects.get(user__username="rita").key == key
    # Asking again returns the same token.
    again = client.post(
        "/api/auth/token/", {"username": "rita", "password": PASSWORD}, format="json"
    )
    assert again.json()["token"] == key
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/procedures/").json()["count"] == 7


def test_token_endpoint_refuses_annotators_and_bad_passwords(bench, make_user):
    make_user("ann", role="annotator")
    make_user("rita", role="researcher")
    client = APIClient()
    refused = client.post(
        "/api/auth/token/", {"username": "ann", "password": PASSWORD}, format="json"
    )
    assert refused.status_code == 403
    assert not Token.objects.filter(user__username="ann").exists()
    wrong = client.post("/api/auth/token/", {"username": "rita", "password": "nope"}, format="json")
    assert wrong.status_code == 400
    assert not Token.objects.filter(user__username="rita").exists()


def test_drf_create_token_command_makes_a_usable_token(bench, make_user):
    from io import StringIO

    from django.core.management import call_command

    make_user("rita", role="researcher")
    out = StringIO()
    call_command("drf_create_token", "rita", stdout=out)
    key = Token.objects.get(user__username="rita").key
    assert key in out.getvalue()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/datasets/").status_code == 200


# --- filters and representations ----------------------------------------------------------------


def _ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["source_example_id"] for row in response.json()["results"]]


def test_procedure_filters(bench, researcher_api):
    ds = bench["dataset"]
    all_v1 = [f"ex-{i:04d}" for i in range(6)]
    assert _ids(researcher_api.get("/api/procedures/", {"dataset": ds.pk})) == all_v1
    assert (
        len(_ids(researcher_api.get("/api/procedures/", {"dataset": "bench"}))) == 7
    )  # both versions
    assert _ids(researcher_api.get("/api/procedures/", {"dataset": "bench@v2"})) == ["ex-0000"]
    assert _ids(researcher_api.get("/api/procedures/", {"dataset": "nope"})) == []
    slug = bench["topics"][1].slug
    assert _ids(researcher_api.get("/api/procedures/", {"topic": slug})) == ["ex-0001", "ex-0004"]
    by_source = researcher_api.get("/api/procedures/", {"source_example_id": "ex-0000"}).json()[
        "results"
    ]
    assert sorted(r["dataset_version"] for r in by_source) == ["v1", "v2"]
    assert _ids(researcher_api.get("/api/procedures/", {"search": "sourdough"})) == ["ex-0000"]
    combined = researcher_api.get(
        "/api/procedures/", {"dataset": "bench@v1", "topic": slug, "search": "number 4"}
    )
    assert _ids(combined) == ["ex-0004"]


def test_procedure_list_and_detail_representations(bench, researcher_api):
    proc = bench["procedures"][2]
    row = researcher_api.get(
        "/api/procedures/", {"source_example_id": "ex-0002", "dataset": "bench@v1"}
    )
    row = row.json()["results"][0]
    assert row["goal"] == proc.goal
    assert row["topic"] == bench["topics"][2].name  # the name, not the slug
    assert row["dataset_name"] == "bench" and row["dataset_version"] == "v1"
    assert row["steps"] == proc.steps and row["n_steps"] == len(proc.steps)
    assert row["n_generations"] == 3
    assert "source_text" not in row  # lists leave the document out
    detail = researcher_api.get(f"/api/procedures/{proc.pk}/").json()
    assert detail["source_text"] == proc.source_text
    assert [g["generator_name"] for g in detail["generations"]] == ["gen-0", "gen-1", "gen-2"]
    assert detail["generations"][1]["predicted_steps"] == [
        "gen-1 says 0",
        "gen-1 says 1",
        "gen-1 says 2",
    ]
    assert detail["generations"][1]["model"] == "org/model-1"


def test_generation_filters(bench, researcher_api):
    gens = bench["generators"]
    url = "/api/generations/"
    by_name = researcher_api.get(url, {"generator": "gen-1"}).json()
    assert by_name["count"] == 6
    assert {r["generator_name"] for r in by_name["results"]} == {"gen-1"}
    assert researcher_api.get(url, {"generator": gens[0].pk}).json()["count"] == 7
    assert researcher_api.get(url, {"dataset": "bench@v2"}).json()["count"] == 1
    assert researcher_api.get(url, {"dataset": bench["dataset"].pk}).json()["count"] == 18
    assert researcher_api.get(url, {"topic": bench["topics"][0].slug}).json()["count"] == 6
    proc = bench["procedures"][3]
    rows = researcher_api.get(url, {"procedure": proc.pk}).json()["results"]
    assert {r["procedure"] for r in rows} == {proc.pk} and len(rows) == 3
    both = researcher_api.get(url, {"source_example_id": "ex-0000", "generator": "gen-0"}).json()[
        "results"
    ]
    assert sorted(r["dataset_name"] + "@" + str(r["dataset"]) for r in both) == sorted(
        [f"bench@{bench['dataset'].pk}", f"bench@{bench['dataset2'].pk}"]
    )
    assert researcher_api.get(url, {"generator": "no-such"}).json()["count"] == 0


def test_generation_representation(bench, researcher_api):
    proc = bench["procedures"][1]
    gen = proc.generations.get(generator__name="gen-2")
    row = researcher_api.get(f"/api/generations/{gen.pk}/").json()
    assert row["source_example_id"] == "ex-0001"
    assert row["generator_name"] == "gen-2" and row["model"] == "org/model-2"
    assert row["topic"] == bench["topics"][1].name
    assert row["predicted_steps"] == gen.predicted_steps and row["n_steps"] == 3
    assert row["model_completion"] == "raw output"
    assert row["scores"] == {"step_count_mismatch": True, "duplicate_steps": 0}
    listed = researcher_api.get("/api/generations/", {"procedure": proc.pk}).json()["results"][0]
    assert "model_completion" not in listed
    no_topic = researcher_api.get("/api/generations/", {"dataset": "bench@v2"}).json()["results"][0]
    assert no_topic["topic"] is None


def test_dataset_topic_and_generator_counts(bench, researcher_api):
    rows = {
        (r["name"], r["version"]): r for r in researcher_api.get("/api/datasets/").json()["results"]
    }
    assert rows[("bench", "v1")]["n_procedures"] == 6
    assert rows[("bench", "v1")]["n_generations"] == 18
    assert rows[("bench", "v1")]["n_generators"] == 3
    assert rows[("bench", "v2")]["n_procedures"] == 1
    assert researcher_api.get("/api/datasets/", {"version": "v2"}).json()["count"] == 1
    topic = researcher_api.get(f"/api/topics/{bench['topics'][0].slug}/").json()
    assert topic["n_procedures"] == 2
    gens = {
        r["name"]: r["n_generations"]
        for r in researcher_api.get("/api/generators/").json()["results"]
    }
    assert gens == {"gen-0": 7, "gen-1": 6, "gen-2": 6}
    assert researcher_api.get("/api/generators/", {"backend": "openai"}).json()["count"] == 1


def test_pagination(db, researcher_api):
    make_benchmark(n_procedures=60, n_generators=1)
    first = researcher_api.get("/api/procedures/").json()
    assert first["count"] == 61
    assert len(first["results"]) == 50
    assert first["previous"] is None and "page=2" in first["next"]
    second = researcher_api.get("/api/procedures/", {"page": 2}).json()
    assert len(second["results"]) == 11 and second["next"] is None
    assert {r["id"] for r in first["results"]}.isdisjoint({r["id"] for r in second["results"]})
    assert researcher_api.get("/api/procedures/", {"page": 99}).status_code == 404


# --- query counts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/api/datasets/",
        "/api/topics/",
        "/api/procedures/",
        "/api/generators/",
        "/api/generations/",
        "/api/procedures/?dataset=bench%40v1&topic=art-design&search=task",
    ],
)
def test_list_query_count_does_not_grow_with_rows(
    db, researcher_api, django_assert_max_num_queries, url
):
    make_benchmark(n_procedures=40, n_generators=3)
    researcher_api.get("/api/datasets/")  # warm the session
    # session + user + roles + count + page = 5, for 50 rows as for 1.
    with django_assert_max_num_queries(5):
        response = researcher_api.get(url)
    assert response.status_code == 200 and response.json()["count"] > 0


def test_procedure_detail_query_count(db, researcher_api, django_assert_max_num_queries):
    b = make_benchmark(n_procedures=2, n_generators=12)
    pk = b["procedures"][0].pk
    with django_assert_max_num_queries(5):  # session + user + roles + procedure + generations
        response = researcher_api.get(f"/api/procedures/{pk}/")
    assert len(response.json()["generations"]) == 12


# --- schema and docs ------------------------------------------------------------------------------


def test_openapi_schema_is_valid_openapi_3(db, researcher_api):
    from drf_spectacular.validation import validate_schema

    response = researcher_api.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.")
    validate_schema(schema)  # raises on an invalid document
    params = {p["name"] for p in schema["paths"]["/api/procedures/"]["get"]["parameters"]}
    assert {"dataset", "topic", "source_example_id", "search", "page"} <= params
    gen_params = {p["name"] for p in schema["paths"]["/api/generations/"]["get"]["parameters"]}
    assert {"generator", "dataset", "topic", "procedure", "source_example_id"} <= gen_params
    yaml_response = researcher_api.get("/api/schema/")
    assert yaml_response.status_code == 200 and yaml_response.content.startswith(b"openapi: 3.")


def test_swagger_docs_page_uses_only_local_static_files(db, api_for):
    response = api_for("researcher").get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]+)"', html)
    assert refs, "the page references its assets"
    assets = [r for r in refs if r.endswith((".js", ".css", ".png"))]
    assert any("swagger-ui" in a for a in assets)
    for ref in refs:
        assert not re.match(r"^(https?:)?//", ref), f"external reference {ref}"
    for asset in assets:
        assert asset.startswith("/static/"), asset
        assert finders.find(asset.removeprefix("/static/")), f"{asset} is not a local static file"
    assert "cdn" not in html.lower()
