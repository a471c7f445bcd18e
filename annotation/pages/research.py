"""What the researcher's study pages show: the template contexts of
:mod:`annotation.views.research` (study list, progress)."""

from __future__ import annotations

import secrets
from urllib.parse import urlencode

from annotation import conf
from annotation.models import Study
from annotation.selectors.flow import study_participant_rows, study_progress

# Prolific fills these placeholders in a study's URL with the participant's ids.
PROLIFIC_PARAMETERS = (
    "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)


def study_list_context() -> dict:
    return {"studies": Study.objects.all()}


def share_panel(*, study: Study, entry_url: str) -> dict:
    """The "share with Prolific" panel: the study URL with Prolific's placeholders, the
    completion and screen-out codes with their redirect URLs, and a one-click test entry as a
    fresh participant (ids starting ``test-``, recorded like any other participant)."""
    test = {
        "PROLIFIC_PID": f"test-{secrets.token_hex(5)}",
        "STUDY_ID": study.prolific_study_id or "test",
        "SESSION_ID": f"test-{secrets.token_hex(5)}",
    }
    return {
        "prolific_url": entry_url + PROLIFIC_PARAMETERS,
        "completion_url": conf.prolific_completion_url(study.completion_code),
        "screened_out_url": conf.prolific_completion_url(study.screened_out_code),
        "test_url": entry_url + "?" + urlencode(test),
        "test_refused": (
            ""
            if study.status == Study.Status.OPEN
            else f"the study is {study.get_status_display().lower()}"
        ),
    }


def progress_page_context(*, study: Study, entry_url: str) -> dict:
    """A study's progress: items by annotations done, participants, and its entry links
    (``entry_url`` is the absolute URL of its entry page)."""
    return {
        "study": study,
        "progress": study_progress(study=study),
        "participants": study_participant_rows(study=study),
        "entry_url": entry_url,
        "prolific_url": entry_url + PROLIFIC_PARAMETERS,
        "share": share_panel(study=study, entry_url=entry_url),
        "statuses": Study.Status.choices,
        # refused entries (another session for a PID in progress, too many from one address)
        "entry_events": list(study.entry_events.select_related("participant")[:100]),
    }
