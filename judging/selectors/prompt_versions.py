"""Reads of judge prompt versions (their comparison on a study is
:mod:`validation.prompt_versions`)."""

from __future__ import annotations

from judging.models import PromptVersion


def prompt_version_list():
    return PromptVersion.objects.select_related("author").order_by("name", "number")
