"""Reads for the comparisons of judges with people and with each other: each judge against a
study's human majority, judge↔judge agreement, and the generator rankings two judges produce
(Kendall's τ-b with its bootstrap CI). Verdicts come from :mod:`judging.selectors.verdicts`,
the numbers from :mod:`validation.comparisons.stats`; a handful of queries per page, whatever
the number of judges.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from annotation.agreement import LabelMatrix, Undefined, leave_one_out
from annotation.models import Study
from benchmarks.models import Dataset
from judging.agreement import judge_vs_majority
from judging.leaderboard.reads import judge_leaderboard
from judging.models import Judge
from judging.selectors.judgments import how2score_report, score_records
from judging.selectors.verdicts import (
    Verdicts,
    judges_with_verdicts,
    study_item_generations,
    study_majority,
    verdicts_by_content,
    verdicts_for_generations,
)
from validation.comparisons import stats as cmp
from validation.comparisons.ranking_ci import ranking_tau_ci


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
                **judge_vs_majority(majority=majority, verdicts=verdicts[j.pk]).to_json(),
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
    ``n_common`` generators), with its 95% bootstrap CI (:mod:`validation.comparisons.ranking_ci`; none
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
