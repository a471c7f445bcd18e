"""The scorer-pack registry: one :class:`PackScorer` per name (``procbench``,
``longproc-countdown``, ``scirecipe`` …), used by ``manage.py score``, by the console's scoring
runs and by solve-mode studies. Pure: no Django imports.

A pack scorer reads one record (a dict in the benchmark's own JSONL shape), checks it
(``validate`` raises :class:`RecordError` naming the field), scores it (``score`` returns the
metrics as a flat dict of numbers plus an optional ``breakdown``), and summarises many scored
rows (``summarize``: mean of each metric and ``n``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Number = float | int | None


class RecordError(ValueError):
    """A record that does not have the scorer's shape; the message names the field.

    ``field`` (optional) is the offending field's name, so that callers can show it apart
    (``manage.py score`` prints ``FILE:LINE: field 'gold': …``)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        return f"field '{self.field}': {self.message}" if self.field else self.message


@dataclass(frozen=True)
class Scored:
    metrics: dict[str, Number]
    breakdown: dict[str, Any] = field(default_factory=dict)


def mean_summary(metrics: Sequence[str], rows: Sequence[Mapping[str, Number]]) -> dict[str, Any]:
    """Mean of each metric over the rows where it is defined, plus ``n`` (rows scored)."""
    out: dict[str, Any] = {}
    for key in metrics:
        vals = [float(r[key]) for r in rows if r.get(key) is not None]
        out[key] = sum(vals) / len(vals) if vals else None
    out["n"] = len(rows)
    return out


@dataclass(frozen=True)
class PackScorer:
    name: str
    metrics: tuple[str, ...]
    score: Callable[..., Scored]  # score(record, **options) -> Scored
    description: str = ""
    summarize: Callable[[Sequence[Mapping[str, Number]]], dict[str, Any]] | None = None
    # The pack's named options ([FLAG] choices) with their documented defaults; ``score`` takes
    # them as keyword arguments (``score(record)`` uses the defaults).
    options: Mapping[str, Any] = field(default_factory=dict)
    # True for packs that run generated code (benchmarks.packs.sandbox): their scoring runs go
    # to the ``sandbox`` Celery queue (settings.CELERY_SANDBOX_QUEUE).
    sandboxed: bool = False

    def score_with(self, record: Mapping[str, Any], options: Mapping[str, Any] | None = None):
        """``score(record, **options)`` after checking every option name is one of the pack's."""
        options = dict(options or {})
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            known = ", ".join(sorted(self.options)) or "none"
            raise ValueError(
                f"unknown option(s) {', '.join(unknown)} for {self.name}; known: {known}"
            )
        return self.score(record, **options) if options else self.score(record)

    def summary(self, rows: Sequence[Mapping[str, Number]]) -> dict[str, Any]:
        if self.summarize is not None:
            return self.summarize(rows)
        return mean_summary(self.metrics, rows)


_REGISTRY: dict[str, PackScorer] = {}


def register(scorer: PackScorer) -> PackScorer:
    if scorer.name in _REGISTRY and _REGISTRY[scorer.name] is not scorer:
        raise ValueError(f"scorer pack {scorer.name!r} is registered twice")
    _REGISTRY[scorer.name] = scorer
    return scorer


def _load_builtin() -> None:
    # Each pack module registers its scorers on import; add new pack modules here.
    import importlib

    for module in ("procbench", "longproc", "longproc_code", "scirecipe", "customplans"):
        try:
            importlib.import_module(f"benchmarks.packs.{module}")
        except ModuleNotFoundError as exc:  # a pack not written yet
            if exc.name != f"benchmarks.packs.{module}":
                raise


def get_pack(name: str) -> PackScorer:
    _load_builtin()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise KeyError(f"unknown scorer {name!r}; known: {known}") from None


def pack_names() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def require_field(record: Mapping[str, Any], name: str, types: type | tuple[type, ...], what: str):
    """``record[name]`` when present and of ``types`` (bools never count as numbers), else a
    :class:`RecordError` naming the field and saying what was expected."""
    if not isinstance(record, Mapping):
        raise RecordError(f"expected a JSON object, got {type(record).__name__}")
    if name not in record:
        raise RecordError(f"is required ({what})", field=name)
    value = record[name]
    bad_bool = isinstance(value, bool) and bool not in (
        types if isinstance(types, tuple) else (types,)
    )
    if bad_bool or not isinstance(value, types):
        raise RecordError(f"must be {what}, got {json_type(value)}", field=name)
    return value


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type (for error messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__
