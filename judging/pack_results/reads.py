"""Reads for the pack results pages: the query (scoring runs or a dataset, bootstrap options)
checked once for the page and the API, the scoring runs chosen, and their scored generations
as :class:`~judging.pack_results.common.Instance` rows.

A generation's result for a pack is ``Generation.pack_scores[pack]`` (``{"run", "metrics",
"breakdown"}``, :mod:`benchmarks.services.scoring_execution`); an instance is read only from
the run that wrote it, and only the item's gold fields the page names (not the whole gold).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models.fields.json import KeyTextTransform

from benchmarks.models import Dataset, Generation, ScoringRun
from judging.pack_results.common import Bootstrap, Instance
from judging.pack_results.registry import PackPage

MAX_RESAMPLES = 10_000
MAX_RUNS = 50
CACHE_SECONDS = 600  # a report at the paper's scale takes tens of seconds to resample


class SelectionError(ValueError):
    """A query the page cannot answer; ``field`` names the parameter."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Selection:
    run_ids: tuple[int, ...] = ()
    dataset_id: int | None = None
    boot: Bootstrap = field(default_factory=Bootstrap)
    study_id: int | None = None  # a page that reads a human study (PackPage.study_instances)


def _whole(raw: str, name: str, low: int, high: int) -> int:
    raw = raw.strip()
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise SelectionError(name, f"expected a whole number from {low} to {high}, got {raw!r}")
    return int(raw)


def parse_selection(params: Mapping[str, Any]) -> Selection:
    """``run`` (repeated scoring-run ids), ``dataset`` (an id), ``bootstrap`` (resamples,
    0–10000, default 1000), ``seed`` (default 0), ``study`` (an id, pages that read a study)
    from a QueryDict; :class:`SelectionError` naming the parameter."""
    getlist = getattr(params, "getlist", lambda k: [params[k]] if k in params else [])
    runs = [r for r in getlist("run") if str(r).strip()]
    if len(runs) > MAX_RUNS:
        raise SelectionError("run", f"at most {MAX_RUNS} scoring runs at once")
    run_ids = tuple(dict.fromkeys(_whole(str(r), "run", 1, 2**63 - 1) for r in runs))
    raw_dataset = str(params.get("dataset") or "").strip()
    dataset_id = _whole(raw_dataset, "dataset", 1, 2**63 - 1) if raw_dataset else None
    raw_boot = str(params.get("bootstrap") or "").strip()
    n_resamples = _whole(raw_boot, "bootstrap", 0, MAX_RESAMPLES) if raw_boot else 1000
    raw_seed = str(params.get("seed") or "").strip()
    seed = _whole(raw_seed, "seed", 0, 2**32 - 1) if raw_seed else 0
    raw_study = str(params.get("study") or "").strip()
    study_id = _whole(raw_study, "study", 1, 2**63 - 1) if raw_study else None
    return Selection(
        run_ids, dataset_id, Bootstrap(n_resamples=n_resamples, seed=seed), study_id=study_id
    )


def family_runs(page: PackPage) -> list[ScoringRun]:
    """Every scoring run of the page's packs, newest first (for the chooser)."""
    runs = ScoringRun.objects.select_related("generator", "dataset").order_by("-created_at", "-id")
    return [r for r in runs.filter(pack__startswith=page.prefix) if page.matches(r.pack)]


def chosen_runs(page: PackPage, selection: Selection) -> list[ScoringRun]:
    """The runs asked for (each must be one of the page's packs, and exist), else the latest
    done run of each (pack, generator, dataset), on the dataset when one is given."""
    if (
        selection.dataset_id is not None
        and not Dataset.objects.filter(pk=selection.dataset_id).exists()
    ):
        raise SelectionError("dataset", f"no dataset {selection.dataset_id}")
    candidates = family_runs(page)
    if selection.run_ids:
        by_id = {r.pk: r for r in candidates}
        for pk in selection.run_ids:
            if pk not in by_id:
                raise SelectionError("run", f"no {page.title} scoring run {pk}")
        runs = [by_id[pk] for pk in selection.run_ids]
    else:
        latest: dict[tuple, ScoringRun] = {}
        for r in candidates:
            if r.status == ScoringRun.Status.DONE:
                latest.setdefault((r.pack, r.generator_id, r.dataset_id), r)
        runs = list(latest.values())
    if selection.dataset_id is not None:
        runs = [r for r in runs if r.dataset_id == selection.dataset_id]
    return sorted(runs, key=lambda r: (r.pack, r.generator.name, r.dataset_id, r.pk))


def run_instances(page: PackPage, runs: list[ScoringRun]) -> list[Instance]:
    """The generations each run scored (with metrics; a record that failed is left out)."""
    out: list[Instance] = []
    for run in runs:
        key = f"pack_scores__{run.pack}"
        attrs = {f"attr_{a}": KeyTextTransform(a, "procedure__payload") for a in page.all_attrs}
        rows = (
            Generation.objects.filter(generator_id=run.generator_id)
            .filter(procedure__dataset_id=run.dataset_id)
            .filter(**{f"{key}__run": run.pk})
            .annotate(**attrs)
            .values("procedure__source_example_id", key, *attrs)
            .order_by("pk")
        )
        for row in rows:
            entry = row[key] or {}
            if "metrics" not in entry:
                continue
            out.append(
                Instance(
                    generator=run.generator.name,
                    item=f"{run.dataset_id}:{row['procedure__source_example_id']}",
                    pack=run.pack,
                    metrics=entry["metrics"],
                    breakdown=entry.get("breakdown") or {},
                    attrs={
                        a: row[f"attr_{a}"]
                        for a in page.all_attrs
                        if row[f"attr_{a}"] not in (None, "")
                    },
                    run=run.pk,
                )
            )
    return out


def report_cache_key(page: PackPage, selection: Selection, runs: list[ScoringRun]) -> str:
    """The cache key of a report on ``runs``: the page, the query, each run's state and the
    family's latest run change (a newer run of a pack overwrites an older run's results)."""
    latest = (
        ScoringRun.objects.filter(pack__startswith=page.prefix)
        .order_by("-updated_at")
        .values_list("updated_at", flat=True)
        .first()
    )
    parts = [
        page.name,
        repr(selection),
        repr([(r.pk, r.status, r.n_done, r.n_failed, r.updated_at) for r in runs]),
        repr(latest),
    ]
    return "pack-results:" + hashlib.sha256("|".join(parts).encode()).hexdigest()
