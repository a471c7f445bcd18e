"""The dependency direction of DESIGN.md, checked on the source: core ← benchmarks ←
annotation ← judging ← demo. A module may import its own layer and the layers below it, never
one above (imports inside functions count too); config/urls.py only includes app URLconfs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["config", "core", "benchmarks", "mining", "annotation", "judging", "demo"]
RANK = {name: i for i, name in enumerate(LAYERS)}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found & set(LAYERS)


def sources(layer: str) -> list[Path]:
    return sorted(p for p in (ROOT / layer).rglob("*.py") if "migrations" not in p.parts)


@pytest.mark.parametrize("layer", LAYERS[1:])
def test_no_layer_imports_a_higher_one(layer):
    upward = {
        f"{path.relative_to(ROOT)} imports {pkg}"
        for path in sources(layer)
        for pkg in imported_packages(path)
        if RANK[pkg] > RANK[layer]
    }
    assert not upward, sorted(upward)


def test_config_imports_no_app_and_urls_only_include():
    for path in sources("config"):
        assert imported_packages(path) <= {"config"}, path
    tree = ast.parse((ROOT / "config" / "urls.py").read_text())
    calls = [
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    ]
    assert set(calls) <= {"path", "include"}, calls


def test_the_checker_sees_an_upward_import(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("def f():\n    from judging.models import Judge\n")
    assert imported_packages(bad) == {"judging"}
