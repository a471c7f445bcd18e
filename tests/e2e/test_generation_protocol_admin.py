"""Real browser (Playwright + Debian chromium), a real Celery worker and the local
OpenAI-compatible test server: an admin adds a generation run in the console choosing a paper's
protocol (LongProc Countdown) on the launch form — a misspelt option is refused naming it —,
launches it, and the run generates with that protocol's prompt and budget."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from benchmarks.models import Dataset, Generation, GenerationRun, Generator
from tests.support.llm_fixtures import llm_server  # noqa: F401
from tests.support.worker import running_worker, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

ITEM = {"id": "f5", "numbers": [44, 48, 35, 6], "target": 25, "level": "0.5k"}
ANSWER = "<Solution>\n48 - 44 = 4\n35 - 4 = 31\n31 - 6 = 25\n</Solution>"


def test_admin_chooses_a_protocol_on_the_launch_form(
    live_server,
    make_user,
    page,
    tmp_path,
    monkeypatch,
    llm_server,  # noqa: F811
):
    from django.db import connections

    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", 0)
    llm_server.responder = lambda req: ANSWER
    path = tmp_path / "cd.jsonl"
    path.write_text(json.dumps(ITEM) + "\n")
    call_command("import_pack", "longproc-countdown", str(path), "--dataset", "cd",
                 stdout=io.StringIO())  # fmt: skip
    dataset = Dataset.objects.get(name="cd")
    generator = Generator.objects.create(name="ui-gen")
    make_user("boss", role="admin", staff=True, password="pw-Test-12345")
    page.goto(f"{live_server.url}/admin/login/?next=/admin/benchmarks/generationrun/add/")
    page.fill("input[name=username]", "boss")
    page.fill("input[name=password]", "pw-Test-12345")
    page.locator("input[type=submit]").click()
    page.select_option("select[name=generator]", str(generator.pk))
    page.select_option("select[name=dataset]", str(dataset.pk))
    protocol = page.locator("select[name=protocol]")
    expect(protocol).to_have_value("how2everything")
    protocol.select_option("longproc-countdown")
    page.fill("input[name=model]", "test-model")
    page.fill("input[name=base_url]", llm_server.base_url)
    page.fill("textarea[name=protocol_options]", '{"levle": "2k"}')
    page.locator("input[name=_save]").click()
    expect(page.locator(".errornote, .errorlist").first).to_be_visible()
    expect(page.locator("body")).to_contain_text("unknown option(s) levle for longproc-countdown")
    page.fill("textarea[name=protocol_options]", '{"buffer": 250}')
    page.locator("input[name=_save]").click()
    expect(page.locator(".messagelist")).to_contain_text("select it and use “Launch”")
    run = GenerationRun.objects.get()
    assert (run.protocol, run.protocol_options["buffer"]) == ("longproc-countdown", 250)
    with running_worker(tmp_path, concurrency=1) as worker:
        page.locator(f"input[name=_selected_action][value='{run.pk}']").check()
        page.select_option("select[name=action]", "launch_runs")
        page.locator("button[name=index]").click()
        expect(page.locator(".messagelist")).to_contain_text(
            re.compile(f"run {run.pk} launched", re.IGNORECASE)
        )
        wait_for(
            lambda: GenerationRun.objects.get(pk=run.pk).status == "done",
            timeout=60,
            message=f"run done; log:\n{worker.log()[-2000:]}",
        )
    assert llm_server.requests[0].body["max_tokens"] == 750  # 0.5K + the 250 buffer
    assert "Numbers: 44, 48, 35, 6" in llm_server.requests[0].prompt_text
    g = Generation.objects.get(run=run)
    assert g.payload["protocol"]["extracted"].split()[-1] == "25"
    page.goto(f"{live_server.url}/admin/benchmarks/generationrun/{run.pk}/change/")
    expect(page.locator("body")).to_contain_text("longproc-countdown")
