"""The panel a study made from a plan adds to its report: the corrected How2Score now
(:func:`validation.active.reads.study_interval`), the interval a uniform sample of the same
size would have given, and the target, in words. Registered in
:mod:`annotation.report_panels` by this app's ``ready()``."""

from __future__ import annotations

from annotation.models import Study
from validation.active.reads import study_interval
from validation.ppi_plan.words import interval_sentences

TEMPLATE = "validation/ppi_plan/_study_interval.html"


def study_interval_panel(study: Study) -> dict | None:
    """``None`` for a study whose items were not drawn from a judge's scored generations (no
    population in its design: chosen by hand, even if later escalated)."""
    if not (study.design or {}).get("population"):
        return None
    found = study_interval(study)
    sentences = interval_sentences(found, sampling=found.get("sampling", ""))
    return {"template": TEMPLATE, "sentences": sentences, "method": found.get("method") or ""}
