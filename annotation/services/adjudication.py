"""Writes for adjudication: a researcher's final label for a disputed study item.

One :class:`~annotation.models_adjudication.Adjudication` per item. Recording again overwrites
the current label (last write wins) after appending the previous version to ``history``, so
every earlier decision stays readable. Bad input is a ``ValidationError`` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.labels import MAX_DESCRIPTION, MAX_FAILURES, MAX_NOTE, failure_errors
from annotation.models import Adjudication, StudyItem
from core.text import typed_text_error


def _steps(raw, *, field: str, upper: int) -> list[int]:
    """Step numbers from a list of ints or a text like ``"1, 3"``; errors name the field."""
    if isinstance(raw, str):
        parts = [p for p in raw.replace(";", ",").replace(" ", ",").split(",") if p]
        values = []
        for part in parts:
            if not part.isdigit():
                raise ValidationError(f"{field}: {part!r} is not a step number")
            values.append(int(part))
    elif isinstance(raw, (list, tuple)):
        values = raw
    elif raw is None:
        values = []
    else:
        raise ValidationError(f"{field}: expected a list of step numbers")
    out = set()
    for v in values:
        if not isinstance(v, int) or isinstance(v, bool):
            raise ValidationError(f"{field}: {v!r} is not a step number")
        if not 1 <= v <= upper:
            raise ValidationError(f"{field}: step {v} does not exist (this item has {upper})")
        out.add(v)
    return sorted(out)


def _failure(failure, *, number: int, n_l1: int, n_l2: int) -> tuple[dict, list[str]]:
    """One failure row, cleaned, and what is wrong with its description and steps."""
    where = f"Failure {number}"
    if not isinstance(failure, Mapping):
        return {}, [f"{where}: expected an object with description, l1_steps, l2_steps"]
    problems = []
    description = failure.get("description")
    if description is not None and not isinstance(description, str):
        problems.append(f"{where}: the description must be text")
        description = ""
    description = (description or "").strip()
    message = typed_text_error(description, f"{where} description", MAX_DESCRIPTION)
    if message:
        problems.append(message)
    steps = {}
    for key, label, upper in (("l1_steps", "L1", n_l1), ("l2_steps", "L2", n_l2)):
        raw = failure.get(key)
        message = typed_text_error(raw, f"{where} {label} steps")
        try:
            if message:
                raise ValidationError(message)
            steps[key] = _steps(raw, field=f"{where} {label} steps", upper=upper)
        except ValidationError as exc:
            problems.extend(exc.messages)
            steps[key] = ["?"]  # given, but not read: not "no step linked" as well
    return {"description": description, **steps}, problems


def adjudication_clean(
    *, item: StudyItem, has_failure, failures: Sequence[Mapping] | None, note: str
) -> tuple[bool, list[dict], str]:
    """Validate an adjudicated label against the item's L1/L2 steps: a failure label needs
    what the annotator's form needs (:func:`annotation.labels.failure_errors`). Every problem
    at once, a ``ValidationError`` keyed ``has_failure``, ``note``, ``failures`` or
    ``failure-<n>`` (the n-th failure)."""
    errors: dict[str, list[str]] = {}
    if not isinstance(has_failure, bool):
        errors["has_failure"] = ["Choose “critical failure” or “no critical failure”."]
    if not isinstance(note, str):
        errors["note"] = ["Note: expected text."]
        note = ""
    elif message := typed_text_error(note, "Note", MAX_NOTE):
        errors["note"] = [message]
    failures = list(failures or [])
    if has_failure is False and failures:
        errors["failures"] = ["Give no failures when the label is “no critical failure”."]
    elif len(failures) > MAX_FAILURES:
        errors["failures"] = [f"At most {MAX_FAILURES} failures."]
    n_l1 = len(item.generation.procedure.steps)
    n_l2 = len(item.generation.predicted_steps)
    cleaned = []
    for number, failure in enumerate(failures[:MAX_FAILURES], start=1):
        row, problems = _failure(failure, number=number, n_l1=n_l1, n_l2=n_l2)
        cleaned.append(row)
        if problems:
            errors.setdefault(f"failure-{number}", []).extend(problems)
    if has_failure is True and "failures" not in errors:
        for number, message in failure_errors(cleaned):
            key = f"failure-{number}" if number else "failures"
            if message not in errors.get(key, []):
                errors.setdefault(key, []).append(message)
    if errors:
        raise ValidationError(errors)
    return has_failure, cleaned, note.strip()


@transaction.atomic
def adjudication_record(
    *,
    item: StudyItem,
    has_failure,
    failures: Sequence[Mapping] | None = None,
    note: str = "",
    adjudicator=None,
) -> Adjudication:
    """Create or replace the item's adjudicated label; the replaced version goes to history."""
    if item.kind != StudyItem.Kind.REGULAR:
        raise ValidationError("item: only regular study items are adjudicated")
    has_failure, failures, note = adjudication_clean(
        item=item, has_failure=has_failure, failures=failures, note=note
    )
    current = Adjudication.objects.select_for_update().filter(item=item).first()
    if current is None:
        return Adjudication.objects.create(
            item=item,
            has_failure=has_failure,
            failures=failures,
            note=note,
            adjudicator=adjudicator,
        )
    current.history = [
        *current.history,
        {
            "has_failure": current.has_failure,
            "failures": current.failures,
            "note": current.note,
            "adjudicator": current.adjudicator.get_username() if current.adjudicator_id else "",
            "updated_at": current.updated_at.isoformat(),
            "replaced_at": timezone.now().isoformat(),
        },
    ]
    current.has_failure = has_failure
    current.failures = failures
    current.note = note
    current.adjudicator = adjudicator
    current.save()
    return current


def adjudication_form_data(data: Mapping[str, Sequence[str]]) -> dict:
    """The adjudication page's form as posted: ``has_failure`` ("1", "0" or ""), the failure
    rows (:func:`failures_from_form`) and the note, as the page shows them back."""
    return {
        "has_failure": data.get("has_failure", ""),
        "failures": failures_from_form(data),
        "note": data.get("note", ""),
    }


def adjudication_record_form(*, item: StudyItem, form: Mapping, adjudicator=None) -> Adjudication:
    """:func:`adjudication_record` from :func:`adjudication_form_data` (failures only count
    with the "failure" choice)."""
    choice = form["has_failure"]
    return adjudication_record(
        item=item,
        has_failure={"1": True, "0": False}.get(choice),
        failures=form["failures"] if choice == "1" else [],
        note=form["note"],
        adjudicator=adjudicator,
    )


def failures_from_form(data: Mapping[str, Sequence[str]]) -> list[dict]:
    """Failure rows of the adjudication form (``f-<i>-desc``, ``f-<i>-l1``, ``f-<i>-l2`` as
    text like ``"2, 3"``); rows left entirely blank are skipped. Steps are checked later."""
    indices = sorted(
        {int(k.split("-")[1]) for k in data if k.startswith("f-") and k.split("-")[1].isdigit()}
    )
    out = []
    for i in indices:
        desc, l1, l2 = (_first(data, f"f-{i}-{part}") for part in ("desc", "l1", "l2"))
        if not (desc.strip() or l1.strip() or l2.strip()):
            continue
        out.append({"description": desc, "l1_steps": l1, "l2_steps": l2})
    return out


def _first(data: Mapping, name: str) -> str:
    values = data.getlist(name) if hasattr(data, "getlist") else data.get(name)
    if isinstance(values, (list, tuple)):
        values = values[0] if values else ""
    return values or ""
