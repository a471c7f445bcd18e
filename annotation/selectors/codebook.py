"""Reads of the codebook a study's annotators see: its codebook version, else the shipped
codebook (:data:`annotation.codebook.CODEBOOK`, version 1)."""

from __future__ import annotations

from typing import Any

from annotation.codebook import CODEBOOK
from annotation.models import CodebookVersion, Study


def study_codebook(*, study: Study) -> dict[str, Any]:
    if study.codebook_version_id is None:
        return CODEBOOK
    content = (
        CodebookVersion.objects.filter(pk=study.codebook_version_id)
        .values_list("content", flat=True)
        .first()
    )
    return content if content is not None else CODEBOOK


def codebook_version_list():
    return CodebookVersion.objects.select_related("author").order_by("number")
