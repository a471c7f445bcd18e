"""The run types the engine knows: each concrete run model (:class:`core.runs.models.Run`) with
its executor, its batch adapter and its launch preparation, registered once by its app's
``AppConfig.ready()``::

    registry.register(
        JudgeRun,
        executor=JudgeRunExecutor(),           # the type's work, one chunk at a time
        batch_adapter=JudgeRunBatches(),       # its side of a provider's Batch API (optional)
        prepare_launch=judge_run_launch_prepare,  # what a launch leaves to the worker (optional)
    )

The engine (:mod:`core.runs.engine`) and the batch driver
(:mod:`benchmarks.services.batch_runs`) ask here by model; no model names a service, so an app's
models never point back up at its services, and a service never reaches a module that imports
it through a dotted string. ``manage.py check`` (and every server or worker start) reports a
concrete run model that no app registered (:func:`check_run_types`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from core.runs.models import Run

if TYPE_CHECKING:
    from core.runs.engine import RunExecutor
    from core.runs.lease import Lease


@dataclass(frozen=True)
class RunType:
    """One run type as the engine sees it.

    - ``executor``: the type's :class:`core.runs.engine.RunExecutor` (one instance per process).
    - ``batch_adapter``: its :class:`benchmarks.services.batch_runs.BatchAdapter` when the type
      can send its requests through a provider's Batch API, else None.
    - ``prepare_launch(run, lease)``: the part of a launch the worker finishes, holding the
      run's lease, before the executor's work (a judge run selects and hashes its items; a
      mining batch reads its upload). Called before every chunk: it does nothing once done.
    """

    model: type[Run]
    executor: RunExecutor
    batch_adapter: Any = None
    prepare_launch: Callable[[Run, Lease], None] | None = None

    @property
    def label(self) -> str:
        return self.model._meta.label


_TYPES: dict[str, RunType] = {}


def register(
    model: type[Run],
    *,
    executor: RunExecutor,
    batch_adapter: Any = None,
    prepare_launch: Callable[[Run, Lease], None] | None = None,
) -> RunType:
    """Register ``model``'s run type (from its app's ``ready()``). Registering the same parts
    again replaces the entry (Django calls ``ready()`` again when the installed apps change);
    another executor class for a model already registered is a configuration error."""
    if not (isinstance(model, type) and issubclass(model, Run)) or model._meta.abstract:
        raise ImproperlyConfigured(f"{model!r} is not a concrete run model")
    label = model._meta.label
    known = _TYPES.get(label)
    if known is not None and type(known.executor) is not type(executor):
        raise ImproperlyConfigured(
            f"run type {label} registered twice: {type(known.executor).__qualname__} and "
            f"{type(executor).__qualname__}"
        )
    entry = RunType(model, executor, batch_adapter, prepare_launch)
    _TYPES[label] = entry
    return entry


def run_type(model: type[Run]) -> RunType:
    """The registered run type of ``model``; ``LookupError`` naming it when none is."""
    entry = _TYPES.get(model._meta.label)
    if entry is None:
        raise LookupError(
            f"{model._meta.label} is not a registered run type: register it in its app's "
            "AppConfig.ready() (core.runs.registry.register)"
        )
    return entry


def run_types() -> list[RunType]:
    """Every registered run type, by label."""
    return [_TYPES[label] for label in sorted(_TYPES)]


def check_run_types(app_configs=None, **_kwargs) -> list[checks.CheckMessage]:
    """A system check: every concrete run model of the installed apps has a registered type."""
    return [
        checks.Error(
            f"{model._meta.label} is a run model that no app registered",
            hint="call core.runs.registry.register(...) in its app's AppConfig.ready()",
            obj=model,
            id="core.E004",
        )
        for model in apps.get_models()
        if issubclass(model, Run) and model._meta.label not in _TYPES
    ]
