"""The dependency direction of DESIGN.md, checked on the source: core ← benchmarks ← mining ←
annotation ← judging ← validation ← demo. A module may import its own layer and the layers
below it, never one above (imports inside functions count too; judging never imports
validation); config/urls.py only includes app URLconfs.

Inside the layers, the module import graph has no circle and no module imports another's
private (``_name``) names. The graph is built from the AST of every module (migrations aside):
``import a.b`` and ``from a import b`` point at module ``a.b`` when it is one, else at ``a``
(its ``__init__``); imports inside functions count (they run, only later), imports under
``if TYPE_CHECKING:`` do not (they never run). Two modules that need each other at run time
share a third instead (:mod:`mining.documents`), or one reaches the other by a registered name
(the engine sends its chunk task as ``core.run_chunk``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["config", "core", "benchmarks", "mining", "annotation", "judging", "validation", "demo"]
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


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _run_time_nodes(tree: ast.AST):
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` (their else runs)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if _type_checking(node):
            stack.extend([node.test, *node.orelse])
        else:
            stack.extend(ast.iter_child_nodes(node))


def imports_of(path: Path, name: str, modules: set[str]) -> list[tuple[str, str | None, int]]:
    """``(module, imported name or None, line)`` for each project module ``path`` (module
    ``name``) imports at run time; a ``from m import x`` whose ``x`` is a module names it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in _run_time_nodes(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target:
                    found.append((target, None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    found.append((f"{base}.{alias.name}", None, node.lineno))
                elif base in modules:
                    found.append((base, alias.name, node.lineno))
    return found


def project_modules(root: Path = ROOT, layers=LAYERS) -> dict[str, Path]:
    return {
        module_name(p, root): p
        for layer in layers
        for p in (root / layer).rglob("*.py")
        if "migrations" not in p.parts
    }


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    names = set(modules)
    return {
        name: {target for target, _, _ in imports_of(path, name, names) if target != name}
        for name, path in modules.items()
    }


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def private_imports(modules: dict[str, Path]) -> list[str]:
    """``from m import _x`` and ``m._x`` (``m`` an imported project module) in another module."""
    names = set(modules)
    found = []
    for name, path in modules.items():
        imports = imports_of(path, name, names)
        found += [
            f"{name}:{line} imports {target}.{what}"
            for target, what, line in imports
            if what and what.startswith("_") and not what.startswith("__") and target != name
        ]
        bound = {}
        for node in _run_time_nodes(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in names:
                        bound[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    for target, what, _ in imports:
                        if what is None and target.endswith(f".{alias.name}"):
                            bound[alias.asname or alias.name] = target
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and bound[node.value.id] != name
            ):
                found.append(f"{name}:{node.lineno} uses {bound[node.value.id]}.{node.attr}")
    return sorted(found)


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


def test_validation_sits_between_judging_and_demo(tmp_path):
    assert RANK["judging"] < RANK["validation"] < RANK["demo"]
    bad = tmp_path / "m.py"
    bad.write_text("from validation.alt_test.stats import alt_test\n")
    assert {pkg for pkg in imported_packages(bad) if RANK[pkg] > RANK["judging"]} == {"validation"}


def test_the_import_graph_has_no_circle():
    circles = import_circles(import_graph(project_modules()))
    assert not circles, circles


def test_no_module_imports_another_modules_private_names():
    found = private_imports(project_modules())
    assert not found, found


def _plant(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return project_modules(root, ["app"])


def test_the_checker_sees_an_import_circle(tmp_path):
    modules = _plant(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/a.py": "from app.b import g\n",
            "app/b.py": "def g():\n    from app import c\n",
            "app/c.py": "import app.a\n",
            "app/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app import a\n",
            "app/e.py": "from . import d\n",
        },
    )
    assert import_circles(import_graph(modules)) == [["app.a", "app.b", "app.c"]]
    modules = _plant(tmp_path, {"app/d.py": "from .e import x\n"})
    assert ["app.d", "app.e"] in import_circles(import_graph(modules))


def test_the_checker_sees_a_private_import(tmp_path):
    modules = _plant(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/a.py": "def _h(): ...\ndef h(): return _h()\n",
            "app/b.py": "from app.a import _h, h\n",
            "app/c.py": "from app import a as m\nm._h()\n",
            "app/d.py": "from app.a import h\n",
        },
    )
    assert private_imports(modules) == ["app.b:1 imports app.a._h", "app.c:2 uses app.a._h"]
