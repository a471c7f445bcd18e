"""The optional parts of the install: pyproject.toml's extras (``arrow``, ``s3``, ``keywords``).

``pip install -e .`` (``make demo``) installs what the app needs to run; a part that only some
uses need is an extra, imported where it is used. Its absence is :class:`ExtraMissing`, whose
message names the feature and the extra to install, never a bare ``ModuleNotFoundError``.
``make test`` installs every extra. Pure: no Django imports. (config/settings.py, which imports
no app, words the ``s3`` extra's absence the same way itself.)
"""

from __future__ import annotations

import importlib
from types import ModuleType


class ExtraMissing(ImportError):
    """A feature's optional extra is not installed; the message says what to install."""


def hint(*, extra: str, feature: str) -> str:
    return (
        f"{feature} needs the optional extra {extra!r}: pip install -e '.[{extra}]' "
        "(make test installs every extra)"
    )


def require(module: str, *, extra: str, feature: str) -> ModuleType:
    """``module`` imported, or :class:`ExtraMissing` naming ``extra`` and ``feature``."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (module + ".").startswith(exc.name + "."):
            raise  # the extra is there; something it needs is not
        raise ExtraMissing(hint(extra=extra, feature=feature)) from exc
