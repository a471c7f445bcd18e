"""A generation run's paper protocol (:mod:`benchmarks.packs.protocols`) applied to its items:
the checks at creation, the request for one procedure, and the generation built from a reply —
with, for ProcBench free text, the conversion step through the run's backend and the conversion
model. The default protocol (``how2everything``) never comes here.

What is stored per output (``Generation``): the raw reply in ``model_completion``, its
``finish_reason``, the steps shown on the pages in ``predicted_steps`` and, in ``payload``, the
pack's output fields (ProcBench ``prediction``: the converted JSON; CustomPlans ``edits``)
plus ``payload["protocol"]``: the extracted or converted answer and how it was obtained.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.llm.base import LLMBackend, LLMError, LLMRequest, LLMResponse
from benchmarks.llm.batch import is_batch
from benchmarks.llm.registry import build_backend
from benchmarks.models import Generation, GenerationRun, Procedure
from benchmarks.packs.protocols import (
    DEFAULT_PROTOCOL,
    Protocol,
    ProtocolError,
    ProtocolRequest,
    get_protocol,
)
from benchmarks.tokens import count_steps_tokens

MAX_ITEM_CHECKS = 100_000  # items checked at creation (every one of any real selection)


def protocol_of(run: GenerationRun) -> Protocol | None:
    return get_protocol(run.protocol or DEFAULT_PROTOCOL)


def item_of(procedure: Procedure) -> dict[str, Any]:
    """The protocol's view of an item: the pack's gold record (``payload``) with the id, the
    goal and the reference steps (CustomPlans' original procedure when the payload has none)."""
    return {
        "id": procedure.source_example_id,
        "goal": procedure.goal,
        "steps": list(procedure.steps or []),
        **(procedure.payload or {}),
    }


def protocol_check(
    *,
    protocol: str,
    options: Any,
    variant: str | None,
    backend_config: Mapping[str, Any],
    procedures=None,
) -> tuple[dict[str, Any], str]:
    """The run's protocol options over its defaults, and the variant to use (protocols send
    chat prompts: ``instruct``). ``ProtocolError`` naming the field: an unknown protocol or
    option, a base variant, a conversion step with a provider batch, or the first item of the
    selection (``procedures``) whose fields the prompt cannot be built from."""
    proto = get_protocol(protocol or DEFAULT_PROTOCOL)
    if proto is None:
        if options:
            raise ProtocolError(
                "the how2everything protocol has no options", field="protocol_options"
            )
        return {}, variant or ""
    opts = proto.options(options)
    if variant == "base":
        raise ProtocolError(
            f"the {proto.name} protocol sends chat prompts: use the instruct variant",
            field="variant",
        )
    if proto.needs_conversion(opts) and is_batch(dict(backend_config)):
        raise ProtocolError(
            f"the {proto.name} free-text conversion calls the model once per answer: "
            "use an online backend, or answer_format json",
            field="protocol_options",
        )
    if procedures is not None:
        for procedure in procedures.order_by("pk")[:MAX_ITEM_CHECKS].iterator():
            try:
                proto.request(item_of(procedure), opts)
            except ProtocolError as exc:
                where = f"item {procedure.source_example_id!r}"
                if exc.field:
                    where += f", field '{exc.field}'"
                raise ProtocolError(f"{where}: {exc.message}") from None
    return opts, "instruct"


def _given(decoding: Mapping[str, Any], key: str, default: Any) -> Any:
    value = decoding.get(key)
    return default if value is None else value


def llm_request(req: ProtocolRequest, decoding: Mapping[str, Any]) -> LLMRequest:
    """The backend request; the run's own decoding, when set, wins over the protocol's
    (``max_tokens`` above all: the budget is the protocol's unless the run names one)."""
    return LLMRequest(
        messages=req.messages,
        max_tokens=decoding.get("max_tokens") or req.max_tokens,
        temperature=float(_given(decoding, "temperature", req.temperature)),
        top_p=_given(decoding, "top_p", req.top_p),
        stop=list(decoding.get("stop") or []) or None,
        json_schema=req.json_schema,
        json_schema_name=req.json_schema_name,
        extra={**req.extra, **dict(decoding.get("extra") or {})},
    )


def protocol_request(*, run: GenerationRun, procedure: Procedure) -> LLMRequest:
    proto = protocol_of(run)
    options = proto.options(run.protocol_options)
    return llm_request(proto.request(item_of(procedure), options), run.decoding or {})


class Converter:
    """The conversion step of a run (ProcBench free text): one request per answer, to the
    run's backend with the conversion model (default: the run's model)."""

    def __init__(self, run: GenerationRun, backend_config: Mapping[str, Any]) -> None:
        self.run = run
        self.backend_config = dict(backend_config)
        self._backend: LLMBackend | None = None

    @property
    def model(self) -> str:
        options = protocol_of(self.run).options(self.run.protocol_options)
        return options.get("conversion_model") or self.run.model

    def backend(self) -> LLMBackend:
        if self._backend is None:
            config = {**self.backend_config, "model": self.model, "endpoint": "chat"}
            if isinstance(config.get("inner"), dict):  # ``record``: the recorded backend's model
                config["inner"] = {**config["inner"], "model": self.model, "endpoint": "chat"}
            self._backend = build_backend(config)
        return self._backend

    def convert(self, request: LLMRequest) -> LLMResponse:
        return self.backend().complete(request)

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()


def protocol_generation(
    *,
    run: GenerationRun,
    procedure: Procedure,
    response: LLMResponse,
    converter: Converter | None = None,
) -> Generation:
    """An unsaved Generation from a reply under the run's protocol; the conversion step (when
    the protocol has one) goes through ``converter`` and raises :class:`LLMError` when it
    fails for good (the reply then counts as failed and is asked again on resume)."""
    proto = protocol_of(run)
    options = proto.options(run.protocol_options)
    item = item_of(procedure)
    raw = response.text or ""
    if proto.needs_conversion(options):
        if converter is None:
            raise LLMError("the conversion step needs an online backend")
        creq = proto.conversion_request(raw, item, options)
        conversion = converter.convert(llm_request(creq, {}))
        answer = proto.converted(raw, conversion.text or "", item, options)
        answer.payload["protocol"].update(
            conversion_model=converter.model,
            conversion_finish_reason=conversion.finish_reason or "",
            conversion_prompt_tokens=conversion.prompt_tokens or 0,
            conversion_completion_tokens=conversion.completion_tokens or 0,
        )
    else:
        answer = proto.answer(raw, item, options)
    return Generation(
        procedure=procedure,
        generator_id=run.generator_id,
        run_id=run.pk,
        model_completion=raw,
        predicted_steps=answer.steps,
        token_count=count_steps_tokens(answer.steps),
        finish_reason=(response.finish_reason or "")[:32],
        prompt_tokens=response.prompt_tokens or None,
        completion_tokens=response.completion_tokens or None,
        payload=answer.payload,
        scores={},
    )


def protocol_summary(*, run: GenerationRun, procedures) -> dict[str, Any]:
    """The end of a protocol run (instead of the H.2 scorers, which do not apply): the outputs
    of the selection, how many have an extracted or converted answer, and the finish reasons
    (LongProc's termination: ``stop`` ended within the budget, ``length`` was cut off). The
    pack's metrics are a scoring run's (``manage.py run_scoring``)."""
    rows = Generation.objects.filter(generator_id=run.generator_id, procedure__in=procedures)
    n = 0
    answered = 0
    reasons: dict[str, int] = {}
    for payload, reason in rows.values_list("payload", "finish_reason").iterator():
        n += 1
        record = (payload or {}).get("protocol") or {}
        value = record.get("converted", record.get("extracted", record.get("customized_steps")))
        if value is None and record.get("name") == "scirecipe":
            value = record.get("steps") or None
        answered += value not in (None, [], "")
        key = reason or "unknown"
        reasons[key] = reasons.get(key, 0) + 1
    return {
        "protocol": run.protocol,
        "pack": protocol_of(run).pack,
        "n": n,
        "n_answer": answered,
        "finish_reasons": dict(sorted(reasons.items())),
    }
