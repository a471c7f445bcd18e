"""The probes behind the "Reliability and security" table (docs/performance/reliability.md), run by
tests/perf/reliability_table.py through pytest (for its PostgreSQL test database, live server
and Django client). Not collected by the normal suite (the name does not start with test_);
each probe appends rows ``{"area", "tried", "result", "bad"}`` to the JSON file named by
``RELIABILITY_OUT`` (``bad``: how many outcomes were wrong — a 5xx, a takeover, a row written).

Runs under injected faults (cancel, kill -9, redelivery; lost/duplicated/
re-bought counts) are :func:`test_run_faults`, whose runs live in ``reliability_runs.py``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.authtoken.models import Token

from tests.support.fuzz import run_fuzz

pytestmark = pytest.mark.django_db(transaction=True)
OUT = Path(os.environ.get("RELIABILITY_OUT", "var/reliability.json"))


def record(area: str, tried: str, result: str, bad: int | None) -> None:
    rows = json.loads(OUT.read_text()) if OUT.exists() else []
    rows.append({"area": area, "tried": tried, "result": result, "bad": bad})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(rows, indent=1))


def _plain_routes(resolver=None, prefix=""):
    """Every URL pattern without parameters (GET-able as it is)."""
    resolver = resolver or get_resolver()
    for p in resolver.url_patterns:
        route = str(p.pattern)
        if isinstance(p, URLResolver):
            yield from _plain_routes(p, prefix + route)
        elif isinstance(p, URLPattern) and "<" not in route and "(?P" not in route:
            yield "/" + (prefix + route).lstrip("^").rstrip("$").replace("\\", "")


def test_roles_by_routes(make_user):
    routes = sorted({r for r in _plain_routes() if "logout" not in r})
    clients = {"anonymous": Client(raise_request_exception=False)}
    for role in ("annotator", "researcher", "admin"):
        clients[role] = Client(raise_request_exception=False)
        clients[role].force_login(make_user(f"probe-{role}", role=role))
    statuses: Counter = Counter()
    failing: set[str] = set()
    server_errors = 0
    for client in clients.values():
        for route in routes:
            status = client.get(route).status_code
            statuses[status] += 1
            # /healthz/workers answers 503 by design when no worker is alive (none here)
            if status >= 500 and not (status == 503 and route == "/healthz/workers"):
                failing.add(route)
                server_errors += 1
    record(
        "Access",
        f"GET {len(routes)} parameterless routes × {len(clients)} roles",
        ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items()))
        + f"; 5xx: {server_errors}"
        + (" (503: /healthz/workers, no worker alive, as designed)" if statuses[503] else "")
        + (f" ({', '.join(sorted(failing))})" if failing else ""),
        server_errors,
    )


def test_api_fuzz(live_server, make_user):
    tokens = {
        role: Token.objects.create(user=make_user(f"fuzz-{role}", role=role)).key
        for role in ("admin", "researcher")
    }
    n = int(os.environ.get("FUZZ_MAX_EXAMPLES", "25"))
    report = run_fuzz(base_url=live_server.url, tokens=tokens, max_examples=n, time_budget_s=900)
    undocumented = len(report.failures)
    record(
        "Fuzzing",
        f"schemathesis: {report.operations} API operations × 2 tokens (admin, researcher), "
        f"≤{n} cases each, checks not_a_server_error + status_code_conformance",
        f"{report.cases} cases in {report.seconds:.0f} s; "
        + ", ".join(f"{s}: {c}" for s, c in sorted(report.statuses.items()))
        + f"; 5xx: {report.server_errors}; failed checks: {undocumented}",
        report.server_errors + undocumented,
    )


API_BAD_INPUTS = [
    (
        "NUL inside a judge run's selection",
        "post",
        "/api/judge-runs/",
        '{"judge": 1, "selection": {"dataset": "a\\u0000"}}',
    ),
    (
        "wrong JSON types in estimate",
        "post",
        "/api/judge-runs/estimate/",
        '{"judge": "x", "selection": []}',
    ),
    (
        "selection of the wrong shape",
        "post",
        "/api/judge-runs/estimate/",
        '{"judge": 1, "selection": {"generators": [{"a": 1}], "limit": "many"}}',
    ),
    ("a body that is not an object", "post", "/api/judge-runs/", "[]"),
    ("malformed JSON", "post", "/api/studies/", '{"name": '),
    ("non-numeric run id (cancel)", "post", "/api/judge-runs/abc/cancel/", "{}"),
    ("non-numeric run id (resume)", "post", "/api/judge-runs/abc/resume/", "{}"),
    ("integer filter past 64 bits", "get", "/api/judge-runs/?judge=99999999999999999999999", None),
    ("page past 64 bits", "get", "/api/studies/?page=99999999999999999999999", None),
    ("NUL in a search parameter", "get", "/api/studies/?search=a%00b", None),
    (
        "control character in a study name",
        "post",
        "/api/studies/",
        '{"name": "bell\\u0007", "generation_ids": []}',
    ),
]


def test_api_bad_inputs(make_user):
    c = Client()
    c.force_login(make_user("probe-admin", role="admin"))
    results = Counter()
    bad = 0
    for _label, method, path, body in API_BAD_INPUTS:
        if method == "get":
            r = c.get(path)
        else:
            r = c.post(path, data=body, content_type="application/json")
        results[r.status_code] += 1
        bad += r.status_code >= 500
    record(
        "Bad input (API)",
        f"{len(API_BAD_INPUTS)} hand-made bad requests: "
        + "; ".join(label for label, *_ in API_BAD_INPUTS),
        ", ".join(f"{s}: {n}" for s, n in sorted(results.items())) + f"; 5xx: {bad}",
        bad,
    )


def test_annotator_form_bad_text():
    from annotation.models import Annotation, Assignment, AttentionCheckResult, Draft
    from tests.annotation.factories import make_study

    study = make_study(n_items=2, min_seconds_per_item=0)
    c = Client()
    c.get(
        reverse("annotation:enter", args=[study.slug]),
        {"PROLIFIC_PID": "P1", "STUDY_ID": "S1", "SESSION_ID": "X1"},
    )
    c.post(reverse("annotation:consent", args=[study.slug]), {"consent": "agree"})
    c.post(reverse("annotation:training", args=[study.slug]))
    c.get(reverse("annotation:item", args=[study.slug]))
    a = Assignment.objects.get()
    base = {
        "goal_ack": "1",
        "read": ["1", "2", "3", "4"],
        "read_l1": ["1", "2", "3", "4"],
        "choice": "failure",
        "f-0-desc": "d",
        "f-0-l2": ["2"],
        "comments": "",
    }
    tries = 0
    wrong = 0
    for field in ("comments", "f-0-desc"):
        for char in ("\x00", "\x07", "\x1b", "\x7f"):
            tries += 1
            r = c.post(
                reverse("annotation:submit", args=[study.slug, a.pk]),
                {**base, field: f"x{char}y"},
            )
            page = c.get(reverse("annotation:item", args=[study.slug]))
            rows = (
                Annotation.objects.count()
                + AttentionCheckResult.objects.count()
                + Draft.objects.count()
            )
            wrong += r.status_code != 302 or page.status_code != 200 or rows != 0
    early = make_study(n_items=1, min_seconds_per_item=600)
    c2 = Client()
    c2.get(
        reverse("annotation:enter", args=[early.slug]),
        {"PROLIFIC_PID": "P2", "STUDY_ID": "S1", "SESSION_ID": "X2"},
    )
    c2.post(reverse("annotation:consent", args=[early.slug]), {"consent": "agree"})
    c2.post(reverse("annotation:training", args=[early.slug]))
    c2.get(reverse("annotation:item", args=[early.slug]))
    a2 = Assignment.objects.get(participant__prolific_pid="P2")
    r = c2.post(reverse("annotation:submit", args=[early.slug, a2.pk]), {**base, "goal_ack": ""})
    reload = c2.get(r["Location"])
    rows = AttentionCheckResult.objects.count() + Draft.objects.count()
    wrong += r.status_code != 302 or reload.status_code != 200 or rows != 0
    record(
        "Bad input (annotator)",
        f"{tries} submits with NUL/BEL/ESC/DEL in each free-text field, 1 too-early submit",
        f"each refused naming the field, redirected (reload 200, not 405); rows written: "
        f"{Annotation.objects.count() + rows}",
        wrong,
    )


def test_entry_takeover_and_squatting(settings):
    from annotation.models import EntryEvent, Participant
    from tests.annotation.factories import make_study

    settings.ANNOTATION_NEW_PARTICIPANTS_PER_IP = 30
    study = make_study(n_items=3)
    enter = reverse("annotation:enter", args=[study.slug])
    first = Client()
    first.get(enter, {"PROLIFIC_PID": "VICTIM", "STUDY_ID": "S1", "SESSION_ID": "A"})
    consent = reverse("annotation:consent", args=[study.slug])
    first.post(consent, {"consent": "agree"})  # the participant is created by the consent
    attacker = Client()
    r = attacker.get(enter, {"PROLIFIC_PID": "VICTIM", "STUDY_ID": "S1", "SESSION_ID": "B"})
    item = attacker.get(reverse("annotation:item", args=[study.slug]))
    taken = item.status_code == 200
    record(
        "Session takeover",
        "same PROLIFIC_PID, another SESSION_ID, another browser",
        f"entry {r.status_code}, item page {item.status_code}; researcher events: "
        f"{EntryEvent.objects.filter(kind='session_conflict').count()}",
        int(taken or r.status_code != 409),
    )
    statuses = Counter()
    for i in range(100):
        squatter = Client()
        resp = squatter.get(
            enter,
            {"PROLIFIC_PID": f"SQ{i}", "STUDY_ID": "S1", "SESSION_ID": f"s{i}"},
            REMOTE_ADDR="10.6.6.6",
        )
        if resp.status_code == 302:  # following the link creates nothing; consenting does
            resp = squatter.post(consent, {"consent": "agree"}, REMOTE_ADDR="10.6.6.6")
        statuses[resp.status_code] += 1
    created = Participant.objects.filter(prolific_pid__startswith="SQ").count()
    record(
        "Squatting",
        "100 new random PIDs from one address (limit ANNOTATION_NEW_PARTICIPANTS_PER_IP=30/h)",
        f"{created} participants created; "
        + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items())),
        int(created > 30),
    )


def test_secret_names():
    from django.core.exceptions import ValidationError

    from core.secrets import api_key_env_error
    from judging.models import Judge

    names = [
        "SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "CELERY_RESULT_BACKEND",
        "CACHE_URL",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "EMAIL_HOST_PASSWORD",
        "PATH",
        "HOME",
        "sk-live-123",
    ]
    allowed = 0
    for name in names:
        judge = Judge(name=f"j-{name}", backend="openai", model="m", api_key_env=name)
        try:
            judge.full_clean(exclude=["judge_id"])
            allowed += 1
        except ValidationError as exc:
            allowed += "api_key_env" not in exc.message_dict
        allowed += api_key_env_error(name) is None
    record(
        "Secrets",
        f"api_key_env naming {len(names)} server variables / non-names (judge, model rule)",
        f"refused {2 * len(names) - allowed} of {2 * len(names)} "
        "(Judge validation, the console/API/CLI path; and core.secrets itself)",
        allowed,
    )


def test_login_lockout(make_user, settings):
    make_user("victim", role="researcher")
    c = Client()
    statuses = [
        c.post(reverse("login"), {"username": "victim", "password": f"guess{i}"}).status_code
        for i in range(30)
    ]
    right = c.post(reverse("login"), {"username": "victim", "password": "pw-Test-12345"})
    first_lock = statuses.index(429) + 1 if 429 in statuses else None
    record(
        "Login",
        "30 wrong passwords in a row, then the right one (same address)",
        f"locked from attempt {first_lock} (AXES_FAILURE_LIMIT={settings.AXES_FAILURE_LIMIT}); "
        f"right password then: {right.status_code}",
        int(right.status_code == 302),
    )


def test_upload_limit(make_user, settings):
    settings.UPLOAD_MAX_BYTES = 1024 * 1024
    c = Client()
    c.force_login(make_user("up", role="researcher"))
    from django.core.files.uploadedfile import SimpleUploadedFile

    r = c.post(
        reverse("mining:batch_new"),
        {"model": "m", "file": SimpleUploadedFile("d.jsonl", b"x" * (2 * 1024 * 1024))},
    )
    record(
        "Limits",
        "a 2 MB upload against UPLOAD_MAX_BYTES = 1 MB; Content-Security-Policy on pages",
        f"{r.status_code}, page names the limit: {'1 MB' in r.content.decode()}; "
        f"CSP header: {'Content-Security-Policy' in c.get('/').headers}",
        int(r.status_code != 413),
    )


@pytest.mark.parametrize("fault", ["cancel_at_40", "redelivered_chunk", "kill_mid_chunk"])
def test_run_faults(fault, tmp_path):
    """Runs under injected faults, through real workers
    against the local LLM server (:mod:`tests.perf.reliability_runs`)."""
    from tests.perf import reliability_runs

    row = getattr(reliability_runs, fault)(tmp_path)
    record(row["area"], row["tried"], row["result"], row["bad"])
    assert row["bad"] == 0, row


def test_idle_release():
    from django.utils import timezone

    from annotation.models import Assignment
    from annotation.services.assignment import (
        assignments_release_stale,
        participant_current_assignment,
    )
    from tests.annotation.factories import make_study, working_participant

    study = make_study(n_items=2, overlap=1)
    participant_current_assignment(participant=working_participant(study, "IDLE"))
    later = timezone.now() + timedelta(minutes=study.assignment_timeout_minutes + 1)
    released = assignments_release_stale(study=study, now=later)
    record(
        "Idle assignments",
        f"an assignment idle past the study's timeout ({study.assignment_timeout_minutes} min)",
        f"released to the pool: {released}; state {Assignment.objects.get().state}",
        int(released != 1),
    )
