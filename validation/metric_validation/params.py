"""The metric ↔ human validation's options read from a request's query (page and API share
it): each bad value is a ``ParamError`` naming the parameter. Pure: no database, no request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import FieldRefusal
from validation.metric_validation.stats import DIRECTIONS, RULES

MAX_RESAMPLES = 10000


class ParamError(FieldRefusal):
    """The bad parameters, each named (the API's one error handler answers 400,
    :mod:`core.errors`); as text ``"name: message; …"`` (the page)."""


def _number(raw: str) -> float:
    value = float(raw)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError
    return value


def validation_params(query: Mapping[str, str]) -> dict[str, Any]:
    """``{study, pack, metric, options}`` from ``study``, ``pack``, ``metric``, ``rule``,
    ``cuts`` (comma-separated), ``threshold``, ``direction``, ``dimension``, ``bootstrap``,
    ``seed``; ``ParamError`` naming every bad one."""
    errors: dict[str, str] = {}
    get = lambda name: (query.get(name) or "").strip()  # noqa: E731
    study = get("study")
    if not study.isdigit():
        errors["study"] = "required: a study id"
    for name in ("pack", "metric"):
        if not get(name):
            errors[name] = f"required: a {name} name"
    options: dict[str, Any] = {}
    rule = get("rule") or "quantiles"
    if rule not in RULES:
        errors["rule"] = f"must be one of {', '.join(RULES)}"
    options["rule"] = rule
    if get("cuts"):
        try:
            options["cuts"] = [_number(c) for c in get("cuts").split(",")]
        except ValueError:
            errors["cuts"] = "comma-separated numbers, e.g. 0.3,0.6"
    elif rule == "thresholds":
        errors["cuts"] = "required with rule=thresholds: comma-separated cut points"
    if get("threshold"):
        try:
            options["threshold"] = _number(get("threshold"))
        except ValueError:
            errors["threshold"] = f"a number, got {get('threshold')!r}"
    direction = get("direction") or "low"
    if direction not in DIRECTIONS:
        errors["direction"] = f"must be one of {', '.join(DIRECTIONS)}"
    options["direction"] = direction
    if get("dimension"):
        options["dimension"] = get("dimension")
    for name, default, high in (("bootstrap", 1000, MAX_RESAMPLES), ("seed", 0, 2**32 - 1)):
        raw = get(name)
        if raw and (not raw.isdigit() or int(raw) > high):
            errors[name] = f"a whole number from 0 to {high}, got {raw!r}"
        value = int(raw) if raw.isdigit() else default
        options["n_resamples" if name == "bootstrap" else "seed"] = value
    if errors:
        raise ParamError(errors)
    return {"study": int(study), "pack": get("pack"), "metric": get("metric"), "options": options}


def error_field(message: str) -> str:
    """The parameter a selector's ``ValueError`` is about (its messages start with it)."""
    head = message.split(":", 1)[0].split(" ", 1)[0]
    return {"thresholds": "cuts"}.get(head, head if head in _FIELDS else "metric")


_FIELDS = ("study", "dimension", "rule", "cuts", "threshold", "direction")
