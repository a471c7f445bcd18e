"""core.refs: one meaning of ``name@version`` (pure tests)."""

from __future__ import annotations

import pytest

from core.refs import DatasetRef, parse_dataset_ref
from tests.support.purity import django_imports


@pytest.mark.parametrize(
    "text, expected",
    [
        ("bench", DatasetRef("bench", None)),
        ("bench@v2", DatasetRef("bench", "v2")),
        ("a@b@v3", DatasetRef("a@b", "v3")),  # the last @ splits
        ("  bench@v1\n", DatasetRef("bench", "v1")),  # whitespace around the whole is ignored
        ("my bench@2024-01", DatasetRef("my bench", "2024-01")),
    ],
)
def test_parse(text, expected):
    assert parse_dataset_ref(text) == expected


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "is empty"),
        ("   ", "is empty"),
        ("@v2", "has no name before '@'"),
        ("bench@", "has no version after '@'"),
        ("a@b@", "has no version after '@'"),
        ("@", "has no name before '@'"),
    ],
)
def test_malformed_references_name_the_problem(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_dataset_ref(text)


def test_not_text_is_refused():
    with pytest.raises(ValueError, match="is text"):
        parse_dataset_ref(3)


def test_str_round_trips_and_default_fills_only_a_missing_version():
    assert str(DatasetRef("a@b", "v3")) == "a@b@v3"
    assert parse_dataset_ref(str(DatasetRef("a@b", "v3"))) == DatasetRef("a@b", "v3")
    assert str(DatasetRef("bench")) == "bench"
    assert DatasetRef("bench").with_default("v1") == DatasetRef("bench", "v1")
    assert DatasetRef("bench", "v2").with_default("v1") == DatasetRef("bench", "v2")
    assert DatasetRef("bench").with_default(None) == DatasetRef("bench", None)


def test_refs_has_no_django_imports():
    import core.refs

    assert django_imports(core.refs) == {}
