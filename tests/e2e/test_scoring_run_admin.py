"""Real browser (Playwright + Debian chromium) and a real Celery worker: an admin adds a scoring
run in the console, launches it with the "Launch" action, and reads the pack's summary once the
worker has scored every generation."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from benchmarks.models import Dataset, Generator, ScoringRun
from tests.support.worker import running_worker, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]
FIXTURE = Path(__file__).resolve().parents[2] / "demo" / "fixtures" / "packs" / "procbench.jsonl"


def test_admin_adds_and_launches_a_scoring_run(live_server, make_user, page, tmp_path, monkeypatch):
    from django.db import connections

    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", 0)
    call_command("import_pack", "procbench", str(FIXTURE), "--dataset", "pb", "--generator", "m",
                 stdout=io.StringIO())  # fmt: skip
    dataset, generator = Dataset.objects.get(name="pb"), Generator.objects.get(name="m")
    make_user("boss", role="admin", staff=True, password="pw-Test-12345")
    page.goto(f"{live_server.url}/admin/login/?next=/admin/benchmarks/scoringrun/add/")
    page.fill("input[name=username]", "boss")
    page.fill("input[name=password]", "pw-Test-12345")
    page.locator("input[type=submit]").click()
    page.select_option("select[name=generator]", str(generator.pk))
    page.select_option("select[name=dataset]", str(dataset.pk))
    page.select_option("select[name=pack]", "procbench")
    page.fill("textarea[name=options]", '{"nope": 1}')
    page.locator("input[name=_save]").click()
    expect(page.locator(".errornote, .errorlist").first).to_be_visible()
    expect(page.locator("body")).to_contain_text("options: unknown nope for procbench")
    page.fill("textarea[name=options]", "{}")
    page.locator("input[name=_save]").click()
    expect(page.locator(".messagelist")).to_contain_text("select it and use “Launch”")
    run = ScoringRun.objects.get()
    with running_worker(tmp_path, concurrency=1) as worker:
        page.locator(f"input[name=_selected_action][value='{run.pk}']").check()
        page.select_option("select[name=action]", "launch_runs")
        page.locator("button[name=index]").click()
        launched = re.compile(f"scoring run {run.pk} launched", re.IGNORECASE)  # admin CSS
        expect(page.locator(".messagelist")).to_contain_text(launched)
        wait_for(
            lambda: ScoringRun.objects.get(pk=run.pk).status == "done",
            timeout=60,
            message=f"run done; log:\n{worker.log()[-2000:]}",
        )
    page.goto(f"{live_server.url}/admin/benchmarks/scoringrun/{run.pk}/change/")
    body = page.locator("body")
    expect(body).to_contain_text("3/3")
    expect(body).to_contain_text('"pml": 5.333')
