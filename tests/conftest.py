"""Shared fixtures. The suite runs on PostgreSQL + Redis when DATABASE_URL / CELERY_BROKER_URL
point at them (``make test`` does), else on SQLite and the filesystem broker."""
from __future__ import annotations

import pytest

from tests.support.worker import running_worker


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """PBKDF2 costs ~0.3 s per user on this machine; tests don't need it."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """A real Celery worker process on its own queue, reading the test database."""
    with running_worker(tmp_path) as worker:
        yield worker


@pytest.fixture
def make_user(db):
    from django.contrib.auth.models import User

    def _make(username: str, *, role: str | None = None, staff: bool = False, password: str = "pw-Test-12345"):
        from config.roles import role_assign

        user = User.objects.create_user(username=username, password=password, is_staff=staff)
        if role:
            role_assign(user=user, role=role)
        if staff and not user.is_staff:  # e.g. an annotator wrongly given staff, to test refusals
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        return user

    return _make
