"""Keep vLLM's engine load working in a process that has imported numba.

vLLM's CPU platform, while loading an engine, rebinds its Triton kernels by scanning every
module in ``sys.modules`` (``vllm.triton_utils.dispatcher._rebind_kernels``): for each module
attribute that has a ``__dict__`` it reads ``vars(value).get("kernel")``. numba's llvmlite
exposes ``llvmlite.binding.ffi.lib``, a ``__slots__`` object whose ``__getattr__`` answers any
name, ``__dict__`` included, with a wrapped function of the shared library (unlike
``ctypes.CDLL``, which it duck-types and which refuses dunder names). ``vars(lib)`` is then not a
dict and the load fails with ``AttributeError: '_lib_fn_wrapper' object has no attribute
'get'``. numba is in any process that has used ``ppi_py`` (``validation.ppi.stats``), so a worker
(or a test session) that computed a PPI estimate could no longer load a vLLM engine.

:func:`make_llvmlite_scan_safe` makes llvmlite's library wrapper refuse dunder names as
``ctypes.CDLL`` does; llvmlite itself never asks its wrapper for one. It is idempotent and does
nothing when llvmlite is not imported (a later import is made safe at the next engine load).
"""

from __future__ import annotations

import sys
from typing import Any

_MARK = "_how2review_dunder_safe"


def make_llvmlite_scan_safe() -> bool:
    """Make ``llvmlite.binding.ffi._lib_wrapper`` refuse dunder names; True if it was patched now."""
    ffi = sys.modules.get("llvmlite.binding.ffi")
    wrapper = getattr(ffi, "_lib_wrapper", None)
    if not isinstance(wrapper, type) or getattr(wrapper, _MARK, False):
        return False
    original = wrapper.__getattr__

    def __getattr__(self: Any, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return original(self, name)

    wrapper.__getattr__ = __getattr__
    setattr(wrapper, _MARK, True)
    return True
