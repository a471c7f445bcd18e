"""GenerationRun admin: create through the form (service validation), launch and cancel
actions, roles. benchmarks/admin/generation_runs.py is imported here explicitly (benchmarks/admin
imports it too), and the URLconf reloaded."""

from __future__ import annotations

import importlib
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib import admin
from django.urls import clear_url_caches, reverse
from django.utils import timezone

from benchmarks.models import GenerationRun


@pytest.fixture
def admin_urls():
    import benchmarks.admin.generation_runs  # noqa: F401  (registers GenerationRun on import)
    import config.urls

    assert admin.site.is_registered(GenerationRun)

    importlib.reload(config.urls)
    clear_url_caches()
    yield
    clear_url_caches()


def add_payload(dataset, generator, **over):
    data = {
        "generator": generator.pk,
        "dataset": dataset.pk,
        "variant": "instruct",
        "backend": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "m1",
        "api_key_env": "",
        "decoding": '{"max_tokens": 64}',
        "parse_profile": "reference",
        "backend_options": "{}",
        "concurrency": 4,
        "chunk_size": 8,
        "scorers": "[]",
        "input_price_per_mtok": "1",
        "output_price_per_mtok": "2",
    }
    data.update(over)
    return data


def test_admin_creates_launches_and_cancels(
    admin_urls,
    client,
    make_user,
    small_dataset,
    generator,
    django_capture_on_commit_callbacks,
    llm_server,
):
    dataset, topics, _ = small_dataset
    user = make_user("boss", role="admin", staff=True)
    client.force_login(user)
    add_url = reverse("admin:benchmarks_generationrun_add")

    bad = client.post(add_url, add_payload(dataset, generator, decoding='{"temprature": 1}'))
    assert bad.status_code == 200 and "decoding: unknown key(s) temprature" in bad.content.decode()
    assert not GenerationRun.objects.exists()

    # launching checks that the server answers: the local test server
    resp = client.post(
        add_url,
        add_payload(dataset, generator, topics=[topics[0].pk], base_url=llm_server.base_url),
    )
    assert resp.status_code == 302, resp.content.decode()[:2000]
    run = GenerationRun.objects.get()
    assert (
        run.status == "queued" and run.created_by == user and list(run.topics.all()) == [topics[0]]
    )
    assert run.decoding == {"temperature": 0.0, "max_tokens": 64, "stop": []} and run.n_total == 3

    changelist = reverse("admin:benchmarks_generationrun_changelist")
    with (
        mock.patch("core.tasks.run_chunk.apply_async") as apply_async,
        django_capture_on_commit_callbacks(execute=True),
    ):
        client.post(changelist, {"action": "launch_runs", "_selected_action": [run.pk]})
    run.refresh_from_db()
    assert run.status == "queued"
    apply_async.assert_called_once_with(
        ("benchmarks.GenerationRun", run.pk), countdown=None, queue=None
    )

    # a worker picks it up; launching again while it is alive does nothing
    GenerationRun.objects.filter(pk=run.pk).update(
        status="running", lease_owner="worker", heartbeat_at=timezone.now()
    )
    with mock.patch("core.tasks.run_chunk.apply_async") as apply_async:
        resp = client.post(
            changelist, {"action": "launch_runs", "_selected_action": [run.pk]}, follow=True
        )
    apply_async.assert_not_called()
    assert "its worker is alive" in resp.content.decode()

    change_url = reverse("admin:benchmarks_generationrun_change", args=[run.pk])
    page = client.get(change_url).content.decode()
    assert "<progress" in page and "m1" in page
    assert "alive (last heartbeat" in page and "takes the run over" not in page

    client.post(changelist, {"action": "cancel_runs", "_selected_action": [run.pk]})
    run.refresh_from_db()
    assert run.status == "cancelling"

    # the worker died: the page offers to take the run over, and Launch does
    GenerationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert "“Launch” takes the run over" in client.get(change_url).content.decode()
    with (
        mock.patch("core.tasks.run_chunk.apply_async") as apply_async,
        django_capture_on_commit_callbacks(execute=True),
    ):
        resp = client.post(
            changelist, {"action": "launch_runs", "_selected_action": [run.pk]}, follow=True
        )
    assert f"Run {run.pk} taken over (3 to go)" in resp.content.decode()  # capfirst
    run.refresh_from_db()
    assert (run.status, run.lease_owner) == ("queued", "")
    apply_async.assert_called_once()


def test_researcher_sees_runs_but_cannot_launch(
    admin_urls, client, make_user, small_dataset, generator
):
    dataset, _, _ = small_dataset
    from benchmarks.services.generation_runs import generation_run_create

    run = generation_run_create(generator=generator, dataset=dataset, model="m", start=False)
    client.force_login(make_user("reader", role="researcher", staff=True))
    changelist = reverse("admin:benchmarks_generationrun_changelist")
    page = client.get(changelist)
    assert page.status_code == 200 and "launch_runs" not in page.content.decode()
    client.post(changelist, {"action": "launch_runs", "_selected_action": [run.pk]})
    run.refresh_from_db()
    assert run.status == "queued"
    assert client.get(reverse("admin:benchmarks_generationrun_add")).status_code == 403


def test_run_page_polls_live_status_and_offers_take_over_only_when_stale(
    admin_urls, client, make_user, small_dataset, generator
):
    dataset, _, _ = small_dataset
    from benchmarks.services.generation_runs import generation_run_create

    run = generation_run_create(generator=generator, dataset=dataset, model="m", start=False)
    client.force_login(make_user("reader", role="researcher", staff=True))
    page = client.get(reverse("admin:benchmarks_generationrun_change", args=[run.pk]))
    live_url = reverse("admin:benchmarks_generationrun_live", args=[run.pk])
    html = page.content.decode()
    assert f'hx-get="{live_url}"' in html and 'hx-trigger="every 1s"' in html
    assert '<span id="genrun-status">queued</span>' in html

    # a worker holds it with a fresh heartbeat: the partial shows running, no take over
    GenerationRun.objects.filter(pk=run.pk).update(
        status="running", lease_owner="w", heartbeat_at=timezone.now(), n_done=2
    )
    live = client.get(live_url).content.decode()
    assert '<span id="genrun-status">running</span>' in live and "genrun-worker-gone" not in live
    assert '<span id="genrun-count">2 / ' in live
    # the heartbeat went stale: now the page says the run can be taken over
    GenerationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert "genrun-worker-gone" in client.get(live_url).content.decode()
    # finished: the partial stops polling
    GenerationRun.objects.filter(pk=run.pk).update(status="done", lease_owner="")
    done = client.get(live_url).content.decode()
    assert "hx-get" not in done and '<span id="genrun-status">done</span>' in done
