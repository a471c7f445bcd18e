"""Fixtures of the import/export tests: the example file, and the ``bench`` dataset imported
from it."""

from __future__ import annotations

import pytest

from benchmarks.models import Dataset
from tests.benchmarks.import_export.support import EXAMPLES, run, write_jsonl


@pytest.fixture
def examples_file(tmp_path):
    return write_jsonl(tmp_path / "examples.jsonl", EXAMPLES)


@pytest.fixture
def bench(examples_file):
    run("import_procedures", str(examples_file), "--dataset", "bench")
    return Dataset.objects.get(name="bench", version="v1")
