"""Reads for the comparisons: judges' verdicts joined to study items and generations, human
labels from the annotation selectors, and the numbers of :mod:`judging.comparison`.

Judgments are matched to generations by *content* (``judge_key`` + ``content_hash``, the key a
judgment is stored under), so a verdict reused across runs or imported counts wherever that
exact content appears. A handful of queries per page, whatever the number of judges.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from django.db.models import Count, F, Q, Sum

from annotation.agreement import LabelMatrix, Undefined, leave_one_out
from annotation.models import Study, StudyItem
from annotation.selectors.flow import study_label_rows
from benchmarks.models import Dataset, Generation
from benchmarks.tokens import count_steps_tokens
from core.errors import FieldRefusal
from judging import comparison as cmp
from judging import prompting
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
from judging.selectors.judgments import how2score_report, score_records
from judging.stats.leaderboard import add_leaderboard_intervals
from judging.stats.ranking import ranking_tau_ci

Verdicts = dict[Any, bool | None]


def judges_by_names(names: Sequence[str], *, field: str = "judges") -> list[Judge]:
    """The judges named, in that order; a :class:`core.errors.FieldRefusal` of ``field`` (the
    parameter that named them) naming those that do not exist."""
    found = {j.name: j for j in Judge.objects.filter(name__in=names)}
    missing = [n for n in names if n not in found]
    if missing:
        raise FieldRefusal({field: f"no judge named {', '.join(repr(m) for m in missing)}"})
    return [found[n] for n in names]


def _judges_by_key(judges: Sequence[Judge]) -> dict[str, list[int]]:
    """Judge pks by ``judge_id``: two judge rows configured identically share their judgments."""
    out: dict[str, list[int]] = defaultdict(list)
    for j in judges:
        out[j.judge_id].append(j.pk)
    return out


def generation_content_hashes(generation_ids: Iterable[int]) -> dict[int, str]:
    rows = Generation.objects.filter(pk__in=list(generation_ids)).values_list(
        "id", "procedure__goal", "procedure__steps", "predicted_steps"
    )
    return {
        gid: prompting.content_hash(goal=goal, reference_steps=ref or [], steps=cand or [])
        for gid, goal, ref, cand in rows.iterator(chunk_size=2000)
    }


def verdicts_for_generations(
    *, judges: Sequence[Judge], generation_ids: Iterable[int]
) -> dict[int, Verdicts]:
    """``{judge pk: {generation id: has_failure | None (parse failed)}}``; generations a judge
    never judged are absent from its mapping. One query for all judges."""
    hashes = generation_content_hashes(generation_ids)
    by_hash: dict[str, list[int]] = defaultdict(list)
    for gid, h in hashes.items():
        by_hash[h].append(gid)
    judges_by_key = _judges_by_key(judges)
    out: dict[int, Verdicts] = {j.pk: {} for j in judges}
    rows = Judgment.objects.filter(
        judge_key__in=list(judges_by_key), content_hash__in=list(by_hash)
    ).values_list("judge_key", "content_hash", "has_failure", "parse_failed")
    for key, h, has_failure, parse_failed in rows.iterator(chunk_size=5000):
        for pk in judges_by_key[key]:
            for gid in by_hash[h]:
                out[pk][gid] = None if parse_failed else has_failure
    return out


def verdicts_by_content(*, judges: Sequence[Judge]) -> dict[int, Verdicts]:
    """``{judge pk: {content_hash: has_failure | None}}`` over everything each judge judged."""
    judges_by_key = _judges_by_key(judges)
    out: dict[int, Verdicts] = {j.pk: {} for j in judges}
    rows = Judgment.objects.filter(judge_key__in=list(judges_by_key)).values_list(
        "judge_key", "content_hash", "has_failure", "parse_failed"
    )
    for key, h, has_failure, parse_failed in rows.iterator(chunk_size=5000):
        for pk in judges_by_key[key]:
            out[pk][h] = None if parse_failed else has_failure
    return out


# --- a study: judges against the human majority ----------------------------------------------


def study_item_generations(*, study: Study) -> dict[int, int]:
    """``{study item id: generation id}`` of the study's regular items."""
    return dict(
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR).values_list(
            "id", "generation_id"
        )
    )


def judges_with_verdicts(*, generation_ids: Iterable[int]) -> list[Judge]:
    hashes = set(generation_content_hashes(generation_ids).values())
    keys = set(
        Judgment.objects.filter(content_hash__in=list(hashes))
        .values_list("judge_key", flat=True)
        .distinct()
    )
    return list(Judge.objects.filter(judge_id__in=keys).order_by("name"))


def study_majority(study: Study) -> tuple[dict[int, bool | None], list, dict[int, int]]:
    """(``{generation id: human majority}``, the label rows, ``{item id: generation id}``)."""
    label_rows = study_label_rows(study=study)
    majority_by_item = cmp.human_majority(
        (item, annotator, h) for item, annotator, h, _ in label_rows
    )
    item_generation = study_item_generations(study=study)
    majority = {item_generation[i]: v for i, v in majority_by_item.items() if i in item_generation}
    return majority, label_rows, item_generation


def _pairs(judges: Sequence[Judge], verdicts: dict[int, Verdicts]) -> list[dict[str, Any]]:
    return [
        {
            "judge_a": a.name,
            "judge_b": b.name,
            **cmp.judge_vs_judge(a=verdicts[a.pk], b=verdicts[b.pk]).to_json(),
        }
        for a, b in combinations(judges, 2)
    ]


def study_comparison(*, study: Study, judges: Sequence[Judge] | None = None) -> dict[str, Any]:
    """Each judge against the human majority of ``study`` (overall, per class, κ, confusion),
    judge↔judge agreement on the study's items, and the leave-one-out human baseline."""
    majority, label_rows, item_generation = study_majority(study)
    generation_ids = list(item_generation.values())
    if judges is None:
        judges = judges_with_verdicts(generation_ids=generation_ids)
    verdicts = verdicts_for_generations(judges=judges, generation_ids=generation_ids)
    matrix = LabelMatrix.from_triples(
        ((i, a, h) for i, a, h, _ in label_rows), categories=(False, True)
    )
    loo_values = [
        float(x.agreement) for x in leave_one_out(matrix) if not isinstance(x.agreement, Undefined)
    ]
    return {
        "study": {"id": study.pk, "name": study.name},
        "human": {
            "n_items": len(item_generation),
            "n_labelled": len(majority),
            "n_labels": len(label_rows),
            "n_annotators": len(matrix.annotators),
            "n_tied": sum(1 for v in majority.values() if v is None),
            "n_has_failure": sum(1 for v in majority.values() if v is True),
            "n_no_failure": sum(1 for v in majority.values() if v is False),
            "leave_one_out_min": min(loo_values) if loo_values else None,
            "leave_one_out_max": max(loo_values) if loo_values else None,
        },
        "judges": [
            {
                "judge": j.name,
                "judge_id": j.judge_id,
                "model": j.model,
                **cmp.judge_vs_majority(majority=majority, verdicts=verdicts[j.pk]).to_json(),
            }
            for j in judges
        ],
        "pairs": _pairs(judges, verdicts),
    }


def judge_pair_comparison(*, judges: Sequence[Judge], study: Study | None = None) -> dict[str, Any]:
    """Judge↔judge agreement and κ for every pair, on all content both judged (or only the
    study's items)."""
    if study is not None:
        verdicts = verdicts_for_generations(
            judges=judges, generation_ids=study_item_generations(study=study).values()
        )
    else:
        verdicts = verdicts_by_content(judges=judges)
    return {
        "study": None if study is None else {"id": study.pk, "name": study.name},
        "judges": [j.name for j in judges],
        "n_judged": {j.name: len(verdicts[j.pk]) for j in judges},
        "pairs": _pairs(judges, verdicts),
    }


# --- generator rankings (Figure 5) -----------------------------------------------------------


def generator_rankings(
    *,
    judges: Sequence[Judge],
    dataset: Dataset | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Generators ranked by How2Score under each judge, and Kendall's τ-b between every two
    judges' How2Scores counted on the generations both scored (``n_items`` of them, over
    ``n_common`` generators), with its 95% bootstrap CI (:mod:`judging.stats.ranking`; none
    when ``n_resamples`` is 0)."""
    scores: dict[str, dict[str, float]] = {}
    verdicts: dict[str, dict[int, bool | None]] = {}
    generator_of: dict[int, str] = {}
    per_judge = []
    for judge in judges:
        report = how2score_report(judge=judge, dataset=dataset)
        mine = verdicts[judge.name] = {}
        for rec in score_records(judge=judge, generator=None, run=None, dataset=dataset):
            mine[rec["generation_id"]] = None if rec["parse_failed"] else rec["has_failure"]
            generator_of[rec["generation_id"]] = rec["generator"]
        scored = {g["generator"]: g["how2score"] for g in report["generators"] if g["n_examples"]}
        scores[judge.name] = scored
        details = {g["generator"]: g for g in report["generators"]}
        per_judge.append(
            {
                "judge": judge.name,
                "ranking": [
                    {
                        **r,
                        "how2score": r["score"],
                        "how2score_percent": 100.0 * r["score"],
                        "n_examples": details[r["generator"]]["n_examples"],
                        "n_parse_failed": details[r["generator"]]["n_parse_failed"],
                        "avg_generated_tokens": details[r["generator"]]["avg_generated_tokens"],
                    }
                    for r in cmp.ranking(scored)
                ],
            }
        )
    taus = [
        {
            "judge_a": a.name,
            "judge_b": b.name,
            **cmp.paired_ranking_comparison(
                a=verdicts[a.name], b=verdicts[b.name], generator_of=generator_of
            ).to_json(),
        }
        for a, b in combinations(judges, 2)
    ]
    for t in taus:  # the τ's percentile bootstrap CI, resampling generations per generator
        if t["tau"]["value"] is not None and n_resamples > 0:
            a, b = verdicts[t["judge_a"]], verdicts[t["judge_b"]]
            ci = ranking_tau_ci(
                a=a, b=b, generator_of=generator_of, n_resamples=n_resamples, seed=seed
            )
            t["tau"]["ci"] = ci.to_json()
    generators = sorted({g for s in scores.values() for g in s})
    return {
        "dataset": None if dataset is None else {"id": dataset.pk, "name": str(dataset)},
        "judges": per_judge,
        "generators": generators,
        "kendall_tau": taus,
    }


# --- leaderboard -----------------------------------------------------------------------------


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
    """One row per judge (see :func:`judging.comparison.leaderboard_rows`); agreement with
    humans on ``study`` when given. Cost and time are summed over the judge's runs (time:
    started → finished), rates over its judgments. Agreement, κ and the failure rate carry a
    95% bootstrap CI (:mod:`judging.stats.leaderboard`; none when ``n_resamples`` is 0)."""
    judges = list(judges) if judges is not None else list(Judge.objects.order_by("name"))
    keys = _judges_by_key(judges)
    totals = {
        j.pk: cmp.JudgeTotals(
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
            totals[j.pk].human = cmp.judge_vs_majority(majority=majority, verdicts=verdicts[j.pk])
    rows = cmp.leaderboard_rows(totals.values())
    add_leaderboard_intervals(rows, totals.values(), n_resamples=n_resamples, seed=seed)
    return {
        "study": None if study is None else {"id": study.pk, "name": study.name},
        "rows": rows,
        "bootstrap": {"n_resamples": n_resamples, "confidence": 0.95, "seed": seed},
    }


def comparison_report(
    *, study: Study | None, judges: list[Judge] | None, dataset: Dataset | None = None
) -> dict[str, Any]:
    """What ``judge_compare`` prints: with a study, its judges-vs-majority comparison and the
    leaderboard on it (judges default to those with verdicts on its items); without, judge-judge
    pairs, generator rankings (optionally on one dataset) and the leaderboard."""
    if study is not None:
        leaderboard_judges = judges
        if leaderboard_judges is None:
            generations = study_item_generations(study=study).values()
            leaderboard_judges = judges_with_verdicts(generation_ids=generations)
        return {
            "comparison": study_comparison(study=study, judges=judges),
            "leaderboard": judge_leaderboard(judges=leaderboard_judges, study=study),
        }
    return {
        "judge_pairs": judge_pair_comparison(judges=judges),
        "rankings": generator_rankings(judges=judges, dataset=dataset),
        "leaderboard": judge_leaderboard(judges=judges),
    }
