"""Shared fixtures. The suite runs on PostgreSQL + Redis when DATABASE_URL / CELERY_BROKER_URL
point at them (``make test`` does), else on SQLite and the filesystem broker."""
from __future__ import annotations

import pytest

from tests.support.worker import running_worker


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """A real Celery worker process on its own queue, reading the test database."""
    with running_worker(tmp_path) as worker:
        yield worker


@pytest.fixture
def make_user(db):
    from django.contrib.auth.models import Group, User

    def _make(username: str, *, role: str | None = None, staff: bool = False, password: str = "pw-Test-12345"):
        user = User.objects.create_user(username=username, password=password, is_staff=staff)
        if role:
            user.groups.add(Group.objects.get(name=role))
        return user

    return _make
