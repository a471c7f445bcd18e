"""The documentation: the generated reference pages name every management command and every
environment variable the code reads, and the README stays short and links only to pages that
exist. (``make lint`` builds the whole site with ``mkdocs build --strict`` as well.)"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from django.core.management import get_commands

from tests.support.layers import LAYERS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PACKAGES = LAYERS  # every first-party package

# Written independently of the generator on purpose: a plain text search for the ways the code
# reads a named environment variable, so a reader the generator's AST scan misses fails here.
ENV_READ = re.compile(
    r"""(?:environ\.get|environ\[|getenv|env_bool|env_int|env_list|_seconds)\(?\s*["']([A-Z][A-Z0-9_]+)["']"""
)


def _reference():
    spec = importlib.util.spec_from_file_location("docs_reference", DOCS / "hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _source_env_names() -> set[str]:
    names = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            names.update(ENV_READ.findall(path.read_text(encoding="utf-8")))
    return names


@pytest.fixture(scope="module")
def reference():
    return _reference()


@pytest.fixture(scope="module")
def reads(reference):
    """The scan of the packages (~4 s of CPU), made once for the module's tests."""
    return reference.environment_reads()


def test_settings_page_names_every_environment_variable_the_code_reads(reference, reads):
    page = reference.settings_page(reads)
    names = _source_env_names()
    # the settings module's own reads are all there, and the scan found them
    for must in ("DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY", "H2R_JUDGE_LANES"):
        assert must in names
    entries = page.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    missing = sorted(n for n in names if f'<span id="{n.lower()}"></span>`{n}`' not in entries)
    assert not missing, f"docs/reference/settings.md has no entry for {missing}"


def test_settings_page_carries_defaults_and_the_comment_above_the_read(reads):
    by_name = {read.name: read for read in reads}
    lanes = by_name["H2R_JUDGE_LANES"]
    assert (lanes.default, lanes.setting, lanes.path) == (
        "4",
        "JUDGE_RUN_LANES",
        "config/settings.py",
    )
    assert "lanes" in lanes.comment
    assert by_name["WORKER_BEACON_SECONDS"].default == "10"  # os.environ.get(X) or 10


def test_settings_scan_finds_a_new_variable(reference, tmp_path, monkeypatch):
    """A variable added anywhere in the packages appears without anyone editing the docs."""
    module = tmp_path / "core" / "new_setting.py"
    module.parent.mkdir()
    module.write_text(
        "import os\n\n# How many widgets a run may hold.\n"
        'WIDGETS = int(os.environ.get("H2R_NEW_WIDGETS", "3"))\n'
    )
    scan = reference.env_scan
    monkeypatch.setattr(scan, "ROOT", tmp_path)
    monkeypatch.setattr(scan, "PACKAGES", ("core",))
    (read,) = scan.environment_reads()
    assert (read.name, read.default, read.comment) == (
        "H2R_NEW_WIDGETS",
        "'3'",
        "How many widgets a run may hold.",
    )


def test_commands_page_documents_every_management_command(reference):
    page = reference.commands_page()
    commands = get_commands()
    assert {"mine", "bench", "load_demo", "migrate", "drf_create_token"} <= set(commands)
    rows = set(re.findall(r"^\| \[?`([a-z0-9_]+)`", page, flags=re.M))
    missing = sorted(name for name in commands if name not in rows)
    assert not missing, f"docs/reference/commands.md has no row for {missing}"
    own = [name for name, app in commands.items() if app.split(".")[0] in PACKAGES]
    for name in own:  # each of ours with the help its own parser prints
        assert f"### {name} {{#{name}}}" in page
        assert f"usage: manage.py {name}" in page
    assert "--- manage.py bench judge ---" in page  # subcommands too


def test_readme_is_short_and_links_only_to_pages_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#[^)\s]*)?\)", readme)
    assert len(links) >= 10, "the README links into the docs"
    missing = sorted({link for link in links if not (ROOT / link).is_file()})
    assert not missing, f"README.md links to missing files {missing}"
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for link in links:
        if link.endswith(".md"):
            assert link.removeprefix("docs/") in nav, f"{link} is not in the site's nav"
    for command in ("make demo", "make test"):
        assert command in readme


def test_api_page_lists_every_operation_of_the_schema_with_who_may_call_it(reference):
    from drf_spectacular.generators import SchemaGenerator

    assert reference.API_MARKER in (DOCS / "reference" / "api.md").read_text(encoding="utf-8")
    table = reference.api_endpoints_table()
    schema = SchemaGenerator().get_schema(request=None, public=True)
    rows = {
        m.group(1): m.group(2).strip()
        for m in re.finditer(r"^\| `([A-Z]+ /api/[^`]*)` \|[^|]*\| ([^|]*) \|", table, flags=re.M)
    }
    operations = {
        f"{method.upper()} {path}"
        for path, ops in schema["paths"].items()
        for method in ops
        if method in ("get", "post", "put", "patch", "delete")
    }
    assert len(operations) > 50
    assert set(rows) == operations
    assert rows["POST /api/judge-runs/"] == "admin"  # launches are the admins'
    assert rows["POST /api/judge-runs/{id}/cancel/"] == "admin"
    assert rows["GET /api/judge-runs/"] == "researcher, admin"
    assert rows["POST /api/studies/"] == "researcher, admin"  # researchers manage studies
    assert rows["POST /api/auth/token/"] == "anyone"
    assert "| `GET /api/datasets/` | List datasets with counts | researcher, admin | yes |" in table


def test_changelog_page_is_the_changelog_with_links_into_the_site(reference):
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    page = reference.changelog_page()
    assert page.startswith("# Changelog")
    links = re.findall(r"\]\((docs/[^)#\s]+)", changelog)
    assert links, "the changelog links into the docs"
    missing = sorted({link for link in links if not (ROOT / link).is_file()})
    assert not missing, f"CHANGELOG.md links to missing files {missing}"
    assert "](docs/" not in page
    assert page == changelog.replace("](docs/", "](")
