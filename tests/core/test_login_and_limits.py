"""Login lockout (django-axes, by username + address, cool-off, admin
unlock, the page says why), request size limits with a 413 naming the limit, and the
Content-Security-Policy header. Real requests through Django's client, on PostgreSQL."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.test import Client
from django.urls import reverse

from mining.models import MiningBatch

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Test-12345"


def login(client, username, password, ip="10.0.0.5"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip
    )


def test_lockout_after_failures_then_admin_unlock(make_user, admin_client, settings):
    settings.AXES_FAILURE_LIMIT = 5
    make_user("ann", role="researcher")
    c = Client()
    for _ in range(4):
        r = login(c, "ann", "wrong")
        assert r.status_code == 200 and "didn't match" in r.content.decode()
    r = login(c, "ann", "wrong")  # the fifth failure locks
    assert r.status_code == 429
    # the right password is refused while locked, and the page says why
    r = login(c, "ann", PASSWORD)
    page = r.content.decode()
    assert r.status_code == 429 and "_auth_user_id" not in c.session
    assert "Too many wrong passwords" in page and "ann" in page and "0:15:00" in page
    # locked by username + address: the same user from another address still logs in
    other = Client()
    assert login(other, "ann", PASSWORD, ip="10.0.0.99").status_code == 302
    # an admin unlocks (deletes the access attempt in the admin)
    attempt = AccessAttempt.objects.get(username="ann", ip_address="10.0.0.5")
    assert attempt.failures_since_start >= 5
    r = admin_client.post(
        reverse("admin:axes_accessattempt_delete", args=[attempt.pk]), {"post": "yes"}
    )
    assert r.status_code == 302 and not AccessAttempt.objects.filter(username="ann").exists()
    r = login(c, "ann", PASSWORD)
    assert r.status_code == 302 and c.session.get("_auth_user_id")


def test_upload_over_the_limit_is_a_413_naming_it(make_user, settings):
    settings.UPLOAD_MAX_BYTES = 1024
    make_user("res", role="researcher")
    c = Client()
    c.force_login(make_user("res2", role="researcher"))
    body = b"x" * 4096
    from django.core.files.uploadedfile import SimpleUploadedFile

    r = c.post(
        reverse("mining:batch_new"),
        {"model": "m", "file": SimpleUploadedFile("docs.jsonl", body), "stages": ["1"]},
    )
    page = r.content.decode()
    assert r.status_code == 413
    assert "the limit is 1 KB" in page and "UPLOAD_MAX_BYTES" in page
    assert not MiningBatch.objects.exists()


def test_api_body_over_the_limit_is_a_json_413(make_user, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    c = Client()
    c.force_login(make_user("adm", role="admin"))
    r = c.post(
        "/api/judge-runs/estimate/",
        data='{"judge": 1, "selection": {"x": "' + "y" * 4096 + '"}}',
        content_type="application/json",
    )
    assert r.status_code == 413
    assert r.json()["limit_bytes"] == 2048 and "DATA_UPLOAD_MAX_BYTES" in r.json()["detail"]


def test_pages_carry_a_content_security_policy(client):
    r = client.get(reverse("login"))
    policy = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-eval" not in policy


def test_the_policy_built_once_equals_django_csps_and_follows_the_settings(client, settings):
    """core.middleware.CSPMiddleware keeps the built header; it must be the header django-csp
    builds, change when the setting does, and leave per-response policies to django-csp."""
    from csp.constants import NONCE
    from csp.utils import build_policy
    from django.http import HttpResponse
    from django.test import RequestFactory

    from core.middleware import CSPMiddleware

    r = client.get(reverse("login"))
    assert r.headers["Content-Security-Policy"] == build_policy()
    assert "Content-Security-Policy-Report-Only" not in r.headers

    settings.CONTENT_SECURITY_POLICY = {
        "DIRECTIVES": {"default-src": ["'self'", "cdn.test"], "script-src": ["'self'", NONCE]}
    }
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {
        "DIRECTIVES": {"default-src": ["'none'"]},
        "EXCLUDE_URL_PREFIXES": ["/api/"],
    }
    r = client.get(reverse("login"))
    policy = set(r.headers["Content-Security-Policy"].split("; "))
    assert policy == {"default-src 'self' cdn.test", "script-src 'self'"}
    assert r.headers["Content-Security-Policy-Report-Only"] == "default-src 'none'"
    r = client.get("/api/")
    assert "Content-Security-Policy-Report-Only" not in r.headers

    middleware = CSPMiddleware(lambda request: HttpResponse("ok"))
    request = RequestFactory().get("/x/")
    middleware.process_request(request)
    response = HttpResponse("ok")
    response._csp_update = {"img-src": ["img.test"]}  # @csp_update on a view
    out = middleware.process_response(request, response)
    directives = set(out.headers["Content-Security-Policy"].split("; "))
    assert directives == {"default-src 'self' cdn.test", "img-src img.test", "script-src 'self'"}

    request = RequestFactory().get("/x/")
    middleware.process_request(request)
    nonce = str(request.csp_nonce)  # a template asked for a nonce: it goes into the header
    out = middleware.process_response(request, HttpResponse("ok"))
    assert f"script-src 'self' 'nonce-{nonce}'" in out.headers["Content-Security-Policy"]
