"""core.bulk_insert: one UNNEST insert compiled once, bound on the server, storing what
bulk_create stores."""

from __future__ import annotations

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from core import bulk_insert as bulk
from judging.models import Judgment
from tests.judging.factories import make_judge

pytestmark = pytest.mark.django_db

_SKIP = ("id", "created_at")


def _judgments(judge, hashes, **extra) -> list[Judgment]:
    return [
        Judgment(
            judge=judge,
            judge_key=judge.judge_id,
            content_hash=h,
            reasoning=f"why {i} 'quoted' \"and\" \\ back\nline",
            critical_failures=[{"step": 2, "text": "é ü {x}"}] if i % 2 else [],
            has_failure=bool(i % 2),
            n_failures=i % 2,
            parse_warnings=["w"] if i == 0 else [],
            raw_output="{}",
            prompt_tokens=3000 + i,
            completion_tokens=100,
            latency_s=0.25 * i,
            **extra,
        )
        for i, h in enumerate(hashes)
    ]


def _rows(judge, prefix) -> list[dict]:
    rows = Judgment.objects.filter(judge=judge, content_hash__startswith=prefix)
    rows = rows.order_by("content_hash").values()
    return [{k: v for k, v in r.items() if k not in _SKIP} for r in rows]


def test_stores_what_bulk_create_stores_and_skips_conflicts():
    judge = make_judge(name="a")
    Judgment.objects.bulk_create(_judgments(judge, ["g1", "g2", "g3"]), ignore_conflicts=True)
    expected = [{**r, "content_hash": "h" + r["content_hash"][1:]} for r in _rows(judge, "g")]
    objs = _judgments(judge, ["h1", "h2", "h3"])
    bulk.bulk_insert(Judgment, objs, ignore_conflicts=True)
    assert _rows(judge, "h") == expected and len(expected) == 3
    assert all(o.created_at is not None and not o._state.adding for o in objs)
    # a conflicting row is skipped, a new one goes in
    again = _judgments(judge, ["h1", "h4"])
    again[0].reasoning = "not stored"
    bulk.bulk_insert(Judgment, again, ignore_conflicts=True)
    stored = Judgment.objects.filter(content_hash__startswith="h")
    stored = dict(stored.values_list("content_hash", "reasoning"))
    assert set(stored) == {"h1", "h2", "h3", "h4"} and stored["h1"] != "not stored"


def test_one_statement_compiled_once_with_values_bound(monkeypatch):
    judge = make_judge(name="c")
    bulk._compiled.clear()
    monkeypatch.setattr(
        type(connections["default"]), "queries_logged", property(lambda self: False)
    )
    sent = []
    real = connections["default"].make_cursor

    def spy(cursor):
        wrapped = real(cursor)
        execute = wrapped.execute
        wrapped.execute = lambda sql, params=None: (
            sent.append((sql, params)),
            execute(sql, params),
        )[1]
        return wrapped

    monkeypatch.setattr(connections["default"], "make_cursor", spy)
    bulk.bulk_insert(Judgment, _judgments(judge, ["x1", "x2"]), ignore_conflicts=True)
    bulk.bulk_insert(Judgment, _judgments(judge, ["x3", "x4", "x5"]), ignore_conflicts=True)
    assert len(bulk._compiled) == 1
    assert len(sent) == 2 and sent[0][0] == sent[1][0]
    assert "UNNEST(" in sent[0][0] and "ON CONFLICT DO NOTHING" in sent[0][0]
    assert "%b" in sent[0][0] and "x3" not in sent[1][0]  # values bound, not in the SQL
    assert [len(col) for col in sent[1][1]] == [3] * len(bulk._fields(Judgment))
    assert Judgment.objects.filter(judge=judge).count() == 5


def test_with_queries_logged_it_is_bulk_create():
    judge = make_judge(name="d")
    with CaptureQueriesContext(connection) as ctx:
        bulk.bulk_insert(Judgment, _judgments(judge, ["y1", "y2"]), ignore_conflicts=True)
    assert len(ctx.captured_queries) == 1 and "y1" in ctx.captured_queries[0]["sql"]
    assert Judgment.objects.filter(judge=judge).count() == 2
