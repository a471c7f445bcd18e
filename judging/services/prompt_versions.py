"""Writes of judge prompt versions: a new version of a prompt (from the console, the API or
``bench`` with a prompt file of its own). Versions are never edited; a judge names one."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from core.text import check_text
from core.versions import NOTE_MAX_CHARS, first_or_create, version_save
from judging import prompting
from judging.models import PromptVersion


def _checked(*, name: str, text: str, note: str) -> None:
    """The text gate, the name, a text that can be rendered, the note's length."""
    check_text(name, "name")
    check_text(text, "text")
    check_text(note, "note")
    if not prompting.is_template_name(name):
        raise ValidationError(
            {"name": "lowercase letters, digits, '_' and '-' (at most 64 characters)"}
        )
    problems = prompting.prompt_text_errors(text)
    if problems:
        raise ValidationError({"text": problems})
    if len(note) > NOTE_MAX_CHARS:
        raise ValidationError({"note": f"at most {NOTE_MAX_CHARS} characters"})
    PromptVersion.objects.shipped(name)  # a shipped prompt's own text stays its version 1


def prompt_version_check(*, name: str, text: str, note: str = "") -> None:
    """What :func:`prompt_version_create` refuses, by field (the console's form shows it)."""
    _checked(name=name, text=text, note=note)
    same = PromptVersion.objects.filter(name=name, sha256=prompting.text_sha256(text)).first()
    if same is not None:
        raise ValidationError({"text": f"this text is already {same} (nothing changed)"})


@transaction.atomic
def prompt_version_create(
    *,
    text: str,
    name: str = prompting.DEFAULT_TEMPLATE,
    note: str = "",
    author=None,
    is_demo: bool = False,
) -> PromptVersion:
    """The next version of prompt ``name``; a text it already has is refused, naming the
    version that holds it."""
    prompt_version_check(name=name, text=text, note=note)
    sha = prompting.text_sha256(text)
    return version_save(
        PromptVersion(name=name, text=text, sha256=sha, note=note, author=author, is_demo=is_demo)
    )


@transaction.atomic
def prompt_version_for_text(
    *, text: str, name: str = prompting.DEFAULT_TEMPLATE, note: str = "", author=None
) -> tuple[PromptVersion, bool]:
    """The version of ``name`` holding ``text``, made as its next version when none does
    (``created`` says which): ``bench`` with a prompt file the project does not ship."""
    _checked(name=name, text=text, note=note)
    sha = prompting.text_sha256(text)
    return first_or_create(
        PromptVersion,
        lookup={"name": name, "sha256": sha},
        build=lambda: PromptVersion(name=name, text=text, sha256=sha, note=note, author=author),
    )
