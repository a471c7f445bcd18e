"""Versioned records (judge prompts, study codebooks): append-only, numbered 1, 2, … within a
scope (a prompt's name; the codebook), each with its author, time and a note, and a diff
against the version before it (:mod:`core.textdiff`). A version is never edited: a change is
a new version, so whatever names a version (a judge, a study) keeps meaning the same text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.db.models import Max
from django.utils import timezone

from core.textdiff import Diff, text_diff

NOTE_MAX_CHARS = 500

V = TypeVar("V", bound="Version")


class Version(models.Model):
    """Subclasses add their content, name the fields numbering is within (``scope_fields``)
    and say what their diff compares (:meth:`diff_text`)."""

    scope_fields: tuple[str, ...] = ()

    number = models.PositiveIntegerField(editable=False)
    note = models.CharField(
        max_length=NOTE_MAX_CHARS, blank=True, help_text="what changed, and why"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    is_demo = models.BooleanField(default=False, help_text="demo data (make demo)")

    class Meta:
        abstract = True

    def scope(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.scope_fields}

    def diff_text(self) -> str:  # pragma: no cover - every subclass says
        raise NotImplementedError

    def previous(self):
        """The version before this one in its scope, or None for the first."""
        return (
            type(self)
            ._default_manager.filter(**self.scope(), number__lt=self.number)
            .order_by("-number")
            .first()
        )

    def diff(self) -> Diff:
        """What changed since the previous version (the first: all of it, added)."""
        before = self.previous()
        return text_diff(before.diff_text() if before is not None else "", self.diff_text())


def version_save(version: V, *, attempts: int = 3) -> V:
    """Number ``version`` (the next in its scope) and insert it, in a savepoint: two versions
    saved at once in one scope get consecutive numbers (a clash on the unique number is tried
    again), never the same one."""
    model = type(version)
    for attempt in range(attempts):
        try:
            with transaction.atomic():
                top = model._default_manager.filter(**version.scope()).aggregate(m=Max("number"))
                version.number = (top["m"] or 0) + 1
                version.save(force_insert=True)
            return version
        except IntegrityError:
            if attempt == attempts - 1:
                raise ValidationError(
                    "another version was saved at the same moment; save again"
                ) from None
            version.pk = None
    raise AssertionError("unreachable")


def first_or_create(
    model: type[V], *, lookup: dict[str, Any], build: Callable[[], V]
) -> tuple[V, bool]:
    """The version matching ``lookup``, else the one ``build()`` makes, numbered and saved
    (``created`` says which); a concurrent save of the same content is found, not doubled."""
    found = model._default_manager.filter(**lookup).first()
    if found is not None:
        return found, False
    try:
        return version_save(build()), True
    except (IntegrityError, ValidationError):
        found = model._default_manager.filter(**lookup).first()
        if found is None:
            raise
        return found, False
