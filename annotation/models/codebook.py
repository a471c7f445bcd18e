"""The critical-failure codebook as versions (:mod:`core.versions`): version 1 is the codebook
shipped in :mod:`annotation.codebook`; a study names the version its annotators read
(:attr:`annotation.models.Study.codebook_version`), as the paper iterated its codebook
(seed 000 §4.1)."""

from __future__ import annotations

import hashlib
import json

from django.db import models

from annotation.codebook import CODEBOOK
from annotation.codebook_text import as_json, codebook_text
from core.versions import Version, first_or_create


def content_sha256(content: dict) -> str:
    blob = json.dumps(content, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CodebookVersionManager(models.Manager):
    def shipped(self):
        """The version holding the shipped codebook (made when missing: version 1 on a fresh
        database)."""
        content = as_json(CODEBOOK)
        sha = content_sha256(content)
        version, _ = first_or_create(
            self.model,
            lookup={"sha256": sha},
            build=lambda: self.model(content=content, sha256=sha, note="shipped codebook"),
        )
        return version

    def latest(self):
        """The newest version (the shipped one on a fresh database): a new study's default."""
        return self.order_by("-number").first() or self.shipped()


class CodebookVersion(Version):
    content = models.JSONField(
        help_text="definition, question, l1_note, kinds, acceptable, critical_examples, "
        "acceptable_examples (the shape of annotation/codebook.py)"
    )
    sha256 = models.CharField(max_length=64, editable=False, unique=True)

    objects = CodebookVersionManager()

    class Meta:
        ordering = ["number"]
        constraints = [
            models.UniqueConstraint(fields=["number"], name="codebook_version_number"),
        ]

    def __str__(self) -> str:
        return f"codebook v{self.number}"

    def diff_text(self) -> str:
        return codebook_text(self.content)
