import pytest

from tests.judging.factories import comparison_scenario, ranking_scenario
from tests.judging.support import judge_responder
from tests.support.batch_server import BatchTestServer
from tests.support.llm_fixtures import llm_backend_config, llm_server  # noqa: F401


@pytest.fixture
def roles(db):
    """The role groups (a transactional test starts from an emptied database)."""
    from core.roles import ensure_roles

    ensure_roles()


@pytest.fixture
def enqueued(monkeypatch):
    """Record the runs the engine enqueues instead of sending them to a broker."""
    calls: list[int] = []
    monkeypatch.setattr(
        "core.runs.engine.enqueue", lambda run, countdown=None: calls.append(run.pk)
    )
    return calls


@pytest.fixture
def scenario(db):
    """A study of 6 items labelled by 3 annotators, and judges A, B and C
    (:func:`tests.judging.factories.comparison_scenario`)."""
    return comparison_scenario()


@pytest.fixture
def generators_scenario(db):
    """Three generators ranked by two judges (:func:`tests.judging.factories.ranking_scenario`)."""
    return ranking_scenario()


@pytest.fixture
def batch_server():
    """The local Batch API server (:class:`tests.support.batch_server.BatchTestServer`)."""
    with BatchTestServer(responder=judge_responder) as s:
        yield s


@pytest.fixture
def sent(monkeypatch):
    """The runs the engine enqueues (any lane), recorded instead of sent to a broker."""
    calls: list[int] = []
    monkeypatch.setattr(
        "core.runs.engine.enqueue", lambda run, countdown=None, lane=None: calls.append(run.pk)
    )
    return calls
