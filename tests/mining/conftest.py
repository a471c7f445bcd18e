from __future__ import annotations

import json

import pytest

from tests.mining.script import MiningScript
from tests.support.llm_fixtures import llm_backend_config, llm_server  # noqa: F401


@pytest.fixture
def script(llm_server):  # noqa: F811
    s = MiningScript()
    llm_server.responder = s
    return s


@pytest.fixture
def mining_backends(llm_backend_config, script):  # noqa: F811
    return {"default": dict(llm_backend_config, price_in_per_mtok=2.0, price_out_per_mtok=8.0)}


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def write_jsonl(path, records) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines((rec if isinstance(rec, str) else json.dumps(rec)) + "\n" for rec in records)


def doc(i: int, marker: str = "", topic: str = "Food & Dining", **extra) -> dict:
    return {
        "id": f"d{i}",
        "url": f"https://example.org/{i}",
        "topic": topic,
        "text": f"Recipe {i} {marker}\nHow to bake bread number {i}. " + "Lorem ipsum. " * 5,
        **extra,
    }
