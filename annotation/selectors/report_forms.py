"""The agreement report of a study whose form type is not critical failure: its answers
(``Annotation.label``) through the form type's agreement level
(:meth:`annotation.form_types.base.FormType.agreement`), cached like the main report, and
the rows the report page shows."""

from __future__ import annotations

from functools import partial

from annotation.form_types.base import AnnotatedAnswer
from annotation.models import Annotation, Study, StudyItem
from annotation.selectors.forms import study_form
from annotation.selectors.report import cached_study_report, participant_label
from core.formatting import UNDEFINED_WITH_REASON, fmt_interval, fmt_stat

stat_text = partial(fmt_stat, undefined=UNDEFINED_WITH_REASON)


def study_form_answers(*, study: Study) -> list[AnnotatedAnswer]:
    """Every submitted answer of the study's regular items, in one query."""
    rows = (
        Annotation.objects.filter(item__study=study, item__kind=StudyItem.Kind.REGULAR)
        .order_by("item_id", "participant_id")
        .values_list("item_id", "participant__prolific_pid", "participant__user_id", "label")
    )
    return [
        AnnotatedAnswer(item_id, participant_label(ppid, uid), label or {})
        for item_id, ppid, uid, label in rows
    ]


def study_form_report(*, study: Study, n_resamples: int = 1000, use_cache: bool = True) -> dict:
    """The form type's agreement report (None-free JSON), cached until a label arrives."""

    def build(signature: str) -> dict:
        form = study_form(study=study)
        report = form.agreement(study_form_answers(study=study), n_resamples=n_resamples)
        report.pop("report", None)  # the critical-failure form's full report lives in study_report
        report |= {"study_id": study.pk, "signature": signature, "title": form.type.title}
        return report

    return cached_study_report(
        study=study, name="form-report", n_resamples=n_resamples, use_cache=use_cache, build=build
    )


def form_report_display(*, study: Study) -> dict | None:
    """The report page's form-type section (None for the critical-failure form, whose numbers
    the page shows as before): each section's rows as text."""
    if study.form_type == "critical_failure":
        return None
    report = study_form_report(study=study)
    sections = []
    for section in report["sections"]:
        rows = []
        for row in section["rows"]:
            stat = {**row["stat"], **({"ci": row["ci"]} if "ci" in row else {})}
            rows.append(
                {
                    "name": row["name"],
                    "value": stat_text(stat, percent=bool(row.get("percent"))),
                    "ci": fmt_interval(stat) or "",
                    "n": row.get("n", ""),
                }
            )
        sections.append({"title": section["title"], "rows": rows})
    return {
        "form_type": report["form_type"],
        "title": report["title"],
        "n_items": report["n_items"],
        "n_annotations": report["n_annotations"],
        "sections": sections,
        "note": report.get("note", ""),
    }
