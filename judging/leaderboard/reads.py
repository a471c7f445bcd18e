"""Reads for the judge leaderboard: each judge's judgments, runs, cost, time and token lengths
summed into :class:`judging.stats.leaderboard.JudgeTotals`, its agreement with a study's
human majority (:func:`judging.agreement.judge_vs_majority`), then the rows and their CIs
(:mod:`judging.stats.leaderboard`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Count, F, Q, Sum

from annotation.models import Study
from benchmarks.models import Generation
from benchmarks.tokens import count_steps_tokens
from judging.agreement import judge_vs_majority
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
from judging.selectors.verdicts import judge_pks_by_key, study_majority, verdicts_for_generations
from judging.stats.leaderboard import JudgeTotals, add_leaderboard_intervals, leaderboard_rows


def _token_counts(generation_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """``{generation id: (gen tokens, ref tokens)}``: the stored ``scores`` (``gen_tokens`` /
    ``ref_tokens`` of the token_ratio scorer) where present, else o200k counts made here."""
    out: dict[int, tuple[int, int]] = {}
    missing: list[int] = []
    for chunk in _chunks(generation_ids, 5000):
        rows = Generation.objects.filter(pk__in=chunk).values_list("id", "scores", "token_count")
        for gid, scores, token_count in rows:
            scores = scores or {}
            gen, ref = scores.get("gen_tokens"), scores.get("ref_tokens")
            if gen is None and token_count is not None:
                gen = token_count
            if gen is None or ref is None:
                missing.append(gid)
            else:
                out[gid] = (int(gen), int(ref))
    ref_cache: dict[int, int] = {}
    for chunk in _chunks(missing, 2000):
        rows = Generation.objects.filter(pk__in=chunk).values_list(
            "id", "scores", "token_count", "predicted_steps", "procedure_id", "procedure__steps"
        )
        for gid, scores, token_count, cand, proc_id, ref_steps in rows:
            scores = scores or {}
            gen = scores.get("gen_tokens", token_count)
            if gen is None:
                gen = count_steps_tokens(cand or [])
            ref = scores.get("ref_tokens")
            if ref is None:
                if proc_id not in ref_cache:
                    ref_cache[proc_id] = count_steps_tokens(ref_steps or [])
                ref = ref_cache[proc_id]
            out[gid] = (int(gen), int(ref))
    return out


def _chunks(values: Sequence[int], size: int):
    values = list(values)
    for i in range(0, len(values), size):
        yield values[i : i + size]


def judge_leaderboard(
    *,
    judges: Sequence[Judge] | None = None,
    study: Study | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """One row per judge (see :func:`judging.stats.leaderboard.leaderboard_rows`); agreement with
    humans on ``study`` when given. Cost and time are summed over the judge's runs (time:
    started → finished), rates over its judgments. Agreement, κ and the failure rate carry a
    95% bootstrap CI (:mod:`judging.stats.leaderboard`; none when ``n_resamples`` is 0)."""
    judges = list(judges) if judges is not None else list(Judge.objects.order_by("name"))
    keys = judge_pks_by_key(judges)
    totals = {
        j.pk: JudgeTotals(
            judge=j.name, extra={"judge_id": j.judge_id, "model": j.model, "backend": j.backend}
        )
        for j in judges
    }
    counts = (
        Judgment.objects.filter(judge_key__in=list(keys))
        .values("judge_key")
        .annotate(
            n=Count("id"),
            n_pf=Count("id", filter=Q(parse_failed=True)),
            n_hf=Count("id", filter=Q(parse_failed=False, has_failure=True)),
            latency=Sum("latency_s"),
        )
    )
    for row in counts:
        for pk in keys[row["judge_key"]]:
            t = totals[pk]
            t.n_judgments, t.n_parse_failed, t.n_has_failure = row["n"], row["n_pf"], row["n_hf"]
            t.extra["mean_latency_s"] = (row["latency"] or 0.0) / row["n"] if row["n"] else None
    runs = (
        JudgeRun.objects.filter(judge__in=judges)
        .values("judge_id")
        .annotate(
            cost=Sum("cost"),
            n_runs=Count("id"),
            seconds=Sum(
                F("finished_at") - F("started_at"),
                filter=Q(finished_at__isnull=False, started_at__isnull=False),
            ),
        )
    )
    for row in runs:
        t = totals[row["judge_id"]]
        t.cost = float(row["cost"] or 0)
        t.time_s = row["seconds"].total_seconds() if row["seconds"] is not None else 0.0
        t.extra["n_runs"] = row["n_runs"]
    for t in totals.values():
        t.extra.setdefault("n_runs", 0)
        t.extra.setdefault("mean_latency_s", None)
    # verbosity: token lengths of the judged candidates, once per judgment
    judged = (
        JudgeRunItem.objects.filter(
            judgment__judge_key__in=list(keys), judgment__parse_failed=False
        )
        .values_list("judgment_id", "judgment__judge_key", "judgment__has_failure", "generation_id")
        .order_by("judgment_id")
    )
    seen: set[int] = set()
    verdicts: list[tuple[str, bool, int]] = []
    for jid, key, has_failure, gid in judged.iterator(chunk_size=5000):
        if jid not in seen:
            seen.add(jid)
            verdicts.append((key, has_failure, gid))
    tokens = _token_counts(sorted({gid for _, _, gid in verdicts}))
    for key, has_failure, gid in verdicts:
        gen, ref_tokens = tokens[gid]
        for pk in keys[key]:
            t = totals[pk]
            t.gen_tokens += gen
            t.ref_tokens += ref_tokens
            if has_failure:
                t.gen_tokens_has_failure += gen
                t.ref_tokens_has_failure += ref_tokens
            else:
                t.gen_tokens_no_failure += gen
                t.ref_tokens_no_failure += ref_tokens
    if study is not None:
        majority, _, item_generation = study_majority(study)
        verdicts = verdicts_for_generations(judges=judges, generation_ids=item_generation.values())
        for j in judges:
            totals[j.pk].human = judge_vs_majority(majority=majority, verdicts=verdicts[j.pk])
    rows = leaderboard_rows(totals.values())
    add_leaderboard_intervals(rows, totals.values(), n_resamples=n_resamples, seed=seed)
    return {
        "study": None if study is None else {"id": study.pk, "name": study.name},
        "rows": rows,
        "bootstrap": {"n_resamples": n_resamples, "confidence": 0.95, "seed": seed},
    }
