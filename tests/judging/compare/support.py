"""Builders for the comparison tests: judges, judged runs and human labels, through the real models."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from annotation.models import Annotation, Assignment, Participant, StudyItem
from benchmarks.models import Generation
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
from judging.services.items import item_content_hash
from judging.services.judges import judge_create


def make_judge(name: str, **fields) -> Judge:
    fields.setdefault("model", "teacher-model")
    fields.setdefault("decoding", {"temperature": 1.0})
    return judge_create(name=name, **fields)


def judged_run(
    judge: Judge,
    generations: list[Generation],
    verdicts: list,
    *,
    cost: str = "0",
    seconds: float = 0.0,
    latency_s: float = 0.0,
) -> JudgeRun:
    """A finished run of ``judge`` over ``generations``; ``verdicts[i]``: True (has_failure),
    False (no_failure), None (parse failed) or "skip" (not judged)."""
    now = timezone.now()
    run = JudgeRun.objects.create(
        judge=judge,
        status=JudgeRun.Status.DONE,
        n_total=len(generations),
        cost=Decimal(cost),
        started_at=now - timedelta(seconds=seconds),
        finished_at=now,
    )
    for g, v in zip(generations, verdicts, strict=True):
        if v == "skip":
            continue
        h = item_content_hash(g)
        failures = (
            [
                {
                    "failure": f"Step 2 of {g.procedure.source_example_id} omits the filter.",
                    "L1_steps": [2],
                    "L2_steps": [2],
                }
            ]
            if v
            else []
        )
        judgment, _ = Judgment.objects.get_or_create(
            judge_key=judge.judge_id,
            content_hash=h,
            defaults={
                "judge": judge,
                "source_example_id": g.procedure.source_example_id,
                "reasoning": f"{judge.name} read {g.procedure.source_example_id}.",
                "critical_failures": failures,
                "has_failure": bool(v),
                "n_failures": len(failures),
                "parse_failed": v is None,
                "raw_output": "not json" if v is None else "{}",
                "latency_s": latency_s,
            },
        )
        JudgeRunItem.objects.create(run=run, generation=g, content_hash=h, judgment=judgment)
    return run


def label(item: StudyItem, annotator: str, has_failure: bool) -> Annotation:
    """A submitted human label of ``item`` by participant ``annotator`` (created on first use)."""
    now = timezone.now()
    participant, _ = Participant.objects.get_or_create(
        study=item.study, prolific_pid=annotator, defaults={"stage": Participant.Stage.WORKING}
    )
    assignment = Assignment.objects.create(
        participant=participant,
        item=item,
        state=Assignment.State.SUBMITTED,
        served_at=now,
        last_seen_at=now,
        submitted_at=now,
    )
    failures = (
        [{"description": "Step 2 is wrong.", "l1_steps": [2], "l2_steps": [2]}]
        if has_failure
        else []
    )
    return Annotation.objects.create(
        assignment=assignment,
        participant=participant,
        item=item,
        has_failure=has_failure,
        failures=failures,
        wall_ms=1000,
        active_ms=900,
        submitted_at=now,
    )
