"""The reward request and the reward itself (E.4), pure.

A request is ``{"judge": NAME, "items": [...], "weights": {...}?}``; an item is
``{"completion": str, "id"?: any}`` plus either ``{"example_id": str, "dataset"?: "name@v"}``
(a stored procedure) or ``{"goal": str, "resources": [str], "reference_steps": [str]}``.

Per completion: the predicted steps are parsed from it (:func:`benchmarks.generation.parse_steps`),
``how2score`` = 1 when the judge finds no critical failure, 0 when it finds one (None when the
judge's reply could not be had or parsed); ``step_format`` = the E.4 verifier (consecutive
numbering 1..n with n = the reference's step count); ``length`` = the reference-calibrated
length reward of r = gen/ref o200k tokens (1 within |r − 1| ≤ 0.2, else exp(−5·(|r − 1| −
0.2)/0.8)); ``reward`` = Σ weight·component (weights default 1, as the paper sums them),
None when ``how2score`` is None.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks import scorers
from benchmarks.generation import parse_steps
from benchmarks.tokens import count_steps_tokens

MAX_BATCH = 256
MAX_COMPLETION_CHARS = 100_000
MAX_FIELD_CHARS = 20_000
MAX_STEPS = 100
COMPONENTS = ("how2score", "step_format", "length")
DEFAULT_WEIGHTS = dict.fromkeys(COMPONENTS, 1.0)


@dataclass
class RewardItem:
    index: int
    completion: str
    client_id: Any = None
    example_id: str | None = None
    dataset: str | None = None
    goal: str = ""
    resources: list[str] = field(default_factory=list)
    reference_steps: list[str] = field(default_factory=list)
    source_example_id: str = ""


class BatchError(ValueError):
    """A malformed request: ``errors`` lists ``{"index", "field", "message"}`` (index None for
    the request itself)."""

    def __init__(self, errors: list[dict[str, Any]]):
        self.errors = errors
        super().__init__("; ".join(f"{e['field']}: {e['message']}" for e in errors))


def _strings(value: Any, where: str, errors: list, index: int, *, allow_empty: bool) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        errors.append({"index": index, "field": where, "message": "must be a list of strings"})
        return []
    if len(value) > MAX_STEPS:
        errors.append({"index": index, "field": where, "message": f"more than {MAX_STEPS} entries"})
    if any(len(v) > MAX_FIELD_CHARS for v in value):
        errors.append(
            {"index": index, "field": where, "message": f"an entry over {MAX_FIELD_CHARS} chars"}
        )
    cleaned = [v.strip() for v in value if v.strip()]
    if not cleaned and not allow_empty:
        errors.append({"index": index, "field": where, "message": "must not be empty"})
    return cleaned


def parse_request(payload: Any) -> tuple[str, list[RewardItem], dict[str, float]]:
    """(judge name, items, weights) or :class:`BatchError` listing every problem at once."""
    errors: list[dict[str, Any]] = []
    if not isinstance(payload, Mapping):
        raise BatchError([{"index": None, "field": "body", "message": "must be a JSON object"}])
    unknown = sorted(set(payload) - {"judge", "items", "weights"})
    if unknown:
        errors.append(
            {"index": None, "field": "body", "message": f"unknown field(s) {', '.join(unknown)}"}
        )
    judge = payload.get("judge")
    if not isinstance(judge, str) or not judge.strip():
        errors.append({"index": None, "field": "judge", "message": "required: a judge name"})
    weights = dict(DEFAULT_WEIGHTS)
    raw_weights = payload.get("weights") or {}
    if not isinstance(raw_weights, Mapping):
        errors.append({"index": None, "field": "weights", "message": "must be an object"})
        raw_weights = {}
    for key, value in raw_weights.items():
        if key not in COMPONENTS:
            errors.append(
                {
                    "index": None,
                    "field": f"weights.{key}",
                    "message": f"unknown component (expected {', '.join(COMPONENTS)})",
                }
            )
        elif isinstance(value, bool) or not isinstance(value, int | float):
            errors.append({"index": None, "field": f"weights.{key}", "message": "must be a number"})
        else:
            weights[key] = float(value)
    raw_items = payload.get("items")
    items: list[RewardItem] = []
    if not isinstance(raw_items, list) or not raw_items:
        errors.append({"index": None, "field": "items", "message": "required: a non-empty list"})
        raw_items = []
    elif len(raw_items) > MAX_BATCH:
        errors.append(
            {"index": None, "field": "items", "message": f"at most {MAX_BATCH} items per batch"}
        )
        raw_items = []
    for i, raw in enumerate(raw_items):
        where = f"items[{i}]"
        if not isinstance(raw, Mapping):
            errors.append({"index": i, "field": where, "message": "must be an object"})
            continue
        extra = sorted(
            set(raw)
            - {"id", "completion", "example_id", "dataset", "goal", "resources", "reference_steps"}
        )
        if extra:
            errors.append(
                {"index": i, "field": where, "message": f"unknown field(s) {', '.join(extra)}"}
            )
        completion = raw.get("completion")
        if not isinstance(completion, str) or not completion.strip():
            errors.append(
                {"index": i, "field": f"{where}.completion", "message": "required: a string"}
            )
            completion = ""
        elif len(completion) > MAX_COMPLETION_CHARS:
            errors.append(
                {
                    "index": i,
                    "field": f"{where}.completion",
                    "message": f"over {MAX_COMPLETION_CHARS} characters",
                }
            )
        item = RewardItem(index=i, completion=completion, client_id=raw.get("id"))
        has_example = raw.get("example_id") is not None
        has_inline = any(k in raw for k in ("goal", "reference_steps", "resources"))
        if has_example == has_inline:
            errors.append(
                {
                    "index": i,
                    "field": where,
                    "message": "give either example_id (and dataset) or goal, resources and "
                    "reference_steps",
                }
            )
        elif has_example:
            example_id = raw.get("example_id")
            if not isinstance(example_id, str | int) or isinstance(example_id, bool):
                errors.append(
                    {"index": i, "field": f"{where}.example_id", "message": "must be a string"}
                )
            else:
                item.example_id = str(example_id).strip()
            dataset = raw.get("dataset")
            if dataset is not None and not isinstance(dataset, str):
                errors.append(
                    {"index": i, "field": f"{where}.dataset", "message": "must be 'name@version'"}
                )
            item.dataset = dataset
        else:
            goal = raw.get("goal")
            if not isinstance(goal, str) or not goal.strip():
                errors.append(
                    {"index": i, "field": f"{where}.goal", "message": "required: a string"}
                )
            else:
                item.goal = goal.strip()
            item.resources = _strings(
                raw.get("resources", []), f"{where}.resources", errors, i, allow_empty=True
            )
            item.reference_steps = _strings(
                raw.get("reference_steps"), f"{where}.reference_steps", errors, i, allow_empty=False
            )
        items.append(item)
    if errors:
        raise BatchError(errors)
    return judge.strip(), items, weights


@dataclass(frozen=True)
class Components:
    predicted_steps: list[str]
    step_format: int
    gen_tokens: int
    ref_tokens: int
    ratio: float | None
    length: float


def components(item: RewardItem) -> Components:
    """The verifiable components of one completion (no judge needed)."""
    predicted = parse_steps(item.completion).steps
    gen, ref = count_steps_tokens(predicted), count_steps_tokens(item.reference_steps)
    ratio = gen / ref if ref else None
    return Components(
        predicted_steps=list(predicted),
        step_format=scorers.step_format_ok(item.completion, len(item.reference_steps)),
        gen_tokens=gen,
        ref_tokens=ref,
        ratio=ratio,
        length=scorers.length_reward(ratio) if ratio is not None else 0.0,
    )


def combine(
    *, how2score: int | None, parts: Components, weights: Mapping[str, float]
) -> float | None:
    """Σ weight·component; None when the judge verdict is missing."""
    if how2score is None:
        return None
    return (
        weights["how2score"] * how2score
        + weights["step_format"] * parts.step_format
        + weights["length"] * parts.length
    )


def item_result(
    item: RewardItem,
    parts: Components,
    verdict: Mapping[str, Any] | None,
    weights: Mapping[str, float],
    error: str = "",
) -> dict[str, Any]:
    how2score = None
    if verdict is not None and not verdict["parse_failed"]:
        how2score = 0 if verdict["has_failure"] else 1
    out = {
        "index": item.index,
        "id": item.client_id,
        "reward": combine(how2score=how2score, parts=parts, weights=weights),
        "components": {
            "how2score": how2score,
            "step_format": parts.step_format,
            "length": parts.length,
        },
        "weights": dict(weights),
        "verdict": verdict,
        "n_predicted_steps": len(parts.predicted_steps),
        "n_reference_steps": len(item.reference_steps),
        "gen_tokens": parts.gen_tokens,
        "ref_tokens": parts.ref_tokens,
        "gen_ref_ratio": parts.ratio,
    }
    if error:
        out["error"] = error
    return out
