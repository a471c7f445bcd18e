"""The annotation data model: one module per concern, all importable from ``annotation.models``."""

from annotation.models.adjudication import Adjudication
from annotation.models.codebook import CodebookVersion
from annotation.models.events import EntryEvent
from annotation.models.payments import ProlificCall, StudyPay
from annotation.models.prolific import ProlificDelivery, ProlificStudy, ProlificSubmission
from annotation.models.rounds import StudyRound
from annotation.models.study import (
    Annotation,
    Assignment,
    AttentionCheckResult,
    Draft,
    Participant,
    Study,
    StudyItem,
    new_code,
    new_slug,
)

# The names the first migration (0001_study_flow) holds for the study's defaults.
_new_code = new_code
_new_slug = new_slug

__all__ = [
    "Adjudication",
    "Annotation",
    "Assignment",
    "AttentionCheckResult",
    "CodebookVersion",
    "Draft",
    "EntryEvent",
    "Participant",
    "ProlificCall",
    "ProlificDelivery",
    "ProlificStudy",
    "ProlificSubmission",
    "Study",
    "StudyItem",
    "StudyPay",
    "StudyRound",
    "new_code",
    "new_slug",
]
