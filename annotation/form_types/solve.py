"""Solve mode, a human baseline (LongProc App. A.3; notes §1.3, §1.6): the participant writes
an answer to the same prompt and it is scored by the same scorer pack
(:mod:`benchmarks.packs.registry`). The prompt is ``StudyItem.context["prompt"]`` (else the
goal), the pack's record is ``context["record"]`` plus the answer under ``answer_field``
(``prediction`` by default). ``pack_options`` (a JSON object, default ``{}``) are the pack's
named options (``PackScorer.options``, e.g. ``{"fallback": "whole"}`` for a LongProc pack so
an answer typed without its tags is scored whole); an unknown name is refused when the study
is saved. Scored at submission; a missing pack or a record the pack refuses
is stored as ``score_error`` with the reason, and the report counts it. No inter-annotator
agreement (a solve task, not a rating task): the report gives the human score per metric."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from annotation import agreement as ag
from annotation.form_types import stats
from annotation.form_types.base import (
    AnnotatedAnswer,
    FormConfigError,
    FormData,
    FormType,
    ItemView,
    first,
)

MAX_ANSWER = 100_000


def pack_or_error(name: str):
    """(the pack, None) or (None, why): a pack that is not installed is a clear message."""
    from benchmarks.packs.registry import get_pack

    try:
        pack = get_pack(name)
    except KeyError as exc:
        return None, f"scorer pack {name!r} is not available ({exc.args[0]})"
    if pack.sandboxed:  # compiles and runs code: scoring runs on the sandbox queue, not a request
        return None, f"scorer pack {name!r} runs code; score it with a scoring run instead"
    return pack, None


def score_answer(
    *,
    pack_name: str,
    record: Mapping,
    answer_field: str,
    answer: str,
    options: Mapping | None = None,
) -> dict:
    """``{"scorer", "metrics"}`` or ``{"scorer", "score_error"}`` for one written answer
    (``options``: the pack's named options, through ``PackScorer.score_with``)."""
    pack, error = pack_or_error(pack_name)
    if pack is None:
        return {"scorer": pack_name, "score_error": error}
    try:
        scored = pack.score_with({**record, answer_field: answer}, options or {})
    except (ValueError, TypeError, KeyError) as exc:  # RecordError is a ValueError
        return {"scorer": pack_name, "score_error": f"{type(exc).__name__}: {exc}"}
    return {"scorer": pack_name, "metrics": dict(scored.metrics)}


class SolveForm(FormType):
    name = "solve"
    title = "Solve (human baseline)"
    description = "The participant answers the prompt; the same scorer pack scores the answer."

    def clean_config(self, config: Mapping[str, Any]) -> dict:
        unknown = set(config) - {"pack", "answer_field", "instructions", "pack_options"}
        if unknown:
            raise FormConfigError(
                "form_config", f"unknown setting(s): {', '.join(sorted(unknown))}"
            )
        pack = config.get("pack")
        if not isinstance(pack, str) or not pack.strip():
            raise FormConfigError(
                "form_config.pack", "name the scorer pack, e.g. longproc-countdown"
            )
        field = config.get("answer_field", "prediction")
        if not isinstance(field, str) or not field.isidentifier():
            raise FormConfigError("form_config.answer_field", "must be a field name")
        instructions = config.get("instructions", "")
        if not isinstance(instructions, str) or len(instructions) > 5_000:
            raise FormConfigError("form_config.instructions", "text of up to 5,000 characters")
        options = config.get("pack_options", {})
        if not isinstance(options, Mapping):
            raise FormConfigError("form_config.pack_options", "must be a JSON object")
        return {
            "pack": pack.strip(),
            "answer_field": field,
            "instructions": instructions.strip(),
            "pack_options": dict(options),
        }

    def check_available(self, config: Mapping[str, Any]) -> None:
        found, error = pack_or_error(config["pack"])
        if found is None:
            raise FormConfigError("form_config.pack", error)
        for key in sorted(config.get("pack_options") or {}):
            if key not in found.options:
                known = ", ".join(sorted(found.options)) or "none"
                raise FormConfigError(
                    f"form_config.pack_options.{key}",
                    f"not an option of the {found.name} pack (its options: {known})",
                )

    def parse(self, data: FormData, *, config: Mapping, item: ItemView | None = None) -> dict:
        return {
            "answer": first(data, "answer"),
            "comments": first(data, "comments"),
        }

    def errors(
        self, answer: Mapping, *, config: Mapping, item: ItemView | None = None
    ) -> list[str]:
        return [] if (answer.get("answer") or "").strip() else ["Answer: write your answer."]

    def text_fields(self, answer: Mapping) -> list[tuple[str, str]]:
        return [("Answer", answer.get("answer", "")), ("Comments", answer.get("comments", ""))]

    def text_limit(self, name: str) -> int:
        return MAX_ANSWER if name == "Answer" else super().text_limit(name)

    def finalize(self, answer: Mapping, *, config: Mapping, item: ItemView) -> dict:
        record = item.context.get("record") or {}
        scored = score_answer(
            pack_name=config["pack"],
            record=record if isinstance(record, Mapping) else {},
            answer_field=config["answer_field"],
            answer=answer.get("answer", ""),
            options=config.get("pack_options") or {},
        )
        out = {k: v for k, v in answer.items() if k not in ("scorer", "metrics", "score_error")}
        return {**out, **scored}

    def has_failure(self, answer: Mapping, *, config: Mapping) -> bool:
        metrics = answer.get("metrics") or {}
        return bool(metrics) and not any(v for v in metrics.values())

    def codebook(self, *, config: Mapping) -> dict:
        return {
            "title": "Solve the task yourself",
            "lead": "For each item, write your own answer to the prompt. It is scored "
            f"automatically by the {config['pack']} scorer, as the systems' answers are.",
            "points": [config["instructions"]] if config["instructions"] else [],
        }

    def describe(self, answer: Mapping, *, config: Mapping) -> list[str]:
        text = (answer.get("answer") or "").strip()
        out = [f"Answer: {text[:300]}{'…' if len(text) > 300 else ''}" if text else "No answer"]
        if answer.get("metrics"):
            out.append("Score: " + ", ".join(f"{k} {v}" for k, v in answer["metrics"].items()))
        return out

    def describe_expected(self, expected: Mapping, *, config: Mapping) -> str:
        metrics = (expected or {}).get("metrics") or {}
        return "Score: " + ", ".join(f"{k} {v}" for k, v in metrics.items())

    def clean_expected(self, expected: Any, *, config: Mapping) -> dict:
        if not isinstance(expected, Mapping) or not isinstance(expected.get("metrics"), Mapping):
            raise FormConfigError(
                "expected_label", 'give the expected metrics, e.g. {"correct": 1}'
            )
        return {"metrics": dict(expected["metrics"])}

    def matches(self, answer: Mapping, expected: Mapping, *, config: Mapping) -> bool:
        got = answer.get("metrics") or {}
        return all(got.get(k) == v for k, v in (expected.get("metrics") or {}).items())

    def page_context(self, *, answer: Mapping, config: Mapping, item: ItemView) -> dict:
        return {
            "prompt": str(item.context.get("prompt") or item.goal),
            "instructions": config["instructions"],
            "answer": answer.get("answer", ""),
        }

    def export_fields(self, answer: Mapping, *, config: Mapping) -> dict:
        metrics = answer.get("metrics") or {}
        return {
            "scorer": answer.get("scorer", config["pack"]),
            "score_error": answer.get("score_error", ""),
            **{f"score_{k}": v for k, v in metrics.items()},
        }

    def agreement(
        self,
        answers: Sequence[AnnotatedAnswer],
        *,
        config: Mapping,
        n_resamples: int = 1000,
        seed: int = 0,
    ) -> dict:
        scored = [a.answer.get("metrics") for a in answers if a.answer.get("metrics")]
        errors = [a.answer.get("score_error") for a in answers if a.answer.get("score_error")]
        names = sorted({k for m in scored for k in m})
        rows = []
        summary: dict[str, Any] = {
            "pack": config["pack"],
            "n_scored": len(scored),
            "n_errors": len(errors),
        }
        for name in names:
            values = [float(m[name]) for m in scored if isinstance(m.get(name), (int, float))]
            mean = sum(values) / len(values) if values else ag.Undefined(ag.NO_LABELS)
            summary[name] = ag.stat_json(mean)
            rows.append(stats.stat_row(f"Human {name} (mean)", mean, n=len(values)))
        rows.append(stats.stat_row("Answers not scored", float(len(errors)), n=len(answers)))
        sections = [{"title": f"Human baseline, scored by {config['pack']}", "rows": rows}]
        if errors:
            summary["first_error"] = errors[0]
        return {
            "form_type": self.name,
            "n_items": len(stats.by_item(answers)),
            "n_annotations": len(answers),
            "sections": sections,
            "summary": summary,
            "note": "A solve task has no inter-annotator agreement (LongProc App. A.3).",
        }
