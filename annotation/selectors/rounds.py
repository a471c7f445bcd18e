"""Reads for a study's rounds: who a next round carries over or excludes, the chain of rounds,
and agreement across them (from the agreement report of each round)."""

from __future__ import annotations

from collections.abc import Callable

from annotation.models import ProlificCall, Study, StudyPay, StudyRound
from annotation.selectors.quality import quality_rows
from annotation.selectors.report import listed_study_report

NOT_CARRIED_STAGES = {"screened_out", "declined", "consent"}


def round_split(*, study: Study) -> tuple[list[str], list[str]]:
    """(carried over, excluded) Prolific ids of ``study``: excluded are those screened out or
    with the suggested action ``reject`` on the quality page; carried over are the others who
    got past qualification (score at or above the threshold, or no qualification items)."""
    carried, excluded = [], []
    stages = dict(study.participants.values_list("pk", "stage"))
    scores = dict(study.participants.values_list("pk", "qualification_score"))
    for row in quality_rows(study=study, sort="participant"):
        pid = row["prolific_pid"]
        if not pid:
            continue
        stage, score = stages[row["pid"]], scores[row["pid"]]
        if stage == "screened_out" or row["action"] == "reject":
            excluded.append(pid)
        elif stage not in NOT_CARRIED_STAGES and (
            score is None or score >= study.qualification_pass_threshold
        ):
            carried.append(pid)
    return carried, excluded


def carried_over(*, study: Study, prolific_pid: str) -> bool:
    """Whether ``study`` is a round that carries this Prolific participant over as qualified
    in the previous round (they read the training again but skip the qualification)."""
    if not prolific_pid:
        return False
    info = StudyRound.objects.filter(study=study).only("carried_over").first()
    return info is not None and prolific_pid in info.carried_over


def entry_exclusion(*, study: Study, prolific_pid: str) -> str:
    """Why this Prolific participant may not enter ``study`` (empty when they may): excluded
    by the round it continues (rejected or screened out before), or added through this app to
    the study's exclusion group on Prolific (from any study)."""
    info = StudyRound.objects.filter(study=study).first()
    if info is not None and prolific_pid in info.excluded:
        return f"excluded by round {info.number} (from {info.previous.name})"
    group = StudyPay.objects.filter(study=study).values_list("exclusion_group_id", flat=True)
    group_id = next(iter(group), "")
    if group_id:
        added = ProlificCall.objects.filter(
            action=ProlificCall.Action.GROUP_ADD, ok=True, target=group_id
        ).values_list("participant_ids", flat=True)  # a few calls; JSON lookups vary by database
        if any(prolific_pid in ids for ids in added):
            return f"in the exclusion group {group_id}"
    return ""


def round_chain(*, study: Study) -> list[Study]:
    """Every round from the first study to the last, ``study`` among them, in order."""
    chain, seen = [study], {study.pk}
    while (info := StudyRound.objects.filter(study=chain[0]).first()) and (
        info.previous_id not in seen
    ):
        seen.add(info.previous_id)
        chain.insert(0, info.previous)
    while (info := StudyRound.objects.filter(previous=chain[-1]).order_by("id").first()) and (
        info.study_id not in seen
    ):
        seen.add(info.study_id)
        chain.append(info.study)
    return chain


def _value(stat: dict) -> float | None:
    return stat.get("value") if isinstance(stat, dict) else None


def rounds_comparison(*, study: Study, enqueue: Callable[[int], None]) -> list[dict]:
    """Per round: agreement (Krippendorff's alpha, percent agreement) on its regular items,
    annotators, items, and how many it carried over and excluded. ``enqueue``: how a large
    study's report is started on a worker (:func:`~annotation.selectors.report.listed_study_report`)."""
    out = []
    for number, s in enumerate(round_chain(study=study)):
        report = listed_study_report(study=s, n_resamples=0, enqueue=enqueue)
        info = StudyRound.objects.filter(study=s).first()
        out.append(
            {
                "study": s,
                "number": number,
                "computing": report is None,  # a large study's, by a worker
                "n_annotators": report["n_annotators"] if report else None,
                "n_items": report["n_items"] if report else None,
                "alpha": _value(report["alpha"]) if report else None,
                "percent_agreement": _value(report["percent_agreement"]) if report else None,
                "carried_over": len(info.carried_over) if info else None,
                "excluded": len(info.excluded) if info else None,
            }
        )
    return out
