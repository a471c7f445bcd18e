"""The suite's faster flush (tests/support/fast_flush.py) leaves the database as Django's does."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection

from tests.support.fast_flush import KEPT

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the faster flush is PostgreSQL's"
)


@pytest.mark.django_db(transaction=True)
def test_every_foreign_key_is_deferrable():
    """The DELETEs run in any order only because every foreign key is checked at commit."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conrelid::regclass::text, conname FROM pg_constraint"
            " WHERE contype = 'f' AND NOT condeferred"
        )
        assert cursor.fetchall() == []


@pytest.mark.django_db(transaction=True)
def test_flush_empties_every_table_it_wrote_and_only_deletes(make_user):
    from django.contrib.admin.models import LogEntry
    from django.contrib.contenttypes.models import ContentType

    user = make_user("flushed", role="researcher")
    LogEntry.objects.create(
        user=user, content_type=ContentType.objects.get_for_model(type(user)), action_flag=1
    )
    tables = connection.introspection.django_table_names(only_existing=True)
    sql = connection.ops.sql_flush(no_style(), tables)
    assert sql[0] == "SET CONSTRAINTS ALL DEFERRED;"
    assert all(s.startswith("DELETE FROM") for s in sql[1:])
    assert any('"auth_user"' in s for s in sql) and any('"django_admin_log"' in s for s in sql)
    # a user's rows are referenced (admin log → user → roles): any order passes at commit
    # as TransactionTestCase calls it (the command's own default resets sequences: TRUNCATE)
    call_command(
        "flush", interactive=False, reset_sequences=False, inhibit_post_migrate=True, verbosity=0
    )
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
            rows = cursor.fetchone()[0]
            # content types and permissions stay (post_migrate would make them again, identical)
            assert (rows > 0) if table in KEPT else (rows == 0), table
    # nothing left to delete, yet not nothing: Django's flush sends post_migrate (which makes
    # the topics and role groups again) only after some SQL — an empty list left the next
    # tests without topics
    assert connection.ops.sql_flush(no_style(), tables) == ["SET CONSTRAINTS ALL DEFERRED;"]


@pytest.mark.django_db(transaction=True)
def test_a_flush_of_an_empty_database_still_makes_the_reference_data_again():
    from benchmarks.models import Topic

    call_command(
        "flush", interactive=False, reset_sequences=False, inhibit_post_migrate=True, verbosity=0
    )
    assert not Topic.objects.exists()
    call_command("flush", interactive=False, reset_sequences=False, verbosity=0)  # a teardown's
    assert Topic.objects.count() == 14


@pytest.mark.django_db(transaction=True)
def test_a_row_committed_by_another_connection_during_the_flush_is_flushed_too(make_user):
    """A live server answering a last request commits a child row after the flush looked: the
    commit fails on the foreign key, and the flush runs again instead of failing the test."""
    from django.contrib.admin.models import LogEntry
    from django.contrib.contenttypes.models import ContentType
    from django.db import IntegrityError, transaction

    from tests.support import fast_flush

    def race():
        user = make_user("raced", role="researcher")
        tables = connection.introspection.django_table_names(only_existing=True)
        sql = connection.ops.sql_flush(no_style(), tables)  # the admin log is empty: not in it
        assert not any('"django_admin_log"' in s for s in sql)
        LogEntry.objects.create(  # committed after the flush looked, as a server's request
            user=user, content_type=ContentType.objects.get_for_model(type(user)), action_flag=1
        )
        return user, sql

    # Django's own execution of those statements fails at commit on the admin log's key
    user, sql = race()
    with pytest.raises(IntegrityError):
        fast_flush.original_execute(connection.ops, sql)
    assert transaction.get_autocommit() and LogEntry.objects.exists()
    # the suite's runs them again over every table
    connection.ops.execute_sql_flush(sql)
    assert not LogEntry.objects.exists()
    assert not type(user).objects.exists()
