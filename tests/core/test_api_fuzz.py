"""A bounded schemathesis run over the whole API on PostgreSQL, with an admin and a
researcher token, through real HTTP to the live server: no 5xx, and every status an endpoint
answers is declared in its OpenAPI schema (``not_a_server_error``, ``status_code_conformance``).
Bounded to about a minute on 2 cores (``FUZZ_MAX_EXAMPLES`` raises it)."""

from __future__ import annotations

import os

import pytest
from rest_framework.authtoken.models import Token

from tests.support.fuzz import run_fuzz

pytestmark = pytest.mark.django_db(transaction=True)


def test_api_fuzz_has_no_server_errors_and_conforms(live_server, make_user):
    tokens = {
        role: Token.objects.create(user=make_user(f"fuzz-{role}", role=role)).key
        for role in ("admin", "researcher")
    }
    report = run_fuzz(
        base_url=live_server.url,
        tokens=tokens,
        max_examples=int(os.environ.get("FUZZ_MAX_EXAMPLES", "8")),
        time_budget_s=240,
    )
    if os.environ.get("FUZZ_REPORT"):  # the whole list, for fixing
        with open(os.environ["FUZZ_REPORT"], "w", encoding="utf-8") as out:
            out.write("\n".join(report.failures) + f"\n{dict(report.statuses)}\n")
    assert report.operations > 30 and report.cases > 100  # it really ran over the schema
    assert report.server_errors == 0, "\n".join(report.failures[:20])
    assert not report.failures, f"{len(report.failures)} failure(s):\n" + "\n".join(
        report.failures[:30]
    )
