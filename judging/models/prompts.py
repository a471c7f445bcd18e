"""Judge prompts as versions (:mod:`core.versions`): a prompt's ``name`` (``judge_h3``, the
H.3 prompt of seed 000 Figure 22) and its texts 1, 2, … . Version 1 of ``judge_h3`` is the
text shipped in ``judging/prompts/judge_h3.txt``; a judge names the version it runs
(:attr:`judging.models.Judge.prompt_version`), and its ``judge_id`` hashes that text, so a
judge of the shipped text keeps the id it had before prompts were versioned."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from core.versions import Version, first_or_create
from judging import prompting


def _name_valid(value: str) -> None:
    if not prompting.is_template_name(value):
        raise ValidationError(
            "lowercase letters, digits, '_' and '-' (at most 64, starting with a letter or digit)"
        )


class PromptVersionManager(models.Manager):
    def shipped(self, name: str):
        """The version holding the text shipped as ``judging/prompts/<name>.txt`` (made, as the
        next version of ``name``, when missing: version 1 on a fresh database); None when no
        such file ships."""
        try:
            text = prompting.load_template(name)
        except ValueError:
            return None
        sha = prompting.text_sha256(text)
        version, _ = first_or_create(
            self.model,
            lookup={"name": name, "sha256": sha},
            build=lambda: self.model(name=name, text=text, sha256=sha, note="shipped text"),
        )
        return version


class PromptVersion(Version):
    scope_fields = ("name",)

    name = models.CharField(
        max_length=64,
        default=prompting.DEFAULT_TEMPLATE,
        validators=[_name_valid],
        help_text="the prompt this is a version of (judge_h3: the H.3 judge prompt)",
    )
    text = models.TextField(
        help_text="the template: {goal}, {reference_steps} and {steps} are filled in; "
        "'Return only valid json.' is appended when sent"
    )
    sha256 = models.CharField(max_length=64, editable=False)

    objects = PromptVersionManager()

    class Meta:
        ordering = ["name", "number"]
        constraints = [
            models.UniqueConstraint(fields=["name", "number"], name="prompt_version_number"),
            models.UniqueConstraint(fields=["name", "sha256"], name="prompt_version_text_once"),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.number}"

    def diff_text(self) -> str:
        return self.text
