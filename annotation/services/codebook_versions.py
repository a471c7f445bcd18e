"""Writes of codebook versions: the next version of the critical-failure codebook (from the
console or the API). Versions are never edited; a study names one."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.codebook_text import as_json, codebook_errors
from annotation.models import CodebookVersion
from annotation.models.codebook import content_sha256
from core.text import check_text
from core.versions import NOTE_MAX_CHARS, version_save


def codebook_version_check(*, content: Any, note: str = "") -> None:
    """What :func:`codebook_version_create` refuses, by field (the console's form shows it)."""
    check_text(note, "note")
    if len(note) > NOTE_MAX_CHARS:
        raise ValidationError({"note": f"at most {NOTE_MAX_CHARS} characters"})
    problems = codebook_errors(content)
    if problems:
        raise ValidationError({"content": problems})
    CodebookVersion.objects.shipped()  # the shipped codebook stays version 1
    same = CodebookVersion.objects.filter(sha256=content_sha256(as_json(content))).first()
    if same is not None:
        raise ValidationError({"content": f"this codebook is already {same} (nothing changed)"})


@transaction.atomic
def codebook_version_create(
    *, content: Any, note: str = "", author=None, is_demo: bool = False
) -> CodebookVersion:
    """The next codebook version; a content some version already has is refused, naming it."""
    codebook_version_check(content=content, note=note)
    content = as_json(content)
    sha = content_sha256(content)
    return version_save(
        CodebookVersion(content=content, sha256=sha, note=note, author=author, is_demo=is_demo)
    )
