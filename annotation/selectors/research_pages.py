"""What the researcher's study pages show: the template contexts of
:mod:`annotation.views.research` (study list, progress)."""

from __future__ import annotations

from annotation.models import Study
from annotation.selectors.flow import study_participant_rows, study_progress

# Prolific fills these placeholders in a study's URL with the participant's ids.
PROLIFIC_PARAMETERS = (
    "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)


def study_list_context() -> dict:
    return {"studies": Study.objects.all()}


def progress_page_context(*, study: Study, entry_url: str) -> dict:
    """A study's progress: items by annotations done, participants, and its entry links
    (``entry_url`` is the absolute URL of its entry page)."""
    return {
        "study": study,
        "progress": study_progress(study=study),
        "participants": study_participant_rows(study=study),
        "entry_url": entry_url,
        "prolific_url": entry_url + PROLIFIC_PARAMETERS,
        "statuses": Study.Status.choices,
    }
