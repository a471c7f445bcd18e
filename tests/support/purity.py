"""Checks that pure computation modules stay pure: no Django import in any of their sources."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path
from types import ModuleType


def source_files(module: ModuleType) -> list[Path]:
    """The module's source file, or every module file of a package (its ``__init__`` first)."""
    path = Path(module.__file__)
    if path.name != "__init__.py":
        return [path]
    return [path] + [
        path.parent / f"{m.name}.py"
        for m in pkgutil.iter_modules([str(path.parent)])
        if not m.ispkg
    ]


def imported_names(path: Path) -> list[str]:
    """Every module named by an ``import`` or ``from … import`` in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module] + [
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    ]


def django_imports(module: ModuleType) -> dict[str, list[str]]:
    """``{file name: [django modules it imports]}`` for the files that import Django."""
    found = {}
    for path in source_files(module):
        names = [n for n in imported_names(path) if n == "django" or n.startswith("django.")]
        if names:
            found[path.name] = names
    return found
