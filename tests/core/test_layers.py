"""The dependency direction of DESIGN.md, checked on the source, in the layer order of
:data:`tests.support.layers.LAYERS` (lowest first). A module may import its own layer and the
layers below it, never one above (imports inside functions count too); config/urls.py only
includes app URLconfs.

The module graph is built from the AST of every module (migrations aside), with two kinds of
edges:

- imports: ``import a.b`` and ``from a import b`` point at module ``a.b`` when it is one, else
  at ``a`` (its ``__init__``); imports inside functions count (they run, only later), imports
  under ``if TYPE_CHECKING:`` do not (they never run);
- names in strings: a string literal (docstrings aside) that is a project module's dotted path
  (``"judging.urls"``), a name defined at the top of one (``"core.middleware.CSPMiddleware"``,
  an ``import_string`` target) or the registered name of a Celery task (``"core.run_chunk"``,
  pointing at the module that defines it) points at that module: what it names is imported
  when the string is used.

On that graph: no circle (a module never reaches, by import or by name, a module that reaches
it back; two modules that need each other share a third, or one registers itself with the
other, as run types do in :mod:`core.runs.registry`), no module names a layer above its own
(``config``, where the apps are wired together by name — settings, URLconf, beat schedule —
only by name, never by import), and no module imports or names another's private (``_name``)
names."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.layers import LAYERS

ROOT = Path(__file__).resolve().parents[2]
RANK = {name: i for i, name in enumerate(LAYERS)}
WIRING = "config"  # the layer that names every app by string (settings, URLconf, beat)
# what a process's entry (wsgi, asgi, celery, a server command) names to find its settings
# (DJANGO_SETTINGS_MODULE): Django loads it before any project code, nothing imports it
SETTINGS_MODULE = "config.settings"


def imported_packages(path: Path) -> set[str]:
    tree = _tree(path)
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


@functools.cache
def _parse(text: str, filename: str) -> ast.Module:
    return ast.parse(text, filename=filename)


def _tree(path: Path) -> ast.Module:
    return _parse(path.read_text(), str(path))


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
    for node in _run_time_nodes(_tree(path)):
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
        if (root / layer).is_dir()
        for p in (root / layer).rglob("*.py")
        if "migrations" not in p.parts
    }


# --- names in strings -----------------------------------------------------------------------


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a module defines at its top (functions, classes, assignments, imports)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _task_names(tree: ast.Module) -> set[str]:
    """The names of the Celery tasks a module registers (``@shared_task(name="...")``,
    ``@app.task(name="...")``)."""
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for deco in node.decorator_list:
            func = deco.func if isinstance(deco, ast.Call) else None
            called = getattr(func, "id", None) or getattr(func, "attr", None) or ""
            if called.endswith("task"):
                for kw in deco.keywords:
                    if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                        found.add(kw.value.value)
    return found


@dataclass(frozen=True)
class Project:
    """What a dotted string can name: the modules, what each defines, the Celery tasks."""

    modules: dict[str, Path]
    defined: dict[str, set[str]]
    tasks: dict[str, str]  # task name -> the module that registers it

    @classmethod
    def of(cls, modules: dict[str, Path]) -> Project:
        trees = {name: _tree(path) for name, path in modules.items()}
        tasks = {task: name for name, tree in trees.items() for task in _task_names(tree)}
        return cls(modules, {n: _top_level_names(t) for n, t in trees.items()}, tasks)


def _docstrings(tree: ast.AST) -> set[int]:
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def named_in_strings(path: Path, name: str, project: Project) -> list[tuple[str, str | None, int]]:
    """``(module, name in it or None, line)`` for each string literal of ``path`` (module
    ``name``; docstrings and ``TYPE_CHECKING`` blocks aside) that names a project module, a
    top-level name of one or a Celery task (its module)."""
    tree = _tree(path)
    docs = _docstrings(tree)
    found = []
    for node in _run_time_nodes(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        value = node.value
        if id(node) in docs or "." not in value or value == SETTINGS_MODULE:
            continue
        if value in project.tasks:
            found.append((project.tasks[value], None, node.lineno))
        elif value in project.modules:
            found.append((value, None, node.lineno))
        else:
            module, _, attr = value.rpartition(".")
            if module in project.modules and attr in project.defined[module]:
                found.append((module, attr, node.lineno))
    return found


# --- the graph --------------------------------------------------------------------------------


def references_of(path: Path, name: str, project: Project) -> list[tuple[str, str | None, int]]:
    """What module ``name`` imports or names in a string: ``(module, name or None, line)``."""
    return [
        *imports_of(path, name, set(project.modules)),
        *named_in_strings(path, name, project),
    ]


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules it imports or names in a string."""
    project = Project.of(modules)
    return {
        name: {target for target, _, _ in references_of(path, name, project) if target != name}
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


def upward_references(modules: dict[str, Path]) -> list[str]:
    """Each import or dotted string of a module that points at a layer above its own (the
    wiring layer names apps by string: only its imports count)."""
    project = Project.of(modules)
    found = []
    for name, path in modules.items():
        layer = name.split(".")[0]
        refs = imports_of(path, name, set(modules))
        if layer != WIRING:
            refs += named_in_strings(path, name, project)
        for target, what, line in refs:
            above = target.split(".")[0]
            if RANK.get(above, -1) > RANK.get(layer, len(LAYERS)):
                found.append(f"{name}:{line} -> {target}{'.' + what if what else ''}")
    return sorted(found)


def private_imports(modules: dict[str, Path]) -> list[str]:
    """``from m import _x``, ``m._x`` (``m`` an imported project module) and a dotted string
    naming ``m._x``, in another module than ``m``."""
    names = set(modules)
    project = Project.of(modules)
    found = []
    for name, path in modules.items():
        imports = imports_of(path, name, names)
        found += [
            f"{name}:{line} imports {target}.{what}"
            for target, what, line in imports
            if what and what.startswith("_") and not what.startswith("__") and target != name
        ]
        found += [
            f"{name}:{line} names {target}.{what}"
            for target, what, line in named_in_strings(path, name, project)
            if what and what.startswith("_") and not what.startswith("__") and target != name
        ]
        bound = {}
        for node in _run_time_nodes(_tree(path)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in names:
                        bound[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    for target, what, _ in imports:
                        if what is None and target.endswith(f".{alias.name}"):
                            bound[alias.asname or alias.name] = target
        for node in ast.walk(_tree(path)):
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


# --- the project --------------------------------------------------------------------------------


@pytest.mark.parametrize("layer", LAYERS[1:])
def test_no_layer_imports_a_higher_one(layer):
    upward = {
        f"{path.relative_to(ROOT)} imports {pkg}"
        for path in sources(layer)
        for pkg in imported_packages(path)
        if RANK[pkg] > RANK[layer]
    }
    assert not upward, sorted(upward)


def test_no_module_names_a_higher_layer_by_import_or_string():
    found = upward_references(project_modules())
    assert not found, found


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


def test_validation_sits_between_judging_and_demo(tmp_path):
    assert RANK["judging"] < RANK["validation"] < RANK["demo"]
    bad = tmp_path / "m.py"
    bad.write_text("from validation.alt_test.stats import alt_test\n")
    assert {pkg for pkg in imported_packages(bad) if RANK[pkg] > RANK["judging"]} == {"validation"}


def test_the_import_graph_has_no_circle():
    circles = import_circles(import_graph(project_modules()))
    assert not circles, circles


def test_the_graph_sees_the_names_in_strings():
    """The graph is not only imports: the settings' dotted paths, the URLconf's includes and a
    Celery task's name are edges (so a circle closed by one of them is seen)."""
    graph = import_graph(project_modules())
    assert "core.middleware" in graph["config.settings"]  # MIDDLEWARE
    assert "judging.urls" in graph["config.urls"]  # include("judging.urls")
    assert "core.tasks" in graph["config.celery"]  # beat's "core.runs_resume_orphans"
    assert "benchmarks.llm.openai_compat" in graph["benchmarks.llm.registry"]  # import_string


def test_no_module_imports_another_modules_private_names():
    found = private_imports(project_modules())
    assert not found, found


# --- the checker, on planted projects ---------------------------------------------------------


def test_the_checker_sees_an_upward_import(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("def f():\n    from judging.models import Judge\n")
    assert imported_packages(bad) == {"judging"}


def _plant(root: Path, files: dict[str, str], layers=("app",)) -> dict[str, Path]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return project_modules(root, layers)


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


def test_the_checker_sees_a_circle_closed_by_a_dotted_string(tmp_path):
    """The loop a dotted path used to hide: an executor names its batch adapter by string,
    the adapter's module imports the executor's."""
    modules = _plant(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/execution.py": (
                '"""Names app.batch_mode.Adapter in its docstring: not an edge."""\n'
                "def store(): ...\n"
                "class Executor:\n"
                '    batch_adapter_path = "app.batch_mode.Adapter"\n'
            ),
            "app/batch_mode.py": "from app.execution import store\nclass Adapter: ...\n",
        },
    )
    assert import_circles(import_graph(modules)) == [["app.batch_mode", "app.execution"]]
    # the same string naming what the module does not define is no edge
    _plant(tmp_path, {"app/batch_mode.py": "from app.execution import store\n"})
    assert import_circles(import_graph(project_modules(tmp_path, ("app",)))) == []


def test_the_checker_sees_a_circle_closed_by_a_task_name(tmp_path):
    """A service that sends a task by its registered name, the task calling the service."""
    modules = _plant(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/tasks.py": (
                "from celery import shared_task\n"
                '@shared_task(name="app.apply")\n'
                "def apply(pk):\n"
                "    from app.hooks import apply_one\n"
                "    return apply_one(pk)\n"
            ),
            "app/hooks.py": (
                "from celery import current_app\n"
                "def apply_one(pk): ...\n"
                'def send(pk): current_app.tasks["app.apply"].apply_async([pk])\n'
            ),
        },
    )
    assert import_circles(import_graph(modules)) == [["app.hooks", "app.tasks"]]


def test_the_checker_sees_a_higher_layer_named_in_a_string(tmp_path):
    modules = _plant(
        tmp_path,
        {
            "config/__init__.py": "",
            "config/settings.py": 'MIDDLEWARE = ["core.mw.M"]\n',  # the wiring: by name, fine
            "core/__init__.py": "",
            "core/mw.py": "class M: ...\n",
            "core/roles.py": 'WRITES = {"judging.models.Judge", "judging.judge"}\n',
            "judging/__init__.py": "",
            "judging/models.py": "class Judge: ...\n",
        },
        layers=("config", "core", "judging"),
    )
    assert upward_references(modules) == ["core.roles:1 -> judging.models.Judge"]


def test_the_checker_sees_a_private_import(tmp_path):
    modules = _plant(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/a.py": "def _h(): ...\ndef h(): return _h()\n",
            "app/b.py": "from app.a import _h, h\n",
            "app/c.py": "from app import a as m\nm._h()\n",
            "app/d.py": "from app.a import h\n",
            "app/e.py": 'PATH = "app.a._h"\n',
        },
    )
    assert private_imports(modules) == [
        "app.b:1 imports app.a._h",
        "app.c:2 uses app.a._h",
        "app.e:1 names app.a._h",
    ]
