"""Heavy libraries imported where they are used, not when a module is imported.

Every web process imports the URLconf, so every module a view imports; numpy, scipy,
krippendorff and statsmodels there cost each gunicorn worker ~165 MiB though an annotator's
pages never compute a statistic. A statistics module names them through :func:`lazy_module`
instead of ``import``: the name is bound at once, the library is imported on the first
attribute read (``np.array``), in whichever process computes something::

    from core.lazy import lazy_module

    np = lazy_module("numpy")
    sps = lazy_module("scipy.stats")

After the first read the proxy costs one attribute lookup more than the module itself.
tests/core/test_web_process_imports.py checks that serving the item path imports none of them.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """Stands for the module ``name`` until an attribute is read, then imports it."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def _load(self) -> ModuleType:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return module

    def __getattr__(self, attr: str):
        return getattr(self._load(), attr)

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r} ({state})>"


def lazy_module(name: str) -> LazyModule:
    """A stand-in for ``import name`` that imports on first use (see the module's text)."""
    return LazyModule(name)
