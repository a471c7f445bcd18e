"""Real browser (Playwright + Debian chromium) on the vLLM path: the admin adds a judge from the
How2Judge preset in the console (its model directory from ``HOW2JUDGE_MODEL_DIR``, here the tiny
model), a bad engine option is refused naming the field, then launches a judge run from the
console and watches it progress live to the end, worked by a real Celery worker on the gpu
queue holding the vLLM engine."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from core import polling
from judging.models import Judge, JudgeRun
from tests.benchmarks.llm.vllm_support import (
    BOUNDED,
    TINY_ENGINE,
    gpu_queue_name,
    require_vllm,
    worker_env,
)
from tests.judging.factories import make_data
from tests.support.worker import running_worker

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

N = 16


def test_how2judge_preset_then_a_live_judge_run_on_the_gpu_worker(
    page, live_server, make_user, settings, monkeypatch, tiny_model_dir, tmp_path
):
    from django.db import connections
    from django.test import Client

    from core.roles import ensure_roles

    require_vllm()
    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", 0)
    # poll every 0.3 s (no back-off) so the page shows the counter between 0 and done: with
    # chunks of 4 it stands still at 4, 8 and 12 (the offline engine answers a chunk at once;
    # polls every second and chunks of 8 once missed the one stop at 8 on a quiet machine)
    for name in ("FIRST_S", "BUSY_MOST_S", "IDLE_MOST_S"):
        monkeypatch.setattr(polling, name, 0.3)
    ensure_roles()
    queue = gpu_queue_name()
    settings.CELERY_GPU_QUEUE = queue
    settings.HOW2JUDGE_MODEL_DIR = str(tiny_model_dir)  # the preset's model directory
    data = make_data(n=N, dataset="console-vllm")
    client = Client()
    client.force_login(make_user("gpu-boss", role="admin", staff=True))
    page.context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )

    page.goto(f"{live_server.url}/admin/judging/judge/")
    page.click("text=Add How2Judge (preset)")
    page.wait_for_load_state()  # the form's values are read below: the whole page, not its start
    assert page.input_value("input[name=name]") == "how2judge"
    assert page.input_value("input[name=model]") == str(tiny_model_dir)
    assert page.input_value("select[name=backend]") == "vllm"
    assert page.input_value("select[name=endpoint]") == "completions"
    preset = json.loads(page.input_value("textarea[name=decoding]"))
    assert preset["chat_template_kwargs"] == {"enable_thinking": False}
    assert preset["max_tokens"] == 4096 and preset["temperature"] == 0.0

    page.fill("textarea[name=decoding]", json.dumps({**preset, "vllm_dtype": "fp4"}))
    page.click("input[name=_save]")
    # the click returns once the answer starts loading: wait for the refusal, not the first bytes
    # (CI once read #content while the parser was still above the decoding field)
    expect(page.locator("#content")).to_contain_text("decoding.vllm_dtype: must be one of")
    assert not Judge.objects.exists()
    tiny = {**preset, **TINY_ENGINE, **BOUNDED, "max_tokens": 80}
    page.fill("textarea[name=decoding]", json.dumps(tiny))
    page.uncheck("input[name=structured_output]")  # noise until max_tokens: a slower run
    page.click("input[name=_save]")
    judge = Judge.objects.get(name="how2judge")
    assert judge.decoding["vllm_max_model_len"] == 8192 and judge.backend == "vllm"

    env = worker_env(queue, H2R_JUDGE_CHUNK_ITEMS="4")
    with running_worker(tmp_path, queue=queue, concurrency=1, extra_env=env):
        page.goto(f"{live_server.url}/admin/judging/judgerun/launch/")
        page.select_option("select[name=judge]", str(judge.pk))
        page.select_option("select[name=dataset]", str(data["dataset"].pk))
        page.click("#preview")
        assert page.inner_text("#est-items") == str(N)
        page.click("#launch")
        page.wait_for_selector("#run-progress")
        page.evaluate("window.__stayed = true")  # a reload would lose this
        seen = set()
        for _ in range(1500):  # the engine loads first (tens of seconds on a busy CPU)
            seen.add(page.inner_text("#run-count"))
            if page.inner_text("#run-status") in ("done", "failed"):
                break
            page.wait_for_timeout(200)
        assert page.inner_text("#run-status") == "done", JudgeRun.objects.get().error
        assert page.inner_text("#run-count") == f"{N} / {N}"
        assert page.evaluate("window.__stayed") is True
        assert len(seen - {f"0 / {N}", f"{N} / {N}"}) >= 1, seen  # watched it move
    run = JudgeRun.objects.get()
    assert (run.n_done, run.n_parse_failed) == (N, N)
