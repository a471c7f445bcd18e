"""The critical-failure form (seed 000, C.1): the study form every study had before form
types. Its parser and rules stay in :mod:`annotation.labels`, its page in
``templates/annotation/item.html`` + ``_failure.html`` (the partial ``forms/_critical_failure.html``
documents that), its agreement level in :func:`annotation.agreement_report.build_report`;
this module binds them to the form-type contract."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from annotation import labels
from annotation.agreement_report import build_report
from annotation.form_types.base import (
    AnnotatedAnswer,
    FormConfigError,
    FormData,
    FormType,
    ItemView,
)
from annotation.label_file import LabelRow

NO_FAILURE, FAILURE = "no failure", "failure"


class CriticalFailureForm(FormType):
    name = "critical_failure"
    title = "Critical failure"
    description = "Does L2 have a critical failure? Failures linked to L1/L2 steps (seed 000)."
    reads_steps = True

    def parse(self, data: FormData, *, config: Mapping, item: ItemView | None = None) -> dict:
        n_l1, n_l2 = (len(item.l1), len(item.l2)) if item else (0, 0)
        parsed = labels.parse_label(data, n_l1=n_l1, n_l2=n_l2)
        return {**parsed.as_draft(), "has_failure": parsed.has_failure}

    def errors(
        self, answer: Mapping, *, config: Mapping, item: ItemView | None = None
    ) -> list[str]:
        draft = {k: answer.get(k, v) for k, v in labels.ParsedLabel().as_draft().items()}
        n_l1, n_l2 = (len(item.l1), len(item.l2)) if item else (0, 0)
        return labels.submission_errors(labels.ParsedLabel(**draft), n_l2=n_l2, n_l1=n_l1)

    def text_fields(self, answer: Mapping) -> list[tuple[str, str]]:
        failures = answer.get("failures") or []
        return [("Comments", answer.get("comments", ""))] + [
            (f"Failure {i} description", f.get("description", ""))
            for i, f in enumerate(failures, start=1)
        ]

    def has_failure(self, answer: Mapping, *, config: Mapping) -> bool:
        return answer.get("choice") == "failure"

    def clean_expected(self, expected: Any, *, config: Mapping) -> dict:
        if not isinstance(expected, Mapping) or not isinstance(expected.get("has_failure"), bool):
            raise FormConfigError("expected_label", "has_failure must be true or false")
        return {"has_failure": expected["has_failure"]}

    def matches(self, answer: Mapping, expected: Mapping, *, config: Mapping) -> bool:
        return self.has_failure(answer, config=config) == expected.get("has_failure")

    def export_fields(self, answer: Mapping, *, config: Mapping) -> dict:
        failures = answer.get("failures") or []
        return {
            "has_failure": self.has_failure(answer, config=config),
            "n_failures": len(failures),
            "first_failure_step": labels.first_failure_step(failures),
        }

    def agreement(
        self,
        answers: Sequence[AnnotatedAnswer],
        *,
        config: Mapping,
        n_resamples: int = 1000,
        seed: int = 0,
    ) -> dict:
        rows = [
            LabelRow(
                str(a.item),
                str(a.annotator),
                FAILURE if self.has_failure(a.answer, config=config) else NO_FAILURE,
                labels.first_failure_step(a.answer.get("failures") or []),
            )
            for a in answers
        ]
        report = build_report(
            rows,
            categories=(NO_FAILURE, FAILURE),
            with_location=True,
            n_resamples=n_resamples,
            seed=seed,
        )
        alpha = report["alpha"]
        sections = [
            {
                "title": "Critical failure (has_failure, nominal)",
                "rows": [
                    {"name": "Krippendorff α", "stat": _value(alpha), **_ci(alpha)},
                    {
                        "name": "Percent agreement",
                        "stat": report["percent_agreement"],
                        "percent": True,
                    },
                    {"name": "Fleiss κ", "stat": _value(report["fleiss_kappa"])},
                    {"name": "Gwet AC1", "stat": _value(report["gwet_ac1"])},
                ],
            },
            {
                "title": "First-failure location (nominal)",
                "rows": [
                    {
                        "name": "Krippendorff α",
                        "stat": _value(report["first_failure"]["alpha"]),
                        **_ci(report["first_failure"]["alpha"]),
                    }
                ],
            },
        ]
        return {
            "form_type": self.name,
            "n_items": report["n_items"],
            "n_annotations": report["n_rows"],
            "sections": sections,
            "summary": {},
            "report": report,
        }


def _value(stat: Mapping) -> dict:
    return {k: stat[k] for k in ("value", "undefined") if k in stat}


def _ci(stat: Mapping) -> dict:
    return {"ci": stat["ci"]} if "ci" in stat else {}
