"""The generated reference pages of the docs site, written from the code at build time.

- ``reference/settings.md``: every environment variable the project reads, found by an AST scan
  of the first-party packages (``os.environ.get``/``os.environ[...]``/``os.getenv``, ``"X" in
  os.environ`` and any function that passes its first argument to one of those, such as
  ``config.env.env_int`` or ``config.celery._seconds``), with its default, the Django setting it
  sets, where it is read and the comment written above it; then the Django settings that apps
  read with a default (``getattr(settings, "NAME", default)``) and the settings module's names.
- ``reference/commands.md``: every management command ``django.core.management.get_commands()``
  knows, with the help its own argument parser prints.
- ``reference/api.md``: the hand-written overview, with its endpoint table (the marker
  ``<!-- api-endpoints -->``) written from the OpenAPI schema drf-spectacular generates, each
  operation with the roles its view's permission classes admit.
- ``changelog.md``: ``CHANGELOG.md`` at the repository root, its links made relative to the site.

The scan itself is ``env_scan.py`` beside this file. MkDocs runs :func:`on_files` and
:func:`on_page_markdown` (``hooks:`` in ``mkdocs.yml``); ``tests/core/test_docs.py`` calls
:func:`settings_page`, :func:`commands_page` and :func:`api_endpoints_table` directly. Nothing here is hand-kept: a new variable or command appears on
the next build.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # MkDocs loads hooks by path

import env_scan
from env_scan import PACKAGES, ROOT, environment_reads


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str | None) -> str:
    if text is None:
        return "–"
    text = text.replace("|", "\\|")
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def settings_page(reads: list[env_scan.EnvRead] | None = None) -> str:
    """The page; ``reads``: the scan's result where the caller has it already (one scan)."""
    reads = environment_reads() if reads is None else reads
    by_name: dict[str, list[env_scan.EnvRead]] = {}
    for read in reads:
        by_name.setdefault(read.name, []).append(read)
    out = io.StringIO()
    out.write(
        "# Settings and environment variables\n\n"
        '!!! note "Generated"\n'
        "    This page is written from the code each time the site is built "
        "(`docs/hooks/reference.py`): an AST scan of every place the packages read an "
        "environment variable, with the comment written above it. To document a variable, "
        "write the comment in the code.\n\n"
        "Everything that differs between machines comes from the environment; "
        "`config/settings.py` reads most of it, through the typed readers of `config/env.py` "
        "(`env_bool`: `1/0`, `true/false`, `yes/no`; `env_int`; `env_list`: comma separated). "
        "How the pieces fit on one or several machines: "
        "[Several machines](../guides/several-machines.md).\n\n"
        f"## Environment variables ({len(by_name)}) {{#environment-variables}}\n\n"
    )
    for name in sorted(by_name):
        group = by_name[name]
        group.sort(key=lambda r: r.path != "config/settings.py")
        defaults = sorted({r.default for r in group if r.default is not None})
        settings = sorted({r.setting for r in group if r.setting})
        where = ", ".join(sorted({f"`{r.path}:{r.line}`" for r in group}))
        comment = next((r.comment for r in group if r.comment), "")
        facts = [f"default {' or '.join(_code(d) for d in defaults) if defaults else '(unset)'}"]
        if settings:
            facts.append("sets " + ", ".join(f"`{s}`" for s in settings))
        facts.append(f"read in {where}")
        out.write(
            f'<span id="{name.lower()}"></span>`{name}`\n'
            f":   {' · '.join(facts)}\n\n"
            + (f"    {' '.join(comment.split())}\n\n" if comment else "")
        )
    app = env_scan.app_settings()
    out.write(
        f"\n## Django settings the apps read with a default ({len(app)}) {{#app-settings}}\n\n"
        "Set them in `config/settings.py` (or a settings module of your own); those marked "
        "*from the environment* are set there from the variable of the same or a similar name "
        "above.\n\n"
        "| setting | default in the app | read in | what the code says |\n|---|---|---|---|\n"
    )
    module_names = set(env_scan.settings_module_names())
    for entry in app:
        source = " (set in `config/settings.py`)" if entry.name in module_names else ""
        out.write(
            f"| `{entry.name}`{source} | {_code(entry.default) if entry.default else '–'} "
            f"| {', '.join(f'`{r}`' for r in entry.reads)} | {_cell(entry.description)} |\n"
        )
    names = env_scan.settings_module_names()
    out.write(
        f"\n## Names defined in `config/settings.py` ({len(names)})\n\n"
        + ", ".join(f"`{n}`" for n in names)
        + "\n"
    )
    return out.getvalue()


# --- management commands --------------------------------------------------------------------------


def _django_setup() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.apps import apps

    if not apps.ready:
        django.setup()


def command_names() -> dict[str, str]:
    _django_setup()
    from django.core.management import get_commands

    return dict(sorted(get_commands().items()))


def _help(parser: argparse.ArgumentParser) -> str:
    os.environ.setdefault("COLUMNS", "100")
    text = parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                text += f"\n--- {parser.prog} {sub_name} ---\n" + sub.format_help()
    return text


def commands_page() -> str:
    from django.core.management import load_command_class

    commands = command_names()
    own = {n: a for n, a in commands.items() if a.split(".")[0] in PACKAGES}
    other = {n: a for n, a in commands.items() if n not in own}
    out = io.StringIO()
    out.write(
        "# Management commands\n\n"
        '!!! note "Generated"\n'
        "    Written at build time from each command's own argument parser "
        "(`django.core.management.get_commands()`, "
        '`load_command_class(app, name).create_parser("manage.py", name)`): what '
        "`python manage.py NAME --help` prints.\n\n"
        f"## how2review's commands ({len(own)})\n\n"
        "| command | what it does (app) |\n|---|---|\n"
    )
    parsers = {}
    for name, app in own.items():
        command = load_command_class(app, name)
        parsers[name] = command.create_parser("manage.py", name)
        summary = " ".join((command.help or "").split())
        out.write(f"| [`{name}`](#{name}) | {_cell(summary)} (`{app}`) |\n")
    for name, parser in parsers.items():
        out.write(f"\n### {name} {{#{name}}}\n\n```text\n{_help(parser).rstrip()}\n```\n")
    out.write(
        f"\n## Commands of Django and the libraries ({len(other)})\n\n"
        "Their own documentation applies; the first line of each one's help:\n\n"
        "| command | from | what it does |\n|---|---|---|\n"
    )
    for name, app in other.items():
        try:
            summary = " ".join((load_command_class(app, name).help or "").split())
        except Exception as exc:  # noqa: BLE001 - a library command that cannot load is still listed
            summary = f"(not loadable here: {type(exc).__name__})"
        out.write(f"| `{name}` | `{app}` | {_cell(summary)} |\n")
    return out.getvalue()


# --- the API's endpoints ---------------------------------------------------------------------------

API_MARKER = "<!-- api-endpoints -->"
_ROLES = {
    "AllowAny": "anyone",
    "IsResearcherOrAdmin": "researcher, admin",
    "IsAdminRole": "admin",
    "IsAuthenticated": "any signed-in user",
}
_ACTION_WORDS = {
    "list": "The {res}, a page at a time",
    "retrieve": "One of the {res}",
    "create": "Create one of the {res}",
    "update": "Replace one of the {res}",
    "partial_update": "Update one of the {res}",
    "destroy": "Delete one of the {res}",
    "cancel": "Cancel one of the {res}",
    "resume": "Resume one of the {res}",
}


def _path_key(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


def _view_roles(callback, method: str) -> tuple[str, str | None]:
    """Who may call ``method`` on the view behind ``callback``, from its permission classes (a
    viewset's ``get_permissions`` is asked with the action the method maps to), and the action."""
    cls = callback.cls
    view = cls(**getattr(callback, "initkwargs", {}) or {})
    actions = getattr(callback, "actions", None) or {}
    view.action = actions.get(method.lower())
    view.request = None
    view.format_kwarg = None
    names = [type(p).__name__ for p in view.get_permissions()]
    roles = [_ROLES.get(name, f"`{name}`") for name in names] or ["anyone"]
    return " and ".join(roles), view.action


def _what(op: dict, path: str, action: str | None) -> str:
    """What an operation does: its summary, else the first sentence of its description, else
    words made from the view's action and the path's resource ("Cancel one of the judge runs")."""
    what = (op.get("summary") or "").strip()
    if not what:
        what = " ".join((op.get("description") or "").split()).split(". ")[0].rstrip(".")
    if what:
        return what
    parts = path.strip("/").split("/")[1:]
    first_param = next((i for i, s in enumerate(parts) if s.startswith("{")), len(parts))
    resource = " ".join(s.replace("-", " ") for s in parts[:first_param])
    default = f"The {(action or '').replace('_', ' ')} of one of the {{res}}"
    return _ACTION_WORDS.get(action or "", default).format(res=resource)


def api_endpoints_table() -> str:
    """Every operation of the OpenAPI schema: method and path, what it does, who may call it,
    and whether its answer is paginated."""
    _django_setup()
    from drf_spectacular.generators import SchemaGenerator

    generator = SchemaGenerator()
    schema = generator.get_schema(request=None, public=True)
    views = {
        (method.upper(), _path_key(path)): callback
        for path, _regex, method, callback in generator.endpoints
    }
    out = io.StringIO()
    operations = [
        (path, method, op)
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]
    out.write(
        f"{len(operations)} operations, from the schema the app serves at `/api/schema/`.\n\n"
        "| operation | what it does | who may call it | paged |\n|---|---|---|---|\n"
    )
    for path, method, op in operations:
        callback = views.get((method.upper(), _path_key(path)))
        roles, action = _view_roles(callback, method) if callback else ("–", None)
        what = _what(op, path, action)
        ok = op.get("responses", {}).get("200", {})
        ref = str(
            ok.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref", "")
        )
        paged = "yes" if ref.split("/")[-1].startswith("Paginated") else ""
        out.write(f"| `{method.upper()} {path}` | {_cell(what)} | {roles} | {paged} |\n")
    return out.getvalue()


# --- the changelog -----------------------------------------------------------------------------------


def changelog_page() -> str:
    """``CHANGELOG.md`` as a page of the site: links into ``docs/`` made relative to it."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.sub(r"\]\(docs/", "](", text)


# --- the MkDocs hook ------------------------------------------------------------------------------

GENERATED = {
    "reference/settings.md": settings_page,
    "reference/commands.md": commands_page,
    "changelog.md": changelog_page,
}


def on_files(files, config):
    from mkdocs.structure.files import File

    for uri, build in GENERATED.items():
        existing = files.get_file_from_path(uri)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, uri, content=build()))
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "reference/api.md" and API_MARKER in markdown:
        return markdown.replace(API_MARKER, api_endpoints_table())
    return markdown
