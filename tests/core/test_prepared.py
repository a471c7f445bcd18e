"""Prepared statements (core/prepared.py) and their system check (core/prepared_check.py): the
check passes on the project's registry and fails loudly on a statement that the ORM compiles
differently; rows come back in the column order the QuerySet names, annotations included
(Django 5.2's values_list order)."""

from __future__ import annotations

import io

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection
from django.db.models import Count, Exists, F, OuterRef
from django.utils import timezone

from annotation.models import Assignment, Participant
from core.prepared import PreparedInsert, PreparedRead, PreparedUpdate, registry
from core.prepared_check import CHECK_TAG, check_prepared_statements, statement_errors
from tests.annotation.factories import make_study, working_participant

pytestmark = pytest.mark.django_db


@pytest.fixture
def temporary():
    """Make statements that leave the registry again after the test."""
    made = []

    def make(cls, name, **kwargs):
        statement = cls(name, **kwargs)
        made.append(name)
        return statement

    yield make
    for name in made:
        registry.remove(name)


def _ids(messages) -> list[str]:
    return [m.id for m in messages]


# --- the check on the real registry ------------------------------------------------------------


def test_the_check_passes_on_every_registered_statement():
    assert check_prepared_statements() == []
    names = set(registry)
    assert {
        "annotation.participant_state",
        "annotation.assignment_full",
        "annotation.item_full",
        "annotation.pool_head",
        "annotation.take_slot",
        "annotation.assignment_locked",
        "annotation.count_done",
        "annotation.assignment_full_locked",
        "annotation.new_assignment",
        "annotation.new_annotation",
        "annotation.mark_submitted",
    } <= names
    for statement in registry.values():  # inside the test's transaction: locking reads too
        assert statement_errors(statement) == []


def test_the_check_is_registered_and_runs_with_manage_py_check():
    assert check_prepared_statements in checks.registry.registry.get_checks()
    assert [m for m in checks.run_checks(tags=[CHECK_TAG]) if m.is_serious()] == []
    out = io.StringIO()
    call_command("check", stdout=out)
    assert "no issues" in out.getvalue()


# --- broken statements are errors ---------------------------------------------------------------


def test_a_sentinel_that_is_also_a_constant_of_the_query_is_an_error(temporary):
    # The sentinel equals a constant of the query: the plan binds the constant to `pk` as well,
    # so the prepared statement would run with the wrong value.
    broken = temporary(
        PreparedRead,
        "tests.constant_collision",
        model=Participant,
        build=lambda *, pk: Participant.objects.filter(pk=pk, n_done__lt=2_073_000_055).values_list(
            "pk"
        ),
        sentinels={"pk": 2_073_000_055},
    )
    errors = statement_errors(broken)
    assert _ids(errors) == ["core.E001"]
    assert errors[0].obj is broken and "differs from the ORM" in errors[0].msg
    found = [m for m in checks.run_checks(tags=[CHECK_TAG]) if m.obj is broken]
    assert _ids(found) == ["core.E001"] and found[0].level == checks.ERROR
    with pytest.raises(SystemCheckError, match=r"core\.E001"):
        call_command("check")


def test_a_broken_locking_read_is_an_error_too(temporary):
    broken = temporary(
        PreparedRead,
        "tests.locking_collision",
        model=Participant,
        build=lambda *, pk: (
            Participant.objects.filter(pk=pk, n_done__lt=2_073_000_054)
            .select_for_update()
            .values_list("pk")
        ),
        sentinels={"pk": 2_073_000_054},
    )
    assert broken.locking
    found = [m for m in check_prepared_statements() if m.obj is broken]
    assert _ids(found) == ["core.E001"]
    assert "FOR UPDATE" in found[0].msg


def test_sql_that_depends_on_the_value_is_an_error(temporary):
    # A value that the ORM writes into the SQL text (here a LIMIT) is not a parameter at all.
    broken = temporary(
        PreparedRead,
        "tests.value_in_sql",
        model=Participant,
        build=lambda *, n: Participant.objects.values_list("pk")[:n],
        sentinels={"n": 2_073_000_056},
    )
    assert _ids(statement_errors(broken)) == ["core.E003"]


def test_an_update_that_compiles_differently_is_an_error(temporary):
    broken = temporary(
        PreparedUpdate,
        "tests.update_collision",
        model=Participant,
        build=lambda *, pk: (
            Participant.objects.filter(pk=pk),
            {"n_done": F("n_done") + 2_073_000_057},
        ),
        sentinels={"pk": 2_073_000_057},
    )
    assert _ids(statement_errors(broken)) == ["core.E001"]


def test_columns_that_differ_from_the_names_asked_for_are_an_error(temporary):
    # As a Django would that selects model columns before annotations whatever the order given.
    def build(*, pk):
        qs = Participant.objects.filter(pk=pk).values_list("pk", "prolific_pid")
        qs._fields = ("prolific_pid", "pk")
        return qs

    broken = temporary(
        PreparedRead,
        "tests.column_order",
        model=Participant,
        build=build,
        sentinels={"pk": 2_073_000_058},
    )
    assert _ids(statement_errors(broken)) == ["core.E002"]


def test_a_correct_statement_passes(temporary):
    ok = temporary(
        PreparedUpdate,
        "tests.update_ok",
        model=Participant,
        build=lambda *, pk: (Participant.objects.filter(pk=pk), {"n_done": F("n_done") + 1}),
        sentinels={"pk": 2_073_000_059},
    )
    assert statement_errors(ok) == []


def test_a_name_is_registered_once(temporary):
    temporary(
        PreparedRead,
        "tests.twice",
        model=Participant,
        build=lambda *, pk: Participant.objects.filter(pk=pk).values_list("pk"),
        sentinels={"pk": 2_073_000_060},
    )
    with pytest.raises(ValueError, match="already exists"):
        PreparedRead(
            "tests.twice",
            model=Participant,
            build=lambda *, pk: Participant.objects.filter(pk=pk).values_list("pk"),
            sentinels={"pk": 2_073_000_061},
        )


# --- column order: values_list with annotations ---------------------------------------------------


def _with_annotations(*, pk, order):
    mine = Assignment.objects.filter(participant_id=OuterRef("pk"))
    return (
        Participant.objects.filter(pk=pk)
        .annotate(has_any=Exists(mine), n_assignments=Count("assignments"))
        .values_list(*order)
    )


@pytest.mark.parametrize(
    "order",
    [
        ("has_any", "pk", "prolific_pid"),  # an annotation before the model fields
        ("pk", "n_assignments", "prolific_pid", "has_any"),  # annotations between them
        ("n_assignments", "has_any", "pk"),
        ("pk", "prolific_pid", "has_any"),  # annotations last
    ],
)
def test_rows_come_back_in_the_order_the_names_are_given(temporary, order):
    study = make_study(n_items=2)
    p = working_participant(study, "PID_COLS")
    read = temporary(
        PreparedRead,
        f"tests.columns.{'.'.join(order)}",
        model=Participant,
        build=lambda *, pk: _with_annotations(pk=pk, order=order),
        sentinels={"pk": 2_073_000_070},
    )
    want = list(_with_annotations(pk=p.pk, order=order))
    values = {"has_any": False, "pk": p.pk, "prolific_pid": "PID_COLS", "n_assignments": 0}
    assert want == [tuple(values[name] for name in order)]
    assert read.rows(pk=p.pk) == want
    assert statement_errors(read) == []


# --- inserts, and PostgreSQL's own prepared statements ------------------------------------------


def _row(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


def test_an_insert_stores_what_create_stores(temporary):
    study = make_study(n_items=2)
    p = working_participant(study, "PID_INSERT")
    items = list(study.items.order_by("pk"))
    now = timezone.now()
    insert = temporary(
        PreparedInsert,
        "tests.insert_assignment",
        model=Assignment,
        samples={
            "participant_id": 1,
            "item_id": 2,
            "state": "active",
            "served_at": now,
            "last_seen_at": now,
            "active_ms": 0,
            "submitted_at": None,
        },
    )
    assert statement_errors(insert) == []
    made = insert.insert(Assignment(participant=p, item=items[0], served_at=now, last_seen_at=now))
    assert made.pk is not None and not made._state.adding
    want = Assignment.objects.create(
        participant=p, item=items[1], served_at=now, last_seen_at=now, state="expired"
    )
    stored = {a.pk: _row(a) for a in Assignment.objects.filter(pk__in=[made.pk, want.pk])}
    assert stored[made.pk] == {
        **stored[want.pk],
        "id": made.pk,
        "item_id": items[0].pk,
        "state": "active",
    }
    assert stored[made.pk] == _row(made)


def test_json_values_go_in_as_the_orm_puts_them(temporary):
    from annotation.models import Annotation

    study = make_study(n_items=1)
    p = working_participant(study, "PID_JSON")
    item = study.items.get()
    now = timezone.now()
    a = Assignment.objects.create(participant=p, item=item, served_at=now, last_seen_at=now)
    failures = [{"description": "L2 says “boil” — L1 says bake", "l1_steps": [1], "l2_steps": [2]}]
    values = {
        "assignment_id": a.pk,
        "participant_id": p.pk,
        "item_id": item.pk,
        "has_failure": True,
        "failures": failures,
        "label": {},
        "comments": "",
        "wall_ms": 10,
        "active_ms": 5,
        "interface_checks": {"goal_ack": True, "n_steps": 4},
        "submitted_at": now,
    }
    insert = temporary(PreparedInsert, "tests.insert_annotation", model=Annotation, samples=values)
    assert statement_errors(insert) == []
    pk = insert.run(**values)
    assert _row(Annotation.objects.get(pk=pk)) == {"id": pk, **values}


def _prepared_here() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_statements_are_prepared_in_postgresql_once_per_connection(temporary, settings):
    study = make_study(n_items=1)
    p = working_participant(study, "PID_PREP")
    read = temporary(
        PreparedRead,
        "tests.server_prepared",
        model=Participant,
        build=lambda *, pk: Participant.objects.filter(pk=pk).values_list("pk", "prolific_pid"),
        sentinels={"pk": 2_073_000_071},
    )
    sql = read.prepared_sql(read.alias(), {"pk": p.pk})[0].replace("%s", "$1")
    settings.DB_SERVER_PREPARED = False
    assert read.rows(pk=p.pk) == [(p.pk, "PID_PREP")]
    assert sql not in _prepared_here()  # plain client-side binding
    settings.DB_SERVER_PREPARED = True
    for _ in range(3):
        assert read.rows(pk=p.pk) == [(p.pk, "PID_PREP")]
    assert _prepared_here().count(sql) == 1  # parsed and planned once, run three times


def test_a_backend_that_compiles_datetimes_to_text_binds_new_datetimes_the_same_way():
    """SQLite (the embedded demo) compiles a datetime parameter to a string: the sentinel is
    found in that form and a new datetime is adapted as the ORM would (the check failed with
    'parameters ['now'] not found' and `make demo`'s migrate stopped on it)."""
    from datetime import UTC, datetime

    from core.prepared import bind, bind_plan

    class TextOps:
        @staticmethod
        def adapt_datetimefield_value(value):
            return value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ")

    sentinel = datetime(2073, 1, 2, 3, 4, 5, 678_901, tzinfo=UTC)
    compiled = ("submitted", TextOps.adapt_datetimefield_value(sentinel), 7)
    slots = bind_plan(compiled, {"now": sentinel, "pk": 7}, TextOps)
    later = datetime(2026, 11, 28, 1, 2, 3, tzinfo=UTC)
    assert bind(compiled, slots, {"now": later, "pk": 9}) == [
        "submitted",
        "2026-11-28 01:02:03",
        9,
    ]
    with pytest.raises(Exception, match="now"):
        bind_plan(compiled, {"now": sentinel, "pk": 7})  # without the backend's adapter
