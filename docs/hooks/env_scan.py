"""The scan behind ``reference/settings.md`` (see ``reference.py``): every read of a named
environment variable in the first-party packages, found in their syntax trees, with its default,
the Django setting it sets and the comment written above it; and the Django settings the apps
read with a default. Pure: reads source files, imports nothing of the project."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("config", "core", "benchmarks", "mining", "annotation", "judging", "validation", "demo")
SKIP_PARTS = {"migrations", "__pycache__"}


@dataclass
class EnvRead:
    name: str
    path: str
    line: int
    default: str | None
    setting: str | None
    comment: str


@dataclass
class SettingRead:
    name: str
    default: str
    reads: list[str] = field(default_factory=list)
    description: str = ""


def _source_files() -> list[Path]:
    files = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if not SKIP_PARTS.intersection(path.relative_to(ROOT).parts):
                files.append(path)
    return files


def _is_environ(node: ast.AST) -> bool:
    """``os.environ`` (or a bare ``environ``)."""
    if isinstance(node, ast.Attribute) and node.attr == "environ":
        return True
    return isinstance(node, ast.Name) and node.id == "environ"


def _direct_env_name_arg(call: ast.Call) -> ast.AST | None:
    """The name argument of ``os.environ.get(X, …)`` / ``os.getenv(X, …)``, else None."""
    func = call.func
    if not call.args or not isinstance(func, ast.Attribute):
        return None
    if func.attr == "get" and _is_environ(func.value):
        return call.args[0]
    if func.attr == "getenv" and isinstance(func.value, ast.Name) and func.value.id == "os":
        return call.args[0]
    return None


def _reader_functions(trees: dict[Path, ast.Module]) -> set[str]:
    """Functions whose first parameter is the name of an environment variable they read."""
    readers: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef) or not node.args.args:
                continue
            param = node.args.args[0].arg
            for inner in ast.walk(node):
                arg = _direct_env_name_arg(inner) if isinstance(inner, ast.Call) else None
                if isinstance(arg, ast.Name) and arg.id == param:
                    readers.add(node.name)
    return readers


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments (``TOKEN_ENV = "PROLIFIC_API_TOKEN"``)."""
    found = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def _text(node: ast.AST | None, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    return None


def _comment_above(lines: list[str], lineno: int) -> str:
    """The ``#`` lines right above line ``lineno`` (1-based), joined; '' when none."""
    out: list[str] = []
    index = lineno - 2
    while index >= 0 and lines[index].strip().startswith("#"):
        text = lines[index].strip().lstrip("#").strip()
        if text.startswith(("---", "===")) or set(text) <= set("-=— "):  # a section rule
            break
        out.insert(0, text)
        index -= 1
    return " ".join(part for part in out if part)


def _inline_comment(lines: list[str], first: int, last: int) -> str:
    parts = []
    for line in lines[first - 1 : last]:
        if "  # " in line:
            parts.append(line.split("  # ", 1)[1].strip())
    return " ".join(parts)


def _parents(tree: ast.Module) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _statement(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST:
    while node in parents and not isinstance(node, ast.stmt):
        node = parents[node]
    return node


def _setting_target(stmt: ast.AST) -> str | None:
    targets = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign):
        targets = [stmt.target]
    for target in targets:
        if isinstance(target, ast.Name) and target.id.isupper():
            return target.id
        if isinstance(target, ast.Subscript):  # DATABASES["default"]["TEST"] = …
            base = target
            while isinstance(base, ast.Subscript):
                base = base.value
            if isinstance(base, ast.Name) and base.id.isupper():
                return base.id
    return None


def _comment_below(lines: list[str], lineno: int) -> str:
    """The ``#`` lines right below line ``lineno``: the comment opening an ``if`` block."""
    out = []
    index = lineno
    while index < len(lines) and lines[index].strip().startswith("#"):
        out.append(lines[index].strip().lstrip("#").strip())
        index += 1
    return " ".join(part for part in out if part)


def docstring_bullets(tree: ast.Module) -> dict[str, str]:
    """``- ``NAME`` …: text`` items of the module's docstring, by each NAME they open with."""
    doc = ast.get_docstring(tree) or ""
    found: dict[str, str] = {}
    items = [" ".join(item.split()) for item in doc.split("\n- ")[1:]]
    for item in items:
        head = item.split(":", 1)[0]
        for name in head.split("``")[1::2]:
            name = name.split("=")[0].strip()
            if name.isupper():
                found.setdefault(name, item.split("\n\n")[0])
    return found


def _naming_text(name: str, tree: ast.Module, lines: list[str]) -> str:
    """A comment block, else a docstring paragraph, of the module that names the variable."""
    block: list[str] = []
    for line in [*lines, ""]:
        if line.strip().startswith("#"):
            text = line.strip().lstrip("#").strip()
            if not text.startswith(("---", "===")):
                block.append(text)
            continue
        if block and any(name in text for text in block):
            return " ".join(block)
        block = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef):
            for paragraph in (ast.get_docstring(node) or "").split("\n\n"):
                if name in paragraph:
                    items = [i for i in ("\n" + paragraph).split("\n- ")[1:] if name in i]
                    return " ".join((items[0] if items else paragraph).split())
    return ""


def _argument_help(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    """The ``help=`` of the call the read is an argument of (a command's ``add_argument``)."""
    parent = parents.get(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.Call):
            for keyword in parent.keywords:
                if keyword.arg == "help" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
        parent = parents.get(parent)
    return ""


def _describe(
    name: str, stmt: ast.AST, parents: dict[ast.AST, ast.AST], lines: list[str], bullets: dict
) -> str:
    """The comment above the statement (or above an enclosing statement, or opening its ``if``
    block), its inline comment, else the module docstring's item for the name, else the
    enclosing function's docstring when it names the variable."""
    node: ast.AST | None = stmt
    while node is not None and not isinstance(node, ast.Module):
        if isinstance(node, ast.stmt):
            comment = _comment_above(lines, node.lineno)
            # a short simple statement's own inline comments; a long one's (a dict of options)
            # or a block's speak of their other lines
            end = node.end_lineno or node.lineno
            compound = isinstance(
                node, ast.FunctionDef | ast.ClassDef | ast.If | ast.For | ast.With
            )
            last = node.lineno if compound or end - node.lineno > 2 else end
            inline = _inline_comment(lines, node.lineno, last)
            if not comment and isinstance(node, ast.If):
                comment = _comment_below(lines, node.lineno)
            if comment or inline:
                return " ".join(part for part in (comment, inline) if part)
        if name in bullets:
            return bullets[name]
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            doc = ast.get_docstring(node)
            if doc and name in doc:
                return " ".join(doc.split("\n\n")[0].split())
        node = parents.get(node)
    return bullets.get(name, "")


def environment_reads() -> list[EnvRead]:
    """Every read of a named environment variable in the first-party packages."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in _source_files()}
    readers = _reader_functions(trees)
    reads: list[EnvRead] = []
    for path, tree in trees.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        constants = _constants(tree)
        parents = _parents(tree)
        bullets = docstring_bullets(tree)
        for node in ast.walk(tree):
            name_node, default_node = None, None
            if isinstance(node, ast.Call):
                arg = _direct_env_name_arg(node)
                func = node.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if arg is not None:
                    name_node = arg
                elif called in readers and node.args:
                    name_node = node.args[0]
                else:
                    continue
                if len(node.args) > 1:
                    default_node = node.args[1]
                for keyword in node.keywords:
                    if keyword.arg == "default":
                        default_node = keyword.value
                if isinstance(func, ast.Attribute) and func.attr == "setdefault":
                    continue
                parent = parents.get(node)
                if (
                    default_node is None
                    and isinstance(parent, ast.BoolOp)
                    and isinstance(parent.op, ast.Or)
                    and parent.values[0] is node
                ):
                    default_node = parent.values[-1]  # os.environ.get(X) or default
            elif isinstance(node, ast.Subscript) and _is_environ(node.value):
                if not isinstance(node.ctx, ast.Load):
                    continue
                name_node = node.slice
            elif (
                isinstance(node, ast.Compare)
                and len(node.ops) == 1
                and isinstance(node.ops[0], ast.In | ast.NotIn)
                and _is_environ(node.comparators[0])
            ):
                name_node = node.left
            else:
                continue
            name = _text(name_node, constants)
            if not name or not name.isupper():
                continue  # a name computed at run time (a judge's api_key_env), not a setting
            stmt = _statement(node, parents)
            reads.append(
                EnvRead(
                    name=name,
                    path=str(path.relative_to(ROOT)),
                    line=node.lineno,
                    default=ast.unparse(default_node) if default_node is not None else None,
                    setting=_setting_target(stmt) if path.name == "settings.py" else None,
                    comment=(
                        (_comment_above(lines, node.lineno) if node.lineno != stmt.lineno else "")
                        or _argument_help(node, parents)
                        or _describe(name, stmt, parents, lines, bullets)
                        or _naming_text(name, tree, lines)
                    ),
                )
            )
    return reads


def app_settings() -> list[SettingRead]:
    """Django settings read with a default by the apps: ``getattr(settings, "NAME", default)``
    and ``annotation.conf``'s ``_get("NAME", default)``."""
    found: dict[str, SettingRead] = {}
    for path in _source_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bullets = docstring_bullets(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            func = node.func
            is_getattr = (
                isinstance(func, ast.Name)
                and func.id == "getattr"
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == "settings"
            )
            is_conf = isinstance(func, ast.Name) and func.id == "_get"
            if not (is_getattr or is_conf):
                continue
            name_node = node.args[1] if is_getattr else node.args[0]
            default = node.args[2] if is_getattr and len(node.args) > 2 else None
            if is_conf:
                default = node.args[1]
            if not (isinstance(name_node, ast.Constant) and isinstance(name_node.value, str)):
                continue
            entry = found.setdefault(
                name_node.value,
                SettingRead(name_node.value, ast.unparse(default) if default is not None else ""),
            )
            entry.reads.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            entry.description = entry.description or bullets.get(name_node.value, "")
    return sorted(found.values(), key=lambda s: s.name)


def settings_module_names() -> list[str]:
    tree = ast.parse((ROOT / "config" / "settings.py").read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.isupper() and target.id not in names:
                    names.append(target.id)
    return names
