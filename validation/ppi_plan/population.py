"""The population a planned study draws its items from: the generations a judge scored (one
verdict each, parse failures left out, as How2Score leaves them out), optionally of one
dataset; and how unsure the judge was on each, from its seeded samples."""

from __future__ import annotations

from benchmarks.models import Dataset
from judging.models import Judge, JudgeRunItem, JudgmentSample
from judging.selectors.judgments import score_records
from validation.probes.calibration import vote_share

CHUNK = 5000


def population_ids(*, judge: Judge, dataset: Dataset | None) -> list[int]:
    """The generations ``judge`` scored (of ``dataset``, or of every dataset), by id."""
    return sorted(
        r["generation_id"]
        for r in score_records(judge=judge, generator=None, run=None, dataset=dataset)
        if not r["parse_failed"]
    )


def judgment_ids(*, judge: Judge, generation_ids: list[int]) -> dict[int, int]:
    """``{generation id: the judgment score_records reads}`` (the newest of the judge's)."""
    out: dict[int, int] = {}
    for start in range(0, len(generation_ids), CHUNK):
        rows = (
            JudgeRunItem.objects.filter(
                judgment__judge_key=judge.judge_id,
                generation_id__in=generation_ids[start : start + CHUNK],
            )
            .values_list("generation_id", "judgment_id")
            .order_by("generation_id", "-judgment_id")
        )
        for gid, jid in rows:
            out.setdefault(gid, jid)
    return out


def vote_shares(*, judge: Judge, generation_ids: list[int]) -> dict[int, float | None]:
    """``{generation id: share of the judge's parsed samples saying has_failure}``; ``None``
    where the judgment has no parsed sample (a run without samples k > 1)."""
    judgments = judgment_ids(judge=judge, generation_ids=generation_ids)
    votes: dict[int, list[bool | None]] = {jid: [] for jid in judgments.values()}
    ids = sorted(votes)
    for start in range(0, len(ids), CHUNK):
        for jid, has_failure, parse_failed in JudgmentSample.objects.filter(
            judgment_id__in=ids[start : start + CHUNK]
        ).values_list("judgment_id", "has_failure", "parse_failed"):
            votes[jid].append(None if parse_failed else has_failure)
    return {
        gid: vote_share(votes[judgments[gid]]) if gid in judgments else None
        for gid in generation_ids
    }
