"""The population a planned study draws its items from: the generations a judge scored (one
verdict each, parse failures left out, as How2Score leaves them out), optionally of one
dataset; and how unsure the judge was on each, from its seeded samples."""

from __future__ import annotations

from benchmarks.models import Dataset
from judging.models import Judge
from judging.selectors.judgments import score_records
from judging.selectors.verdicts import generation_content_hashes
from validation.probes.calibration import vote_share
from validation.probes.reads import judge_votes


def population_ids(*, judge: Judge, dataset: Dataset | None) -> list[int]:
    """The generations ``judge`` scored (of ``dataset``, or of every dataset), by id."""
    return sorted(
        r["generation_id"]
        for r in score_records(judge=judge, generator=None, run=None, dataset=dataset)
        if not r["parse_failed"]
    )


def vote_shares(*, judge: Judge, generation_ids: list[int]) -> dict[int, float | None]:
    """``{generation id: share of the judge's parsed samples saying has_failure}``; ``None``
    where the judgment has no parsed sample (a run without samples k > 1). The judgments are
    matched by content and their votes read as calibration and escalation read them
    (:func:`validation.probes.reads.judge_votes`)."""
    hashes = generation_content_hashes(generation_ids)
    judgments, votes = judge_votes(judge, hashes)
    shares: dict[int, float | None] = {}
    for gid in generation_ids:
        found = judgments.get(hashes.get(gid, ""))
        shares[gid] = None if found is None else vote_share(votes.get(found[0], []))
    return shares
