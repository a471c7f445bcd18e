"""A large study's agreement report is computed out of the request: the page says it is being
computed (in words, with a link to refresh) and enqueues one computation per study; a worker
computes and stores it; then the page shows it, and after new labels the last report is shown
marked as being recomputed. Small studies keep computing in the request."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import override_settings
from django.urls import reverse

from annotation.models import AttentionCheckResult
from annotation.selectors import report as rs
from annotation.tasks import study_report_compute
from tests.support.redis_server import OwnRedis
from tests.support.worker import running_worker, wait_for


@pytest.fixture
def large(monkeypatch):
    """Every study counts as large: its report is never computed in a request."""
    monkeypatch.setattr(rs, "REPORT_IN_REQUEST_MAX_LABELS", 0)
    enqueued: list[int] = []
    for module in ("annotation.pages.report", "annotation.api.report"):
        monkeypatch.setattr(f"{module}.enqueue_study_report", enqueued.append)
    return enqueued


def test_small_study_report_is_computed_in_the_request(labelled_study, researcher_client):
    cache.clear()
    page = researcher_client.get(reverse("annotation:report", args=[labelled_study.pk]))
    html = page.content.decode()
    assert 'id="stat-alpha"' in html and 'id="report-computing"' not in html


def test_large_study_report_waits_for_its_computation_then_shows(
    labelled_study, researcher_client, large
):
    cache.clear()
    url = reverse("annotation:report", args=[labelled_study.pk])
    first = researcher_client.get(url).content.decode()
    assert 'role="status" id="report-computing"' in first
    assert "is being computed" in first and "18 labels" in first
    assert f'href="{url}">refresh now</a>' in first and 'id="stat-alpha"' not in first
    partial = researcher_client.get(reverse("annotation:report_partial", args=[labelled_study.pk]))
    assert 'id="report-computing"' in partial.content.decode()
    api = researcher_client.get(reverse("annotation_api:report", args=[labelled_study.pk]))
    assert api.status_code == 202 and api.json()["status"] == "computing"
    assert large == [labelled_study.pk]  # one computation at a time per study

    assert study_report_compute(labelled_study.pk).startswith("computed")
    shown = researcher_client.get(url).content.decode()
    assert 'id="stat-alpha"' in shown and 'id="report-computing"' not in shown
    expected = rs.study_report(study=labelled_study, use_cache=False)["alpha"]["value"]
    assert f"{expected:.3f}" in shown
    assert researcher_client.get(reverse("annotation_api:report", args=[labelled_study.pk])).json()[
        "alpha"
    ]["value"] == pytest.approx(expected)

    # a new attention check changes the study: the last report stays shown, marked, and one
    # more computation is enqueued (the lock was released when the first one ended)
    p = labelled_study.participants_by_name["B"]
    AttentionCheckResult.objects.create(participant=p, kind="planted", passed=False)
    stale = researcher_client.get(url).content.decode()
    assert 'id="report-computing"' in stale and "the last report counted" in stale
    assert 'id="stat-alpha"' in stale
    assert large == [labelled_study.pk, labelled_study.pk]


def test_the_lock_is_released_when_the_computation_fails(labelled_study, large, monkeypatch):
    cache.clear()
    assert rs.ready_study_report(study=labelled_study, enqueue=large.append).report is None
    assert cache.get(rs.report_lock_key(labelled_study.pk))

    def fail(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(rs, "study_report", fail)
    with pytest.raises(RuntimeError):
        study_report_compute(labelled_study.pk)
    assert cache.get(rs.report_lock_key(labelled_study.pk)) is None


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_computes_the_large_report_the_page_asked_for(
    labelled_study, researcher_client, monkeypatch, tmp_path
):
    """The page enqueues the real task; a real worker process sharing the Redis cache computes
    and stores the report; the page then shows it."""
    monkeypatch.setattr(rs, "REPORT_IN_REQUEST_MAX_LABELS", 0)
    url = reverse("annotation:report", args=[labelled_study.pk])
    with OwnRedis() as redis_server:  # the cache the page and the worker share
        redis_cache = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": redis_server.url,
            }
        }
        with (
            override_settings(CACHES=redis_cache),
            running_worker(tmp_path, extra_env={"CACHE_URL": redis_server.url}) as w,
        ):
            first = researcher_client.get(url).content.decode()
            assert 'id="report-computing"' in first
            shown = wait_for(
                lambda: (
                    'id="stat-alpha"' in (html := researcher_client.get(url).content.decode())
                    and html
                ),
                timeout=60,
                message=f"the report; worker log:\n{w.log()[-3000:]}",
            )
            assert 'id="report-computing"' not in shown
            assert "annotation.study_report_compute" in w.log()


def test_pages_listing_studies_never_compute_a_large_report_in_the_request(
    labelled_study, researcher_client, monkeypatch
):
    """The rounds page and the codebook versions page show each study's α: a large study's
    comes from the worker (said in words while it is computed), never from the request."""
    cache.clear()
    monkeypatch.setattr(rs, "REPORT_IN_REQUEST_MAX_LABELS", 0)
    enqueued: list[int] = []
    for view in ("rounds", "codebook_versions"):
        monkeypatch.setattr(f"annotation.views.{view}.enqueue_study_report", enqueued.append)
    built = []
    real_build = rs.build_report
    monkeypatch.setattr(rs, "build_report", lambda *a, **k: built.append(1) or real_build(*a, **k))
    rounds = researcher_client.get(reverse("annotation:rounds", args=[labelled_study.pk]))
    versions = researcher_client.get(reverse("annotation:codebook_versions"))
    assert rounds.status_code == versions.status_code == 200
    assert "being computed by a worker" in rounds.content.decode()
    assert "being computed by a worker" in versions.content.decode()
    assert built == [] and enqueued == [labelled_study.pk]  # one computation, by the worker

    assert study_report_compute(labelled_study.pk).startswith("computed")
    expected = rs.study_report(study=labelled_study, use_cache=False)["alpha"]["value"]
    for url in (
        reverse("annotation:rounds", args=[labelled_study.pk]),
        reverse("annotation:codebook_versions"),
    ):
        html = researcher_client.get(url).content.decode()
        assert "being computed" not in html and f"{expected:.3f}" in html, url
