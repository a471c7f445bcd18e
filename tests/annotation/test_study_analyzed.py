"""A study's creation analyzes the table it bulk-fills (its items), as one does after a bulk
load: the planner knows the table's real size before the first annotator asks for an item."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import StudyItem
from annotation.services.study import study_create
from tests.annotation.factories import make_generations

pytestmark = pytest.mark.django_db


def _table_stats() -> tuple[float, object]:
    table = StudyItem._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # no stats cached by this transaction
        cursor.execute(
            "SELECT c.reltuples, s.last_analyze FROM pg_class c "
            "JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.relname = %s",
            [table],
        )
        return cursor.fetchone()


def test_creating_a_study_analyzes_its_items_table():
    assert connection.vendor == "postgresql"
    gens = make_generations(37)
    started = timezone.now() - timedelta(seconds=1)
    study_create(name="Analyzed", generation_ids=[g.pk for g in gens], overlap=1)
    reltuples, last_analyze = _table_stats()
    # the planner's row count is the table's, counted by ANALYZE (rows of rolled-back tests
    # elsewhere are dead, not counted); before any ANALYZE it is -1
    assert reltuples == StudyItem.objects.count() >= 37
    assert last_analyze is not None and last_analyze >= started


def test_a_second_study_updates_the_count():
    first = make_generations(5, prefix="a")
    study_create(name="First", generation_ids=[g.pk for g in first], overlap=1)
    assert _table_stats()[0] == StudyItem.objects.count()
    more = make_generations(60, prefix="b")
    study_create(name="Second", generation_ids=[g.pk for g in more], overlap=1)
    assert _table_stats()[0] == StudyItem.objects.count() >= 65
