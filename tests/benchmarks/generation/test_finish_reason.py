"""Generation runs keep each reply's finish_reason and token counts on its Generation (LongProc
scores termination from them), through the real openai client and the local test server."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from benchmarks.models import Generation
from tests.benchmarks.generation.conftest import steps_responder


@pytest.mark.usefixtures("small_dataset")
def test_generation_run_stores_finish_reason_and_tokens(llm_server):
    def responder(req):
        reply = steps_responder(req)
        if len(llm_server.requests) == 1:  # the first request is cut off at max_tokens
            reply["finish_reason"] = "length"
        return reply

    llm_server.responder = responder
    call_command(
        "run_generation", "--generator", "fr-gen", "--dataset", "gen-test@v1",
        "--base-url", llm_server.base_url, "--model", "test-model", "--variant", "instruct",
        "--inline", "--backend-options", '{"timeout_s": 5, "max_retries": 0}',
        stdout=StringIO(),
    )  # fmt: skip
    gens = list(Generation.objects.filter(generator__name="fr-gen"))
    assert len(gens) == 5
    reasons = sorted(g.finish_reason for g in gens)
    assert reasons.count("length") >= 1 and reasons.count("stop") >= 1
    assert set(reasons) == {"length", "stop"}
    for g in gens:
        assert g.prompt_tokens == 100
        assert g.completion_tokens == 10 * len(g.predicted_steps)
