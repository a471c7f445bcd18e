"""The API on hand-made bad inputs that were 500s answer 4xx naming the problem."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(make_user):
    c = APIClient()
    c.force_authenticate(make_user("adm", role="admin"))
    return c


def test_nul_in_selection(api):
    r = api.post("/api/judge-runs/", {"judge": 1, "selection": {"dataset": "a\x00"}}, format="json")
    assert r.status_code == 400 and "U+0000 NUL" in str(r.json())


@pytest.mark.parametrize(
    "body",
    [
        {"judge": "x", "selection": []},
        {"judge": [1], "selection": "all"},
        {"judge": 1, "selection": {"dataset": 5, "generators": "g", "limit": "many"}},
        {"judge": 1, "selection": {"generators": [{"a": 1}], "source_example_ids": 7}},
        {"judge": 2**70, "selection": {}},
        [],
        "text",
    ],
)
def test_wrong_json_types_in_estimate_and_create(api, body):
    for path in ("/api/judge-runs/estimate/", "/api/judge-runs/"):
        r = api.post(path, body, format="json")
        assert r.status_code == 400, (path, body, r.status_code, r.content[:300])


@pytest.mark.parametrize("action", ["cancel", "resume", "rerun-failures"])
def test_non_numeric_run_id(api, action):
    r = api.post(f"/api/judge-runs/abc/{action}/", {}, format="json")
    assert r.status_code == 404


def _integer_query_parameters():
    from tests.support.fuzz import api_schema_dict

    for path, item in api_schema_dict()["paths"].items():
        if "{" in path or "get" not in item:
            continue
        for p in item["get"].get("parameters", []):
            if p.get("in") == "query" and (p.get("schema") or {}).get("type") == "integer":
                yield path, p["name"]


def test_integer_query_parameters_past_64_bits(api):
    params = list(_integer_query_parameters())
    assert len(params) >= 15
    for path, name in params:
        for value in (str(2**64), str(-(2**70)), "99999999999999999999999"):
            r = api.get(path, {name: value})
            assert r.status_code in (200, 400, 404), (path, name, value, r.status_code)


def test_schema_declares_the_error_statuses():
    from tests.support.fuzz import api_schema_dict

    paths = api_schema_dict()["paths"]
    assert set(paths["/api/judge-runs/"]["post"]["responses"]) >= {"201", "400", "403", "413"}
    assert set(paths["/api/judge-runs/{id}/cancel/"]["post"]["responses"]) >= {"403", "404"}
    assert set(paths["/api/studies/"]["get"]["responses"]) >= {"200", "400", "403", "404"}


def test_token_endpoint_is_locked_too(client, make_user, settings):
    """The API's password exchange counts towards the same lockout (django-axes watches every
    authenticate()): after the limit even the right password gets no token."""
    make_user("tok", role="researcher")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        assert (
            client.post("/api/auth/token/", {"username": "tok", "password": "x"}).status_code == 400
        )
    r = client.post("/api/auth/token/", {"username": "tok", "password": "pw-Test-12345"})
    assert r.status_code == 400 and "token" not in r.json()
    other = Client(REMOTE_ADDR="10.7.7.7")
    r = other.post("/api/auth/token/", {"username": "tok", "password": "pw-Test-12345"})
    assert r.status_code == 200 and r.json()["token"]
