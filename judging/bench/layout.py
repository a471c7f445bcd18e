"""Where ``bench`` writes, as the reference lays it out, and what the files already hold::

    <out_root>/<run_name>_<generator_id>/
        generations.jsonl, generation_manifest.json, manifest.json
        judgments/<short_model>_<judge_id>/
            judgments.jsonl, judge_manifest.json
            aggregate/summary.json, aggregate/by_topic.csv

``bench judge`` (judge-only) judges ``paths.generations`` (default
``<out_root>/generations.jsonl``) into ``<out_root>/judgments/<short_model>_<judge_id>/``;
``paths.judgments`` moves the judgments file (its manifest and aggregates go beside it).
Pure: no Django.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judging.bench.config import SuiteConfig
from judging.bench.spec import ModelSpec


@dataclass(frozen=True)
class RunLayout:
    """The files of one generation run and of its judge."""

    root: Path  # <out_root>/<run_name>_<generator_id>, or out_root for judge-only
    generations: Path
    judgments: Path

    @property
    def generation_manifest(self) -> Path:
        return self.generations.parent / "generation_manifest.json"

    @property
    def pipeline_manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def judge_dir(self) -> Path:
        return self.judgments.parent

    @property
    def judge_manifest(self) -> Path:
        return self.judge_dir / "judge_manifest.json"

    @property
    def summary(self) -> Path:
        return self.judge_dir / "aggregate" / "summary.json"

    @property
    def by_topic(self) -> Path:
        return self.judge_dir / "aggregate" / "by_topic.csv"


def model_layout(config: SuiteConfig, model: ModelSpec) -> RunLayout:
    """A model's run under ``bench gen``/``run`` (``paths.generations`` and ``paths.judgments``
    override the files, as in the reference)."""
    root = config.out_root / config.run_dir_name(model)
    generations = config.generations_path or root / "generations.jsonl"
    judgments = config.judgments_path or (
        root / "judgments" / config.judge_dir_name() / "judgments.jsonl"
    )
    return RunLayout(root=root, generations=generations, judgments=judgments)


def judge_only_layout(config: SuiteConfig) -> RunLayout:
    """``bench judge``: the generations file of ``paths`` (or under ``out_root``)."""
    root = config.out_root
    generations = config.generations_path or root / "generations.jsonl"
    judgments = config.judgments_path or (
        root / "judgments" / config.judge_dir_name() / "judgments.jsonl"
    )
    return RunLayout(root=root, generations=generations, judgments=judgments)


def iter_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The objects of a JSONL output file; blank and unreadable lines are skipped (a line cut
    by a crash), as the reference's reader does."""
    if not path.exists():
        return
    with path.open("r", encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                yield value


def records_by_id(path: Path) -> dict[str, dict[str, Any]]:
    """Records by ``source_example_id``; a later record for an id replaces an earlier one."""
    out: dict[str, dict[str, Any]] = {}
    for rec in iter_jsonl(path):
        ident = rec.get("source_example_id")
        if isinstance(ident, str) and ident.strip():
            out[ident.strip()] = rec
    return out


def existing_ids(path: Path) -> set[str]:
    return set(records_by_id(path))


def append_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    """Append whole lines. A last line cut short by a crash (no newline: never a whole record)
    is dropped first, so it cannot swallow the next record."""
    if not records:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.stat().st_size:
        with path.open("rb+") as handle:
            data = handle.read()
            if not data.endswith(b"\n"):
                handle.truncate(data.rfind(b"\n") + 1)
    with path.open("a", encoding="utf-8") as handle:
        for rec in records:
            handle.write(json.dumps(rec, ensure_ascii=False) + "\n")


def write_json(path: Path, payload: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
