"""The CustomPlans two-question, five-option form (seed 002 §4.2, Fig. 14; notes §2.2–2.3).

Q1 (executable): "Could you follow the given steps to achieve the goal?"; Q2 (customized):
"A new condition has happened [hint]. Can you still follow the plan …?". Each: "Yes" or one
or more error types (changed, missing, deleted, vague). The item's customization hint is in
``StudyItem.context["hint"]``. Aggregation (§2.2): EXECUTABLE = a strict majority says Yes to
Q1, CUSTOMIZED = to Q2, FULLYCORRECT = both; reported as % of items. The paper reports no
agreement; this form adds α per question and per error type (notes §2.6)."""

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
    clean_text,
    first,
)
from benchmarks.packs import customplans as pack

YES = "yes"
ERROR_TYPES = pack.ERROR_TYPES
QUESTIONS = {
    "q1": {
        "label": "Q1 (executable)",
        "text": "Could you follow the given steps to achieve the goal?",
        "yes": "Yes, I can follow it exactly and achieve the goal.",
    },
    "q2": {
        "label": "Q2 (customized)",
        "text": "A new condition has happened. Can you still follow the plan to achieve the task "
        "given the new condition?",
        "yes": "Yes, the plan contains all the steps needed to meet the condition's requirements.",
    },
}
ERROR_TEXT = {
    "changed": "No, some step(s) should be changed: details in one or more steps aren't right "
    "and should be edited.",
    "missing": "No, important step(s) is/are missing: additional steps are required for the "
    "procedure to succeed.",
    "deleted": "No, some step(s) should be deleted: some steps are wrong, irrelevant or duplicates.",
    "vague": "No, some step(s) is/are vague: unclear what the step means or how to perform it "
    "(e.g. “feel happy”).",
}


def is_yes(options: Sequence[str] | None) -> bool:
    return list(options or []) == [YES]


def item_outcome(answers: Sequence[Mapping]) -> dict:
    """One item's majority outcome over its annotators' answers (§2.2), by the pack's rule
    (:func:`benchmarks.packs.customplans.aggregate_ratings`, the one home of the majority /
    FullyCorrect rule); an answer that is not "yes" counts as No."""
    ratings = [{q: [YES] if is_yes(a.get(q)) else ["changed"] for q in QUESTIONS} for a in answers]
    agg = pack.aggregate_ratings(ratings)
    return {
        "executable": bool(agg["executable"]),
        "customized": bool(agg["customized"]),
        "fully_correct": bool(agg["fully_correct"]),
        "n": len(answers),
    }


def outcome_rates(items: Sequence[Sequence[Mapping]]) -> dict:
    """% EXECUTABLE, % CUSTOMIZED and % FULLYCORRECT over items (each a list of answers)."""
    outcomes = [item_outcome(answers) for answers in items if answers]
    n = len(outcomes)
    return {
        key: {"count": sum(o[key] for o in outcomes), "n": n, "percent": _pct(outcomes, key)}
        for key in ("executable", "customized", "fully_correct")
    }


def _pct(outcomes: list[dict], key: str) -> float | None:
    return round(100 * sum(o[key] for o in outcomes) / len(outcomes), 2) if outcomes else None


class CustomPlansForm(FormType):
    name = "customplans"
    title = "CustomPlans (two questions, five options)"
    description = (
        "Q1 executable, Q2 customized: Yes or error types (changed, missing, deleted, vague)."
    )

    def clean_config(self, config: Mapping[str, Any]) -> dict:
        unknown = set(config) - {"show_original"}
        if unknown:
            raise FormConfigError(
                "form_config", f"unknown setting(s): {', '.join(sorted(unknown))}"
            )
        show = config.get("show_original", False)
        if not isinstance(show, bool):
            raise FormConfigError("form_config.show_original", "must be true or false")
        return {"show_original": show}

    def parse(self, data: FormData, *, config: Mapping, item: ItemView | None = None) -> dict:
        answer: dict[str, Any] = {"comments": clean_text(first(data, "comments"))}
        for q in QUESTIONS:
            picked = {v for v in (data.get(q) or []) if v in (YES, *ERROR_TYPES)}
            # "Yes" together with problems is kept as typed; errors() refuses it
            answer[q] = ([YES] if YES in picked else []) + [e for e in ERROR_TYPES if e in picked]
        return answer

    def errors(
        self, answer: Mapping, *, config: Mapping, item: ItemView | None = None
    ) -> list[str]:
        out = []
        for q, spec in QUESTIONS.items():
            picked = answer.get(q) or []
            if not picked:
                out.append(f"{spec['label']}: choose “Yes” or at least one problem.")
            elif YES in picked and len(picked) > 1:
                out.append(f"{spec['label']}: choose “Yes” or problems, not both.")
        return out

    def text_fields(self, answer: Mapping) -> list[tuple[str, str]]:
        return [("Comments", answer.get("comments", ""))]

    def has_failure(self, answer: Mapping, *, config: Mapping) -> bool:
        return not (is_yes(answer.get("q1")) and is_yes(answer.get("q2")))

    def codebook(self, *, config: Mapping) -> dict:
        points = [f"{s['label']}: {s['text']} “Yes” means: {s['yes']}" for s in QUESTIONS.values()]
        points += [f"Problem “{e}”: {ERROR_TEXT[e]}" for e in ERROR_TYPES]
        return {
            "title": "Can the plan be followed?",
            "lead": "For each item answer two questions about the plan: “Yes”, or one or more "
            "problems.",
            "points": points,
        }

    def describe(self, answer: Mapping, *, config: Mapping) -> list[str]:
        out = []
        for q, spec in QUESTIONS.items():
            picked = answer.get(q) or []
            said = "Yes" if is_yes(picked) else ("No: " + ", ".join(picked) if picked else "—")
            out.append(f"{spec['label']}: {said}")
        return out

    def describe_expected(self, expected: Mapping, *, config: Mapping) -> str:
        return "; ".join(
            f"{QUESTIONS[q]['label']}: {'Yes' if want else 'No'}"
            for q, want in (expected or {}).items()
            if q in QUESTIONS
        )

    def quality_value(self, answer: Mapping, *, config: Mapping) -> Any:
        return tuple(is_yes(answer.get(q)) for q in QUESTIONS)  # (Q1 Yes, Q2 Yes)

    def clean_expected(self, expected: Any, *, config: Mapping) -> dict:
        if not isinstance(expected, Mapping) or not set(expected) & set(QUESTIONS):
            raise FormConfigError("expected_label", "give q1 and/or q2: true (Yes) or false (No)")
        out = {}
        for q in QUESTIONS:
            if q in expected:
                if not isinstance(expected[q], bool):
                    raise FormConfigError("expected_label", f"{q} must be true (Yes) or false (No)")
                out[q] = expected[q]
        return out

    def matches(self, answer: Mapping, expected: Mapping, *, config: Mapping) -> bool:
        return all(is_yes(answer.get(q)) == want for q, want in expected.items())

    def page_context(self, *, answer: Mapping, config: Mapping, item: ItemView) -> dict:
        questions = []
        for q, spec in QUESTIONS.items():
            picked = set(answer.get(q) or [])
            options = [(YES, spec["yes"], YES in picked, "ok")] + [
                (e, ERROR_TEXT[e], e in picked, "bad") for e in ERROR_TYPES
            ]
            questions.append(
                {"key": q, "label": spec["label"], "text": spec["text"], "options": options}
            )
        return {
            "questions": questions,
            "hint": str(item.context.get("hint", "")),
            "show_original": config["show_original"],
        }

    def export_fields(self, answer: Mapping, *, config: Mapping) -> dict:
        out: dict[str, Any] = {}
        for q in QUESTIONS:
            picked = answer.get(q) or []
            out[f"{q}_yes"] = is_yes(picked)
            for e in ERROR_TYPES:
                out[f"{q}_{e}"] = e in picked
        return out

    def agreement(
        self,
        answers: Sequence[AnnotatedAnswer],
        *,
        config: Mapping,
        n_resamples: int = 1000,
        seed: int = 0,
    ) -> dict:
        sections = []
        for q, spec in QUESTIONS.items():
            rows = []
            yes = stats.matrix_of(answers, lambda a, q=q: is_yes(a.answer.get(q)))
            rows.append(
                stats.alpha_row(
                    "α Yes vs No (nominal)",
                    yes,
                    level="nominal",
                    n_resamples=n_resamples,
                    seed=seed,
                )
            )
            rows.append(stats.stat_row("Fleiss κ Yes vs No", ag.fleiss_kappa(yes)))
            rows.append(
                stats.stat_row(
                    "Percent agreement Yes vs No",
                    ag.percent_agreement(yes),
                    n=stats.n_pairable(yes),
                    percent=True,
                )
            )
            for e in ERROR_TYPES:
                flagged = stats.matrix_of(answers, lambda a, q=q, e=e: e in (a.answer.get(q) or []))
                rows.append(
                    stats.alpha_row(
                        f"α error type “{e}” (nominal)",
                        flagged,
                        level="nominal",
                        n_resamples=n_resamples,
                        seed=seed,
                    )
                )
            sections.append({"title": spec["label"], "rows": rows})
        grouped = stats.by_item(answers)
        rates = outcome_rates([[a.answer for a in group] for group in grouped.values()])
        sections.append(
            {
                "title": "Majority outcomes (% of items)",
                "rows": [
                    stats.stat_row(
                        f"{key.replace('_', ' ').title()} (majority)",
                        stats.share(r["count"], r["n"]),
                        n=r["n"],
                        percent=True,
                    )
                    for key, r in rates.items()
                ],
            }
        )
        return {
            "form_type": self.name,
            "n_items": len(grouped),
            "n_annotations": len(answers),
            "sections": sections,
            "summary": rates,
        }
