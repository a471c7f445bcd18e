"""The codebook versions page's reads: each version with the studies whose annotators read it
and their statistics (annotations, the share marked with a critical failure, Krippendorff's α
of has-failure with its bootstrap CI, from the study's agreement report), and the diff between
a version and any earlier one (:mod:`core.textdiff`). A study that names no version reads the
shipped codebook, version 1."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import Count, Q

from annotation.codebook import CODEBOOK
from annotation.codebook_text import as_json
from annotation.models import Annotation, CodebookVersion, Study
from annotation.models.codebook import content_sha256
from annotation.selectors.report import listed_study_report
from core.textdiff import Diff, text_diff

CRITICAL_FAILURE = "critical_failure"
ALPHA_RESAMPLES = 200


def _shipped_pk() -> int | None:
    sha = content_sha256(as_json(CODEBOOK))
    return CodebookVersion.objects.filter(sha256=sha).values_list("pk", flat=True).first()


# a large study's α while a worker computes its report
COMPUTING = "being computed by a worker: refresh in a minute"


def _study_stats(study: Study, enqueue: Callable[[int], None]) -> dict[str, Any]:
    counts = Annotation.objects.filter(item__study=study).aggregate(
        n=Count("id"), n_failure=Count("id", filter=Q(has_failure=True))
    )
    out: dict[str, Any] = {
        "study": study,
        "n_annotations": counts["n"],
        "failure_share": counts["n_failure"] / counts["n"] if counts["n"] else None,
        "alpha": None,
    }
    if study.form_type == CRITICAL_FAILURE and counts["n"]:
        report = listed_study_report(study=study, n_resamples=ALPHA_RESAMPLES, enqueue=enqueue)
        out["alpha"] = report["alpha"] if report else {"value": None, "undefined": COMPUTING}
    return out


def codebook_version_stats(*, enqueue: Callable[[int], None]) -> list[dict[str, Any]]:
    """Every version, oldest first, with its studies' statistics and its totals. ``enqueue``: how
    a large study's report is started on a worker (its α is then said to be computed)."""
    shipped = _shipped_pk()
    by_version: dict[int | None, list[Study]] = {}
    for study in Study.objects.order_by("pk"):
        key = study.codebook_version_id if study.codebook_version_id is not None else shipped
        by_version.setdefault(key, []).append(study)
    rows = []
    for version in CodebookVersion.objects.select_related("author").order_by("number"):
        studies = [_study_stats(s, enqueue) for s in by_version.get(version.pk, [])]
        n = sum(s["n_annotations"] for s in studies)
        failures = sum(
            round(s["failure_share"] * s["n_annotations"]) for s in studies if s["n_annotations"]
        )
        rows.append(
            {
                "version": version,
                "studies": studies,
                "n_annotations": n,
                "failure_share": failures / n if n else None,
            }
        )
    return rows


def codebook_version_diff(*, version: CodebookVersion, against: CodebookVersion | None) -> Diff:
    """What changed from ``against`` (an earlier version; None: the one before) to ``version``."""
    if against is None:
        return version.diff()
    if against.number >= version.number:
        raise ValueError(
            f"against: choose a version before v{version.number} (v{against.number} is not)"
        )
    return text_diff(against.diff_text(), version.diff_text())
