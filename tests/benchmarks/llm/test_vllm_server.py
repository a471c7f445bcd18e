"""vLLM's OpenAI-compatible server for real (the production path for How2Judge behind
``vllm serve``): the server runs the tiny model in a subprocess, started once per session; a judge
run goes through a real Celery worker and the ``openai`` client to it."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from benchmarks.llm.base import LLMRequest, LLMResponse
from benchmarks.llm.registry import build_backend, queue_for
from benchmarks.llm.schema import bounded_schema
from judging.models import JudgeRun, Judgment
from judging.prompting import JUDGE_SCHEMA
from judging.services import judges as judge_services
from judging.services import runs as services
from tests.benchmarks.llm.vllm_support import BOUNDED
from tests.judging.factories import make_data
from tests.support.worker import running_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_judge_run_against_the_vllm_server_through_a_worker(vllm_server, tmp_path):
    data = make_data(n=8, dataset="served")
    judge = judge_services.judge_create(
        name="tiny-served",
        backend="openai",
        base_url=vllm_server.base_url,
        model=vllm_server.model,
        endpoint="chat",
        concurrency=4,
        timeout_s=120,
        max_retries=1,
        decoding={**BOUNDED, "top_k": 5, "chat_template_kwargs": {"enable_thinking": False}},
    )
    assert queue_for(judge.backend_config()) is None  # HTTP judges stay on the default queue
    with running_worker(tmp_path, concurrency=1) as worker:
        with transaction.atomic():
            run = services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
        wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).status in ("done", "failed"),
            timeout=240,
            message=f"served run; worker log:\n{worker.log()[-3000:]}",
        )
    run.refresh_from_db()
    assert (run.status, run.n_done, run.n_parse_failed) == ("done", 8, 0), run.error
    for j in Judgment.objects.filter(judge=judge):  # the server's guided decoding held
        assert set(json.loads(j.raw_output)) == {"reasoning", "critical_failures"}
        assert j.prompt_tokens > 1000 and j.completion_tokens > 0  # usage from the server


def test_completions_endpoint_with_structured_outputs_in_the_body(vllm_server):
    backend = build_backend(
        {
            "backend": "openai",
            "base_url": vllm_server.base_url,
            "model": vllm_server.model,
            "endpoint": "completions",
            "max_retries": 0,
        }
    )
    schema = bounded_schema(JUDGE_SCHEMA, max_string_length=60, max_items=1)
    results = backend.complete_many(
        [LLMRequest(prompt=f"Judge {i}:", max_tokens=200, json_schema=schema) for i in range(4)]
    )
    assert all(isinstance(r, LLMResponse) for r in results), results
    assert all(len(json.loads(r.text)["reasoning"]) <= 60 for r in results)
    too_long = backend.complete_many([LLMRequest(prompt="step " * 9000, max_tokens=4)])[0]
    assert not isinstance(too_long, LLMResponse) and too_long.status == 400
    assert "maximum" in str(too_long) or "too long" in str(too_long)
