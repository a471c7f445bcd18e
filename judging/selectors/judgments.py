"""Reads for judging: selections, judges, runs, judgments, How2Score."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils import timezone

from benchmarks.models import Dataset, Generation, Generator, Topic
from benchmarks.selectors.catalog import DatasetRefError, dataset_resolve
from judging import aggregate
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment

SELECTION_KEYS = ("dataset", "topics", "generators", "generation_ids", "study")


class CleanSelection(dict):
    """A selection as :func:`selection_clean` returns it (normalised to ids): validated once,
    not again (the API's serializer validates it, the launch and the estimate take it as is)."""


def selection_clean(selection: dict[str, Any] | None) -> CleanSelection:
    """Validate a run selection; returns it normalised (ids). Errors name the selection's
    field (``dataset``, ``topics``, …; one of none: ``choose a dataset…``); a selection
    returned by this function is returned as it is."""
    if isinstance(selection, CleanSelection):
        return selection
    selection = dict(selection or {})
    unknown = set(selection) - set(SELECTION_KEYS)
    if unknown:
        raise ValidationError(dict.fromkeys(sorted(unknown), "unknown selection field"))
    out: dict[str, Any] = {}
    errors: dict[str, str] = {}
    if selection.get("dataset") not in (None, ""):
        value = selection["dataset"]
        ds = Dataset.objects.filter(pk=value).first() if str(value).isdigit() else None
        if ds is None and isinstance(value, str):
            try:
                ds = dataset_resolve(value)
            except DatasetRefError as exc:
                errors["dataset"] = str(exc)
        elif ds is None:
            errors["dataset"] = f"no dataset {value!r}"
        if ds is not None:
            out["dataset"] = ds.pk
    for key, model, field in (("topics", Topic, "slug"), ("generators", Generator, "name")):
        values = selection.get(key) or []
        if not isinstance(values, list):
            errors[key] = "must be a list"
            continue
        if values:
            ids, missing = [], []
            for v in values:
                obj = (
                    model.objects.filter(pk=v).first()
                    if isinstance(v, int) or str(v).isdigit()
                    else None
                )
                obj = obj or model.objects.filter(**{field: v}).first()
                if obj is None and model is Topic:  # the name people read ("Crime & Law")
                    obj = Topic.objects.filter(name=v).first()
                (ids.append(obj.pk) if obj else missing.append(v))
            if missing:
                errors[key] = f"unknown {key}: {', '.join(map(str, missing))}"
            out[key] = sorted(set(ids))
    if selection.get("study") not in (None, ""):
        from annotation.models import Study

        value = selection["study"]
        study = Study.objects.filter(pk=value).first() if str(value).isdigit() else None
        if study is None:
            errors["study"] = f"no study {value!r}"
        else:
            out["study"] = study.pk
    gids = selection.get("generation_ids") or []
    if not isinstance(gids, list) or not all(isinstance(g, int) or str(g).isdigit() for g in gids):
        errors["generation_ids"] = "must be a list of integer ids"
    elif gids:
        out["generation_ids"] = sorted({int(g) for g in gids})
        found = Generation.objects.filter(pk__in=out["generation_ids"]).count()
        if found != len(out["generation_ids"]):
            errors["generation_ids"] = f"{len(out['generation_ids']) - found} id(s) do not exist"
    if errors:
        raise ValidationError(errors)
    if not out:
        raise ValidationError("choose a dataset, topics, generators, generation ids or a study")
    return CleanSelection(out)


def generations_for_selection(selection: dict[str, Any]) -> QuerySet[Generation]:
    qs = Generation.objects.all()
    if selection.get("dataset"):
        qs = qs.filter(procedure__dataset_id=selection["dataset"])
    if selection.get("topics"):
        qs = qs.filter(procedure__topic_id__in=selection["topics"])
    if selection.get("generators"):
        qs = qs.filter(generator_id__in=selection["generators"])
    if selection.get("generation_ids"):
        qs = qs.filter(pk__in=selection["generation_ids"])
    if selection.get("study"):
        qs = qs.filter(study_items__study_id=selection["study"]).distinct()
    return qs.order_by("id")


def judge_list() -> QuerySet[Judge]:
    return Judge.objects.all()


def judge_run_list(*, judge: Judge | None = None) -> QuerySet[JudgeRun]:
    qs = JudgeRun.objects.select_related("judge")
    return qs.filter(judge=judge) if judge else qs


def judgment_list(*, judge: Judge | None = None, run: JudgeRun | None = None) -> QuerySet[Judgment]:
    qs = Judgment.objects.select_related("judge")
    if judge is not None:
        qs = qs.filter(judge_key=judge.judge_id)
    if run is not None:
        qs = qs.filter(items__run=run).distinct()
    return qs


def judge_run_eta_s(run: JudgeRun, *, now=None) -> float | None:
    """Seconds left, from the rate since the run started; None when unknown."""
    if run.status != JudgeRun.Status.RUNNING or not run.started_at:
        return None
    now = now or timezone.now()
    elapsed = (now - run.started_at).total_seconds()
    processed = run.n_done - run.n_reused + run.n_failed
    left = run.n_total - run.n_done - run.n_failed
    if left <= 0:
        return 0.0
    if processed <= 0 or elapsed <= 0:
        return None
    return left / (processed / elapsed)


def judge_run_progress(run: JudgeRun) -> dict[str, Any]:
    """What the console and the API show of a run: status, counters, tokens, cost, ETA, and
    whether its worker is gone (an active run nobody holds: offer to take it over)."""
    eta = judge_run_eta_s(run)
    return {
        "id": run.pk,
        "judge": run.judge.name,
        "status": run.status,
        "n_total": run.n_total,
        "n_done": run.n_done,
        "n_reused": run.n_reused,
        "n_failed": run.n_failed,
        "n_parse_failed": run.n_parse_failed,
        # items a cancelled run never finished: cancelled, not errors
        "n_cancelled": (
            max(0, run.n_total - run.n_done - run.n_failed)
            if run.status == JudgeRun.Status.CANCELLED
            else 0
        ),
        "progress": round(run.progress, 4),
        "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens,
        "cost": str(run.cost),
        "estimated_cost": None if run.estimated_cost is None else str(run.estimated_cost),
        "eta_s": None if eta is None else round(eta, 1),
        "heartbeat_at": run.heartbeat_at,
        "worker_gone": run.worker_gone,
        "error": run.error,
    }


def score_records(
    *, judge: Judge, generator: Generator | None, run: JudgeRun | None, dataset: Dataset | None
):
    items = JudgeRunItem.objects.filter(judgment__judge_key=judge.judge_id)
    if run is not None:
        items = items.filter(run=run)
    if generator is not None:
        items = items.filter(generation__generator=generator)
    if dataset is not None:
        items = items.filter(generation__procedure__dataset=dataset)
    rows = items.values_list(
        "generation_id",
        "generation__generator__name",
        "generation__procedure__topic__name",
        "generation__token_count",
        "judgment__has_failure",
        "judgment__n_failures",
        "judgment__parse_failed",
        "generation__procedure_id",
    ).order_by("generation_id", "-judgment_id")
    seen: set[int] = set()
    for gid, gen_name, topic, tokens, has_failure, n_failures, parse_failed, proc in rows.iterator(
        chunk_size=5000
    ):
        if gid in seen:  # one verdict per generation (several runs may hold it)
            continue
        seen.add(gid)
        yield {
            "generation_id": gid,
            "generator": gen_name,
            "topic": topic or "",
            "generated_tokens": tokens,
            "has_failure": has_failure,
            "n_failures": n_failures,
            "parse_failed": parse_failed,
            "procedure_id": proc,  # pairs two generators' verdicts on the same item
        }


def how2score_report(
    *,
    judge: Judge,
    generator: Generator | None = None,
    run: JudgeRun | None = None,
    dataset: Dataset | None = None,
) -> dict[str, Any]:
    """How2Score of ``judge`` overall and by topic, per generator (or for one generator)."""
    records = list(score_records(judge=judge, generator=generator, run=run, dataset=dataset))
    by_generator: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        by_generator.setdefault(rec["generator"], []).append(rec)
    generators = []
    for name in sorted(by_generator):
        summary, rows = aggregate.how2score(by_generator[name])
        generators.append({"generator": name, **summary, "by_topic": rows})
    return {
        "judge": judge.name,
        "judge_id": judge.judge_id,
        "generators": generators,
    }
