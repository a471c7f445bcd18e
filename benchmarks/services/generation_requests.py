"""A generation run's requests and replies: its backend config, the H.2 request for one
procedure (or a paper's protocol's) and the unsaved :class:`~benchmarks.models.Generation` built
from a reply (stop applied, steps parsed, tokens counted, scored). One home for both ways a run
is worked: its chunks (:mod:`benchmarks.services.generation_execution`) and a provider's batch
(:mod:`benchmarks.services.generation_batches`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks import generation as gen
from benchmarks import scorers as sc
from benchmarks.llm.base import LLMRequest, LLMResponse
from benchmarks.models import Generation, GenerationRun, Procedure
from benchmarks.services.generation_protocols import (
    Converter,
    protocol_generation,
    protocol_request,
)
from benchmarks.tokens import count_steps_tokens


def generation_run_backend_config(*, run: GenerationRun) -> dict[str, Any]:
    return {
        **run.backend_options,
        "backend": run.backend,
        "base_url": run.base_url,
        "model": run.model,
        "api_key_env": run.api_key_env,
        # backend_options may name the endpoint (bench: vLLM's mode, chat for API models)
        "endpoint": run.backend_options.get("endpoint")
        or ("completions" if run.variant == "base" else "chat"),
        "concurrency": run.concurrency,
    }


def generation_request(*, run: GenerationRun, procedure: Procedure) -> LLMRequest:
    if run.protocol and run.protocol != "how2everything":  # a paper's protocol (packs)
        return protocol_request(run=run, procedure=procedure)
    prompt = gen.build_prompt(
        variant=run.variant,
        goal=procedure.goal,
        resources=procedure.resources or [],
        n_steps=max(1, len(procedure.steps)),
    )
    d = run.decoding
    common = {
        "temperature": float(d.get("temperature", 0.0)),
        "max_tokens": d.get("max_tokens"),
        "top_p": d.get("top_p"),
        "stop": list(d.get("stop") or []) or None,
        "extra": dict(d.get("extra") or {}),
    }
    if run.variant == "base":
        return LLMRequest(prompt=prompt, **common)
    return LLMRequest(messages=[{"role": "user", "content": prompt}], **common)


def generation_build(
    *,
    run: GenerationRun,
    procedure: Procedure,
    response: LLMResponse,
    scorers: Sequence[sc.Scorer],
    converter: Converter | None = None,
) -> Generation:
    """An unsaved Generation from a response: stop applied, steps parsed, tokens counted, scored;
    under a paper's protocol, its answer read (and converted) as that protocol says."""
    if run.protocol and run.protocol != "how2everything":
        return protocol_generation(
            run=run, procedure=procedure, response=response, converter=converter
        )
    completion = gen.apply_stop(response.text or "", run.decoding.get("stop"))
    steps = gen.parse_steps(completion, profile=run.parse_profile).steps
    gen_tokens = count_steps_tokens(steps)
    item = sc.ScoreInput(
        predicted_steps=steps,
        reference_steps=procedure.steps,
        completion=completion,
        gen_tokens=gen_tokens,
    )
    return Generation(
        procedure=procedure,
        generator_id=run.generator_id,
        run_id=run.pk,
        model_completion=completion,
        predicted_steps=steps,
        token_count=gen_tokens,
        finish_reason=(response.finish_reason or "")[:32],
        prompt_tokens=response.prompt_tokens or None,
        completion_tokens=response.completion_tokens or None,
        scores=sc.score_example(item, scorers),
    )
