"""Form types by name (or dotted path), like the LLM backends' registry
(``benchmarks/llm/registry.py``). Pure: no Django imports.

Add a form type: one module under ``annotation/form_types/`` with a :class:`FormType`
subclass, its name below, and its partial ``templates/annotation/forms/_<name>.html``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from annotation.form_types.base import BoundForm, FormConfigError, FormType

__all__ = [
    "FORM_TYPES",
    "FormConfigError",
    "form_checked",
    "form_choices",
    "form_for",
    "get_form_type",
]

DEFAULT = "critical_failure"
FORM_TYPES: dict[str, str] = {
    "critical_failure": "annotation.form_types.critical_failure.CriticalFailureForm",
    "rating": "annotation.form_types.rating.RatingForm",
    "customplans": "annotation.form_types.customplans.CustomPlansForm",
    "pairwise": "annotation.form_types.pairwise.PairwiseForm",
    "solve": "annotation.form_types.solve.SolveForm",
}
_CACHE: dict[str, FormType] = {}


def _load(path: str) -> FormType:
    module_name, _, attr = path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise FormConfigError("form_type", f"cannot load {path!r}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, FormType)):
        raise FormConfigError("form_type", f"{path!r} is not a FormType subclass")
    return cls()


def get_form_type(name: str) -> FormType:
    """The form type registered as ``name``, or loaded from a dotted path."""
    name = (name or DEFAULT).strip()
    if name not in _CACHE:
        if name in FORM_TYPES:
            _CACHE[name] = _load(FORM_TYPES[name])
        elif "." in name:
            _CACHE[name] = _load(name)
        else:
            known = ", ".join(FORM_TYPES)
            raise FormConfigError("form_type", f"unknown form type {name!r}; known: {known}")
    return _CACHE[name]


def form_for(name: str, config: Mapping[str, Any] | None) -> BoundForm:
    """The form type with a study's settings, checked (FormConfigError names the setting)."""
    form_type = get_form_type(name)
    if config is not None and not isinstance(config, Mapping):
        raise FormConfigError("form_config", "must be a JSON object")
    return BoundForm(form_type, form_type.clean_config(config or {}))


def form_checked(name: str, config: Mapping[str, Any] | None) -> BoundForm:
    """:func:`form_for` plus what the settings need being there (a solve form's scorer pack):
    the check a study gets when it is saved."""
    form = form_for(name, config)
    form.type.check_available(form.config)
    return form


def form_choices() -> list[tuple[str, str]]:
    return [(name, get_form_type(name).title) for name in FORM_TYPES]
