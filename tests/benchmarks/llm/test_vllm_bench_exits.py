"""``manage.py bench judge --inline`` with a vLLM evaluator (the tiny model) as its own process:
it writes its judgments and aggregate, shuts the engine down and exits with 0, within a bound
of its last file written (it used to write everything and then never exit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.benchmarks.llm.vllm_support import require_vllm
from tests.support.tiny_model import VLLM_ENV
from tests.support.worker import ROOT, database_url_for_current_connection

EXIT_AFTER_FILES_S = 60  # from the last file written to the process's end (a loaded machine)
WHOLE_S = 480  # the whole command on 2 loaded CPU cores (engine load included)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("multiprocessing", ["0", "1"])  # engine core in this process or its own
def test_bench_judge_inline_with_vllm_exits_once_its_files_are_written(
    tiny_model_dir, tmp_path, settings, multiprocessing
):
    require_vllm()
    generations = tmp_path / "generations.jsonl"
    generations.write_text(
        "".join(
            json.dumps(
                {
                    "source_example_id": f"ex-{i}",
                    "topic": "Food & Dining",
                    "goal": f"Bake soda bread ({i}).",
                    "steps": ["Mix flour and soda.", "Add buttermilk.", "Bake 40 minutes."],
                    "resources": ["oven"],
                    "predicted_steps": ["Mix flour.", "Add water.", "Bake 5 minutes."],
                }
            )
            + "\n"
            for i in range(2)
        )
    )
    out = tmp_path / "out"
    config = tmp_path / "judge.yaml"
    config.write_text(
        f"""
out_root: {out}
paths:
  generations: {generations}
evaluator:
  backend: vllm
  model: {tiny_model_dir}
  temperature: 0.0
  max_new_tokens: 200
  vllm:
    mode: chat
    chat_template_kwargs: {{enable_thinking: false}}
    engine_kwargs:
      dtype: float32
      max_model_len: 8192
      enforce_eager: true
      structured_outputs_config: {{backend: guidance, disable_any_whitespace: true}}
    sampling_kwargs:
      seed: 0
      json_max_string_length: 60
      json_max_items: 1
"""
    )
    env = {
        **os.environ,
        **VLLM_ENV,
        "DATABASE_URL": database_url_for_current_connection(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "VLLM_ENABLE_V1_MULTIPROCESSING": multiprocessing,
    }
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "bench", "judge", "--config", str(config), "--inline"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        output, _ = proc.communicate(timeout=WHOLE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        output, _ = proc.communicate()
        files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
        pytest.fail(
            f"bench did not exit within {WHOLE_S} s; files written: {files}\n{output[-3000:]}"
        )
    ended = time.time()
    assert proc.returncode == 0, output[-3000:]
    files = [p for p in out.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert "judgments.jsonl" in names, (names, output[-2000:])
    last_write = max(p.stat().st_mtime for p in files)
    lag = ended - last_write
    print(
        f"bench judge --inline (vLLM, multiprocessing {multiprocessing}): "
        f"{time.monotonic() - started:.1f} s in all, exited {lag:.1f} s after its last file"
    )
    assert lag <= EXIT_AFTER_FILES_S, lag
    [path] = (out / "judgments").glob("*/judgments.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert sorted(r["source_example_id"] for r in records) == ["ex-0", "ex-1"]
