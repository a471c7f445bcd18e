"""Writes for judges: create one (validated, the field named), and the judge that holds
judgments imported from elsewhere."""

from __future__ import annotations

from typing import Any

from judging.models import Judge


def judge_create(*, name: str, **fields: Any) -> Judge:
    judge = Judge(name=name, **fields)
    judge.full_clean(exclude=["judge_id"])  # names the field: template, api_key_env, model, ...
    judge.save()
    return judge


def imported_judge_get_or_create(*, name: str, model: str = "") -> Judge:
    judge = Judge.objects.filter(name=name).first()
    if judge is None:
        judge = judge_create(
            name=name, backend=Judge.Backend.IMPORTED, model=model, structured_output=False
        )
    return judge
