"""One item of a judge run: its content hash, its H.3 prompt, the request sent for it, the
judgment made from the reply, and what the reply cost."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from benchmarks.llm.base import LLMRequest, LLMResponse
from benchmarks.llm.batch import price_factor
from benchmarks.llm.schema import bounded_schema
from benchmarks.llm.vllm_options import SCHEMA_OPTIONS
from judging import prompting
from judging.models import Judge, Judgment
from judging.parsing import PARSE_RETRIES, RETRY_SUFFIX, ParseResult, parse_judge_output

MTOK = Decimal(1_000_000)


@dataclass(frozen=True)
class ItemInput:
    item_id: int
    content_hash: str
    source_example_id: str
    prompt: str
    n_l1: int
    n_l2: int
    attempts: int = 0  # tries before this one
    parse_tries: int = 0  # replies before this one that failed to parse (asked again)
    retry_prompt_tokens: int = 0  # their tokens, added to the judgment's
    retry_completion_tokens: int = 0


def item_content_hash(generation) -> str:
    p = generation.procedure
    return prompting.content_hash(
        goal=p.goal, reference_steps=p.steps, steps=generation.predicted_steps
    )


def item_input(
    *,
    item_id: int,
    content_hash: str,
    generation,
    template: str,
    attempts: int = 0,
    parse_tries: int = 0,
    retry_suffix: bool = False,
    retry_prompt_tokens: int = 0,
    retry_completion_tokens: int = 0,
) -> ItemInput:
    """One item's prompt; a retry after a parse failure (``parse_tries`` > 0) gets the
    reference's stricter :data:`judging.parsing.RETRY_SUFFIX` when ``retry_suffix`` (API
    judges; the reference's vLLM client asks again with the same prompt)."""
    p = generation.procedure
    ref = prompting.clean_steps(p.steps)
    cand = prompting.clean_steps(generation.predicted_steps)
    prompt = prompting.render_judge_prompt(
        template=template, goal=p.goal, reference_steps=ref, steps=cand
    )
    if parse_tries and retry_suffix:
        prompt += RETRY_SUFFIX
    return ItemInput(
        item_id=item_id,
        content_hash=content_hash,
        source_example_id=p.source_example_id,
        prompt=prompt,
        n_l1=len(ref),
        n_l2=len(cand),
        attempts=attempts,
        parse_tries=parse_tries,
        retry_prompt_tokens=retry_prompt_tokens,
        retry_completion_tokens=retry_completion_tokens,
    )


def run_item_input(item, *, template: str, retry_suffix: bool) -> ItemInput:
    """The prompt of one judge run item (a :class:`judging.models.JudgeRunItem` with its
    generation and procedure loaded), with the item's attempts, parse tries and retry tokens."""
    return item_input(
        item_id=item.id,
        content_hash=item.content_hash,
        generation=item.generation,
        template=template,
        attempts=item.attempts,
        parse_tries=item.parse_tries,
        retry_suffix=retry_suffix,
        retry_prompt_tokens=item.retry_prompt_tokens,
        retry_completion_tokens=item.retry_completion_tokens,
    )


def retry_suffix_for(judge: Judge) -> bool:
    """API judges get the stricter JSON reminder on a retry (as the reference's client)."""
    return judge.backend == Judge.Backend.OPENAI


def judge_parse(*, judge: Judge, inp: ItemInput, text: str | None) -> ParseResult:
    return parse_judge_output(text, profile=judge.parse_profile, n_l1=inp.n_l1, n_l2=inp.n_l2)


def ask_again(*, judge: Judge, inp: ItemInput, parsed: ParseResult) -> bool:
    """Whether a reply that failed to parse is asked again (the profile's retries left)."""
    return (
        parsed.parse_failed
        and parsed.retryable
        and inp.parse_tries < PARSE_RETRIES[judge.parse_profile]
    )


def judge_request(*, judge: Judge, prompt: str) -> LLMRequest:
    decoding = {**prompting.DECODING_DEFAULTS, **(judge.decoding or {})}
    extra = {
        k: v
        for k, v in decoding.items()
        if k not in ("temperature", "max_tokens", "top_p", "stop", "vllm", *SCHEMA_OPTIONS)
        and not k.startswith("vllm_")
    }
    return LLMRequest(
        messages=[{"role": "user", "content": prompt}]
        if judge.endpoint == Judge.Endpoint.CHAT
        else None,
        prompt=prompt if judge.endpoint == Judge.Endpoint.COMPLETIONS else None,
        max_tokens=decoding.get("max_tokens"),
        temperature=float(decoding.get("temperature", 0.0)),
        top_p=decoding.get("top_p"),
        stop=decoding.get("stop"),
        json_schema=bounded_schema(
            prompting.JUDGE_SCHEMA,
            max_string_length=decoding.get("json_max_string_length"),
            max_items=decoding.get("json_max_items"),
        )
        if judge.structured_output
        else None,
        json_schema_name=prompting.JUDGE_SCHEMA_NAME,
        extra=extra,
    )


def judgment_from_response(
    *, judge: Judge, inp: ItemInput, response: LLMResponse, parsed: ParseResult | None = None
) -> Judgment:
    if parsed is None:
        parsed = judge_parse(judge=judge, inp=inp, text=response.text)
    return Judgment(
        judge=judge,
        judge_key=judge.judge_id,
        content_hash=inp.content_hash,
        source_example_id=inp.source_example_id,
        reasoning=parsed.reasoning,
        critical_failures=parsed.critical_failures,
        has_failure=parsed.has_failure,
        n_failures=parsed.n_failures,
        parse_failed=parsed.parse_failed,
        parse_error=parsed.error[:500],
        parse_warnings=parsed.warnings,
        raw_output=response.text,
        prompt_tokens=response.prompt_tokens + inp.retry_prompt_tokens,
        completion_tokens=response.completion_tokens + inp.retry_completion_tokens,
        latency_s=response.latency_s,
        n_calls=inp.parse_tries + 1,
    )


def cost_of(*, judge: Judge, prompt_tokens: int, completion_tokens: int) -> Decimal:
    """At the judge's prices; in batch mode at the batch rate (``batch_price_factor`` × them,
    :func:`benchmarks.llm.batch.price_factor`)."""
    return (
        (
            Decimal(prompt_tokens) * judge.price_input_per_mtok
            + Decimal(completion_tokens) * judge.price_output_per_mtok
        )
        * price_factor(judge.backend_config())
        / MTOK
    )
