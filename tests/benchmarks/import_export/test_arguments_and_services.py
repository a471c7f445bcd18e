"""What both kinds of import and export share: unknown or overlong dataset and generator names
are clear errors before anything is read, and the import services take lines as the commands
take files, refusing without writing."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError

from benchmarks.models import Dataset, Generator
from tests.benchmarks.import_export.support import EXAMPLES, gens_for, run

pytestmark = pytest.mark.django_db


def test_unknown_dataset_and_generator_are_clear_errors(bench):
    with pytest.raises(CommandError, match="--dataset nope: no dataset named 'nope'"):
        run("export_procedures", "--dataset", "nope")
    with pytest.raises(CommandError, match=r"no dataset bench@v9"):
        run("export_procedures", "--dataset", "bench", "--version", "v9")
    with pytest.raises(CommandError, match="--generator: no generator named 'ghost'"):
        run("export_generations", "--generator", "ghost")


def test_services_accept_lines_and_refuse_without_writing():
    from benchmarks.services.imports import ImportRefused, generations_import, procedures_import

    lines = [json.dumps(r) for r in EXAMPLES]
    report = procedures_import(dataset="svc", lines=lines)
    assert (report.created, report.unchanged, report.updated) == (3, 0, 0)
    with pytest.raises(ImportRefused) as err:
        generations_import(
            generator="g", dataset="svc", lines=[json.dumps(gens_for(["doc-1"])[0]), "{bad"]
        )
    assert [(e.line, e.field) for e in err.value.errors] == [(2, None)] and err.value.total == 1
    assert not Generator.objects.exists()
    with pytest.raises(ValueError, match="exactly one of path= or lines="):
        procedures_import(dataset="svc", lines=lines, path="x.jsonl")


def test_overlong_names_are_refused_before_reading(examples_file):
    with pytest.raises(CommandError, match="--dataset must be 1 to 128 characters, got 129"):
        run("import_procedures", str(examples_file), "--dataset", "d" * 129)
    with pytest.raises(CommandError, match="--version must be 1 to 32 characters"):
        run("import_procedures", str(examples_file), "--dataset", "d", "--version", "v" * 33)
    with pytest.raises(CommandError, match="--generator must be 1 to 128 characters"):
        run("import_generations", str(examples_file), "--generator", "g" * 200)
    assert not Dataset.objects.exists()
