"""Dataset references resolved against the database (``core.refs`` meaning, one resolver)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from benchmarks.models import Dataset, Procedure
from benchmarks.selectors.catalog import DatasetRefError, dataset_q, dataset_resolve
from core.refs import DatasetRef

pytestmark = pytest.mark.django_db


@pytest.fixture
def datasets():
    return {
        "v1": Dataset.objects.create(name="bench", version="v1"),
        "v2": Dataset.objects.create(name="bench", version="v2"),
        "at": Dataset.objects.create(name="team@lab", version="2024"),
        "solo": Dataset.objects.create(name="solo", version="v7"),
    }


def test_resolve(datasets):
    assert dataset_resolve("bench@v2") == datasets["v2"]
    assert dataset_resolve("team@lab@2024") == datasets["at"]  # the last @ splits
    assert dataset_resolve("solo") == datasets["solo"]  # no version: the only one
    assert dataset_resolve(DatasetRef("bench", "v1")) == datasets["v1"]
    assert dataset_resolve("bench", default_version="v1") == datasets["v1"]
    assert dataset_resolve("bench@v2", default_version="v1") == datasets["v2"]


@pytest.mark.parametrize(
    "ref, message",
    [
        ("nope", "no dataset named 'nope'"),
        ("bench@v9", "no dataset bench@v9"),
        ("bench", r"dataset 'bench' has several versions \(v1, v2\); choose one as bench@VERSION"),
        ("bench@", "has no version after '@'"),
        ("@v1", "has no name before '@'"),
        ("", "is empty"),
    ],
)
def test_resolve_errors_say_why(datasets, ref, message):
    with pytest.raises(DatasetRefError, match=message):
        dataset_resolve(ref)
    assert issubclass(DatasetRefError, ValueError)


def test_dataset_q_filters_by_id_name_or_name_at_version(datasets):
    def names(value):
        return sorted(str(d) for d in Dataset.objects.filter(dataset_q(value)))

    assert len(names("bench")) == 2  # a name alone: every version
    assert names("bench@v2") == [str(datasets["v2"])]
    assert names(str(datasets["solo"].pk)) == [str(datasets["solo"])]
    with pytest.raises(ValueError, match="no version"):
        dataset_q("bench@")


def test_api_filter_refuses_a_malformed_reference(datasets, make_user):
    Procedure.objects.create(dataset=datasets["v2"], source_example_id="a", goal="g", steps=["s"])
    client = APIClient()
    client.force_authenticate(make_user("res", role="researcher"))
    ok = client.get("/api/procedures/", {"dataset": "bench@v2"})
    assert ok.status_code == 200 and ok.json()["count"] == 1
    bad = client.get("/api/procedures/", {"dataset": "bench@"})
    assert bad.status_code == 400 and "no version after '@'" in bad.json()["dataset"][0]
    bad = client.get("/api/generations/", {"dataset": "@v2"})
    assert bad.status_code == 400 and "no name before '@'" in bad.json()["dataset"][0]
