"""Command-line arguments that name benchmark data, one home for every app's commands:
each turns what the user typed into the row, or a ``CommandError`` naming the option.

- :func:`dataset_ref_argument`: ``NAME`` or ``NAME@VERSION`` parsed (:mod:`core.refs`), with the
  version of a separate ``--version`` option taking precedence;
- :func:`dataset_argument`: such a reference resolved to its dataset
  (:func:`~benchmarks.selectors.catalog.dataset_resolve`);
- :func:`generator_argument`: a generator by name;
- :func:`import_errors`: what an import service refuses, as a ``CommandError``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import CommandError

from benchmarks.models import Dataset, Generator
from benchmarks.selectors.catalog import DatasetRefError, dataset_resolve
from benchmarks.services.imports import ImportRefused
from core.refs import DatasetRef, parse_dataset_ref


def dataset_ref_argument(
    text: str, *, version: str | None = None, option: str = "--dataset"
) -> DatasetRef:
    """``text`` parsed as ``NAME[@VERSION]``; ``version`` (a ``--version`` option), when given,
    replaces the one in the text. ``CommandError`` naming the option when it is malformed."""
    try:
        ref = parse_dataset_ref(text)
    except ValueError as exc:
        raise CommandError(f"{option}: {exc}") from exc
    return DatasetRef(ref.name, version) if version else ref


def dataset_argument(
    ref: str | DatasetRef, *, option: str = "--dataset", default_version: str | None = None
) -> Dataset:
    """The dataset ``ref`` names; without a version ``default_version``, else the name's only
    version. ``CommandError("--dataset REF: why")`` when it names none or several."""
    try:
        return dataset_resolve(ref, default_version=default_version)
    except DatasetRefError as exc:
        raise CommandError(f"{option} {ref}: {exc}") from exc


def generator_argument(name: str, *, option: str = "--generator") -> Generator:
    """The generator called ``name``, or ``CommandError("--generator: no generator named …")``."""
    generator = Generator.objects.filter(name=name).first()
    if generator is None:
        raise CommandError(f"{option}: no generator named {name!r}")
    return generator


@contextmanager
def import_errors(*, file: str, dataset: str | None = None) -> Iterator[None]:
    """Around an import service call: a refused file, a dataset reference that names no single
    dataset, a bad value, or a file that cannot be read each become one ``CommandError``."""
    try:
        yield
    except ImportRefused as exc:
        raise CommandError(str(exc)) from exc
    except DatasetRefError as exc:
        raise CommandError(f"--dataset {dataset}: {exc}") from exc
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    except OSError as exc:
        raise CommandError(f"cannot read {file}: {exc.strerror or exc}") from exc
