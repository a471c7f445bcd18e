"""``manage.py bench judge --config X.yaml`` with the reference's evaluator keys
(``backend: vllm``, ``model: <local model directory>``, ``vllm: {mode, engine_kwargs,
sampling_kwargs, …}``) judges with vLLM offline — here on the tiny model, in this process."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from benchmarks.llm import vllm_offline
from judging.models import Judge, JudgeRun
from tests.benchmarks.llm.vllm_support import require_vllm

IDS = ("ex-1", "ex-2", "ex-3")


@pytest.mark.django_db(transaction=True)
def test_bench_judge_with_a_vllm_evaluator_on_a_local_model(tiny_model_dir, tmp_path):
    require_vllm()
    generations = tmp_path / "generations.jsonl"
    generations.write_text(
        "".join(
            json.dumps(
                {
                    "source_example_id": ident,
                    "topic": "Food & Dining",
                    "goal": f"Bake soda bread ({ident}).",
                    "steps": ["Mix flour and soda.", "Add buttermilk.", "Bake 40 minutes."],
                    "resources": ["oven"],
                    "predicted_steps": ["Mix flour.", "Add water.", "Bake 5 minutes."],
                }
            )
            + "\n"
            for ident in IDS
        )
    )
    config = tmp_path / "judge.yaml"
    config.write_text(
        f"""
out_root: {tmp_path / "out"}
paths:
  generations: {generations}
evaluator:
  backend: vllm
  model: {tiny_model_dir}
  temperature: 0.0
  max_new_tokens: 400
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
      json_max_string_length: 120
      json_max_items: 2
"""
    )
    out = StringIO()
    try:
        call_command("bench", "judge", "--config", str(config), "--inline", stdout=out)
    finally:
        vllm_offline.shutdown_engine()
    judge = Judge.objects.get()
    assert (judge.backend, judge.model, judge.endpoint) == ("vllm", str(tiny_model_dir), "chat")
    assert judge.decoding["vllm_max_model_len"] == 8192
    assert judge.decoding["chat_template_kwargs"] == {"enable_thinking": False}
    run = JudgeRun.objects.get(judge=judge)
    assert (run.status, run.n_done, run.n_parse_failed) == ("done", 3, 0), run.error
    [path] = (tmp_path / "out" / "judgments").glob("*/judgments.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert sorted(r["source_example_id"] for r in records) == list(IDS)
    assert all(r["parse_failed"] is False and "critical_failures" in r for r in records)
