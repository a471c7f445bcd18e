from __future__ import annotations

import pytest

from tests.mining.script import MiningScript
from tests.support.llm_fixtures import llm_backend_config, llm_server  # noqa: F401


@pytest.fixture
def script(llm_server):  # noqa: F811
    s = MiningScript()
    llm_server.responder = s
    return s


@pytest.fixture
def mining_backends(llm_backend_config, script):  # noqa: F811
    return {"default": dict(llm_backend_config, price_in_per_mtok=2.0, price_out_per_mtok=8.0)}


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def eager_celery():
    """Celery tasks run in the calling process, at once."""
    from config.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous
