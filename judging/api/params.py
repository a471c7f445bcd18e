"""Query parameters the judging and validation API views share: a bounded whole number, an
optional object id, judges by name, and the ``study`` + ``judge`` pair every validation
endpoint takes. A bad value is a 400 naming its parameter; an unknown id a 404."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from annotation.models import Study
from judging.models import Judge
from judging.selectors.verdicts import judges_by_names

MAX_RESAMPLES = 10000

JUDGES_PARAM = OpenApiParameter(
    "judges", OpenApiTypes.STR, description="comma-separated judge names (default: all)"
)


def int_param(request: Request, name: str, default: int | None, *, low: int, high: int):
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise ValidationError({name: f"expected a whole number from {low} to {high}, got {raw!r}"})
    return int(raw)


def optional_object(request: Request, name: str, model):
    """The ``model`` row whose id the query parameter ``name`` gives, or None when it is absent."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    if not raw.isdigit():
        raise ValidationError({name: f"expected an integer id, got {raw!r}"})
    return get_object_or_404(model, pk=int(raw))


def judges_param(request: Request, *, required_two: bool = False) -> list[Judge] | None:
    """The judges the ``judges`` parameter names (comma-separated), None when it names none;
    unknown names are a 400 (:class:`core.errors.FieldRefusal`)."""
    raw = request.query_params.get("judges", "")
    names = [n.strip() for n in raw.split(",") if n.strip()]
    if not names:
        return None
    judges = judges_by_names(names)
    if required_two and len(judges) < 2:
        raise ValidationError({"judges": "give at least two judge names"})
    return judges


def study_and_judge(request: Request) -> tuple[Study, Judge]:
    """The ``study`` (id) and ``judge`` (name) query parameters every validation endpoint takes:
    both named when missing (400), 404 for an unknown study, the judge found by name."""
    errors = {}
    study_id = int_param(request, "study", None, low=1, high=2**63 - 1)
    if study_id is None:
        errors["study"] = "required: a study id"
    name = request.query_params.get("judge", "").strip()
    if not name:
        errors["judge"] = "required: a judge name"
    if errors:
        raise ValidationError(errors)
    study = get_object_or_404(Study, pk=study_id)
    return study, judges_by_names([name], field="judge")[0]
