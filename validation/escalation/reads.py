"""Reads for escalation on a study: the judge's answer and confidence on each of the study's
items (from its seeded samples, :func:`validation.escalation.stats.vote_confidence`), the
threshold calibrated on one seeded half of the labelled items
(:func:`validation.escalation.stats.fixed_sequence_threshold`) and checked on the other half,
and the items below it. The same dict feeds the page, the ``escalation`` command and the
service that puts those items first in the study's order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotation.models import Study
from benchmarks.models import Generation
from core.lazy import lazy_module
from judging.models import Judge
from judging.selectors import verdicts as sel
from validation.escalation.stats import (
    DEFAULT_ALPHA,
    DEFAULT_DELTA,
    EscalationError,
    check_levels,
    fixed_sequence_threshold,
    held_out_check,
    min_items,
    vote_confidence,
)
from validation.probes.reads import judge_votes

np = lazy_module("numpy")

DEFAULT_SEED = 0


@dataclass(frozen=True)
class ItemConfidence:
    """One study item as the judge sees it: its answer (``None``: no answer), its confidence
    (``None``: no parsed sample) and the human majority (``None``: tied or not labelled)."""

    item_id: int
    generation_id: int
    answer: bool | None
    confidence: float | None
    human: bool | None


def study_item_confidences(*, study: Study, judge: Judge) -> tuple[list[ItemConfidence], dict]:
    """Every regular item of ``study`` with ``judge``'s answer and confidence, and the counts
    of what was left out of calibration. The answer is the majority of the judge's samples; a
    tie takes the judgment's own verdict."""
    majority, _, item_generation = sel.study_majority(study)
    generation_ids = sorted(set(item_generation.values()))
    hashes = sel.generation_content_hashes(generation_ids)
    judgments, votes = judge_votes(judge, hashes)
    by_generation: dict[int, tuple[bool | None, float | None]] = {}
    for gid in generation_ids:
        found = judgments.get(hashes.get(gid, ""))
        if found is None:
            continue
        jid, verdict = found
        answer, confidence = vote_confidence(votes.get(jid, []))
        if confidence is not None and answer is None:
            answer = verdict
        by_generation[gid] = (answer, confidence)
    items = [
        ItemConfidence(item_id, gid, *by_generation.get(gid, (None, None)), majority.get(gid))
        for item_id, gid in sorted(item_generation.items())
    ]
    labelled = [gid for gid in generation_ids if gid in majority]
    counts = {
        "n_items": len(generation_ids),
        "n_labelled": len(labelled),
        "n_tied": sum(1 for gid in labelled if majority[gid] is None),
        "n_not_judged": sum(1 for gid in labelled if gid not in by_generation),
        "n_no_samples": sum(
            1 for gid in labelled if gid in by_generation and by_generation[gid][1] is None
        ),
        "n_no_answer": sum(
            1
            for gid in labelled
            if gid in by_generation
            and by_generation[gid][1] is not None
            and by_generation[gid][0] is None
        ),
    }
    return items, counts


def seeded_halves(keys: list[int], *, seed: int) -> tuple[list[int], list[int]]:
    """``keys`` (sorted first) shuffled with ``seed`` and cut in two: the calibration half
    (the larger when odd) and the held-out half."""
    order = sorted(keys)
    perm = np.random.default_rng(seed).permutation(len(order))
    shuffled = [order[i] for i in perm]
    cut = (len(shuffled) + 1) // 2
    return shuffled[:cut], shuffled[cut:]


def escalation_report(
    *,
    study: Study,
    judge: Judge,
    alpha: float = DEFAULT_ALPHA,
    delta: float = DEFAULT_DELTA,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """The threshold calibrated on a seeded half of the labelled items the judge has a
    confidence on, checked on the other half, and the items below it. Raises
    :class:`EscalationError` (``alpha``, ``delta``, ``seed``, ``study`` or ``items``)."""
    alpha, delta = check_levels(alpha, delta)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise EscalationError("seed", "seed must be a whole number, 0 or more")
    if study.form_type != "critical_failure":
        raise EscalationError(
            "study",
            f"study {study.name!r} is a {study.form_type} study; escalation calibrates on the "
            "has_failure labels of a critical-failure study",
        )
    items, counts = study_item_confidences(study=study, judge=judge)
    usable = {
        i.generation_id: i
        for i in items
        if i.human is not None and i.confidence is not None and i.answer is not None
    }
    counts["n_usable"] = len(usable)
    need = min_items(alpha, delta)
    if len(usable) < 2 * need:
        raise EscalationError(
            "items",
            f"too few labelled items to calibrate on: {len(usable)} have both a clear human "
            f"majority and a judge confidence from samples, and with α = {alpha:g} and "
            f"δ = {delta:g} calibration needs at least {need} of them and the held-out check "
            f"as many again ({2 * need}); label more items or launch a judge run with samples "
            "k > 1 over these items",
        )
    calibration_ids, held_out_ids = seeded_halves(list(usable), seed=seed)

    def arrays(ids):
        return (
            [usable[g].confidence for g in ids],
            [usable[g].answer == usable[g].human for g in ids],
        )

    calibration = fixed_sequence_threshold(*arrays(calibration_ids), alpha=alpha, delta=delta)
    held_out = held_out_check(calibration, *arrays(held_out_ids))
    escalated = [i for i in items if not calibration.decides(i.confidence)]
    return {
        "study": {"id": study.pk, "name": study.name},
        "judge": {"name": judge.name, "judge_id": judge.judge_id},
        "alpha": alpha,
        "delta": delta,
        "seed": seed,
        "items": counts,
        "calibration": calibration.to_json(),
        "held_out": held_out,
        "study_items": {
            "n": len(items),
            "n_decided": len(items) - len(escalated),
            "n_escalated": len(escalated),
            "n_no_confidence": sum(1 for i in items if i.confidence is None),
        },
        "escalated": [_item_json(i) for i in escalated],
    }


def _item_json(item: ItemConfidence) -> dict[str, Any]:
    return {
        "item_id": item.item_id,
        "generation_id": item.generation_id,
        "confidence": item.confidence,
        "judge_says_failure": item.answer,
        "human_majority_failure": item.human,
    }


def source_ids(generation_ids: list[int]) -> dict[int, str]:
    """The source example id of each generation (for listing items)."""
    return dict(
        Generation.objects.filter(pk__in=generation_ids).values_list(
            "id", "procedure__source_example_id"
        )
    )
