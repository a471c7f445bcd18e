"""Reads for the judge's bias probes on a study: calibration of its seeded
samples against the human majority (:mod:`validation.probes.calibration`) and its length bias
(:mod:`validation.probes.length_bias`). The same dict feeds the validation page's partial and the
API (``api/validation/probes/``)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from annotation.models import Study
from benchmarks.models import Generation
from benchmarks.tokens import count_steps_tokens
from judging.models import Judge, Judgment, JudgmentSample
from judging.selectors import verdicts as sel
from validation.probes.calibration import DEFAULT_BINS, calibration_report, vote_share
from validation.probes.length_bias import length_bias

NO_SAMPLES = (
    "no judgment of this judge on the study's items has seeded samples: launch a judge run "
    "with samples k > 1"
)


def generation_tokens(generation_ids: list[int]) -> dict[int, int]:
    """o200k tokens of each generation's steps (:func:`benchmarks.tokens.count_steps_tokens`),
    the stored ``gen_tokens`` score where there is one."""
    out: dict[int, int] = {}
    rows = Generation.objects.filter(pk__in=generation_ids).values_list(
        "id", "scores", "predicted_steps"
    )
    for gid, scores, steps in rows.iterator(chunk_size=2000):
        stored = (scores or {}).get("gen_tokens")
        out[gid] = int(stored) if stored is not None else count_steps_tokens(steps or [])
    return out


def judge_votes(judge: Judge, hashes: dict[int, str]):
    """``{content hash: (judgment id, has_failure | None)}`` of ``judge``'s judgments of these
    generations (``hashes``: generation id → content hash) and ``{judgment id: [votes]}`` of
    their seeded samples (``None``: the sample did not parse)."""
    judgments = {
        h: (jid, None if parse_failed else has_failure)
        for jid, h, has_failure, parse_failed in Judgment.objects.filter(
            judge_key=judge.judge_id, content_hash__in=set(hashes.values())
        ).values_list("id", "content_hash", "has_failure", "parse_failed")
    }
    votes: dict[int, list[bool | None]] = defaultdict(list)
    for jid, has_failure, parse_failed in JudgmentSample.objects.filter(
        judgment_id__in=[jid for jid, _ in judgments.values()]
    ).values_list("judgment_id", "has_failure", "parse_failed"):
        votes[jid].append(None if parse_failed else has_failure)
    return judgments, votes


def judge_probes(
    *,
    study: Study,
    judge: Judge,
    n_bins: int = DEFAULT_BINS,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """``calibration`` (ECE, Brier, reliability bins, with how many items had samples) and
    ``length_bias`` (odds ratio per 100 tokens with its CI) of ``judge`` on ``study``'s items
    with a clear human majority."""
    majority, _, item_generation = sel.study_majority(study)
    generation_ids = sorted(set(item_generation.values()))
    hashes = sel.generation_content_hashes(generation_ids)
    judgments, votes = judge_votes(judge, hashes)
    tokens = generation_tokens(generation_ids)
    p, y, n_votes = [], [], []
    judge_y, lengths, human = [], [], []
    counts = {"n_items": len(generation_ids), "n_tied": 0, "n_not_judged": 0, "n_no_samples": 0}
    for gid in generation_ids:
        human_says = majority.get(gid)
        if human_says is None:
            counts["n_tied"] += 1
            continue
        found = judgments.get(hashes.get(gid, ""))
        if found is None:
            counts["n_not_judged"] += 1
            continue
        jid, verdict = found
        if verdict is not None:
            judge_y.append(int(verdict))
            lengths.append(tokens[gid])
            human.append(int(human_says))
        share = vote_share(votes.get(jid, []))
        if share is None:
            counts["n_no_samples"] += 1
            continue
        p.append(share)
        y.append(int(human_says))
        n_votes.append(len(votes[jid]))
    calibration = calibration_report(
        p, y, n_bins=n_bins, n_resamples=n_resamples, confidence=confidence, seed=seed
    )
    if not p:
        for key in ("ece", "brier"):
            calibration[key] = {"value": None, "undefined": NO_SAMPLES}
    calibration["samples_per_item"] = (
        {"min": min(n_votes), "max": max(n_votes)} if n_votes else {"min": 0, "max": 0}
    )
    return {
        "study": {"id": study.pk, "name": study.name},
        "judge": {"name": judge.name, "judge_id": judge.judge_id},
        "items": counts,
        "calibration": calibration,
        "length_bias": length_bias(judge_y, lengths, human, confidence=confidence),
        "bootstrap": {"n_resamples": n_resamples, "confidence": confidence, "seed": seed},
    }
