"""Distillation export (seed 000 C.2): a teacher judge's verdicts from two runs become SFT
records ``{"prompt", "completion"}`` for a small judge.

Rules, applied per generation of the first run, in this order (each dropped item is counted
under its reason):

- ``not_in_both_runs``: not judged (or failed for good) in one of the two runs;
- ``parse_failed``: either run's output could not be parsed;
- ``inconsistent``: the binary verdicts (has_failure / no_failure) differ between the runs;
- ``human_labelled``: humans labelled this generation, or another generation of the same
  benchmark example, in any study (the paper removes any overlap with the human-annotated set);
- ``duplicate_content``: the same goal, reference and candidate were already exported.

A judge never judges the same content twice (its stored judgment is reused), so two runs of
one judge hold the same verdicts and are refused: the second run must be of a judge
configured identically to the teacher except ``decoding.seed`` (and its name). ``prompt`` is the exact text the teacher was sent
(:func:`judging.prompting.render_judge_prompt` with its template); ``completion`` is the
teacher's (first run's) parsed output as compact JSON in the H.3 schema
(``{"reasoning", "critical_failures"}``), the form the distilled judge must produce.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.models import Annotation
from judging import prompting
from judging.models import Judge, JudgeRun, JudgeRunItem

REASONS = (
    "not_in_both_runs",
    "parse_failed",
    "inconsistent",
    "human_labelled",
    "duplicate_content",
)
SEED_KEYS = ("seed",)


class DistillationError(ValueError):
    """Bad teacher or runs; the message names what is wrong."""


@dataclass
class DistillationReport:
    teacher: str
    run_ids: tuple[int, int]
    n_items: int = 0
    n_kept: int = 0
    dropped: Counter = field(default_factory=Counter)
    path: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "teacher": self.teacher,
            "runs": list(self.run_ids),
            "n_items": self.n_items,
            "n_kept": self.n_kept,
            "n_dropped": sum(self.dropped.values()),
            "dropped": {r: self.dropped.get(r, 0) for r in REASONS},
            "path": self.path,
        }


def config_differences(a: Judge, b: Judge) -> list[str]:
    """What decides verdicts and differs between two judges, ignoring their names and seeds."""
    ca, cb = a.identity_config(), b.identity_config()
    for c in (ca, cb):
        c.pop("name", None)
        c["decoding"] = {k: v for k, v in (c.get("decoding") or {}).items() if k not in SEED_KEYS}
    diffs = [k for k in sorted(ca) if k != "decoding" and ca[k] != cb.get(k)]
    da, db = ca["decoding"], cb["decoding"]
    diffs += [f"decoding.{k}" for k in sorted(da.keys() | db.keys()) if da.get(k) != db.get(k)]
    return diffs


def _check_runs(*, teacher: Judge, runs: Sequence[JudgeRun]) -> None:
    if len(runs) != 2:
        raise DistillationError(f"give exactly two runs (got {len(runs)})")
    first, second = runs
    if first.pk == second.pk:
        raise DistillationError(
            f"the two runs are the same run ({first.pk}); give two different runs"
        )
    if first.judge_id != teacher.pk:
        raise DistillationError(
            f"run {first.pk} is of judge {first.judge.name!r}, not of the teacher {teacher.name!r}"
        )
    if second.judge_id != teacher.pk:
        diffs = config_differences(teacher, second.judge)
        if diffs:
            raise DistillationError(
                f"run {second.pk} is of judge {second.judge.name!r}, configured differently from the teacher "
                f"{teacher.name!r} ({', '.join(diffs)}); only decoding.seed may differ"
            )
    if second.judge.judge_id == first.judge.judge_id:
        raise DistillationError(
            f"runs {first.pk} and {second.pk} are of the same judge configuration, so they hold the same stored "
            "judgments (a judge never judges the same content twice); run a second judge configured identically "
            "except decoding.seed, and give that run"
        )


def _run_rows(run: JudgeRun) -> dict[int, tuple]:
    """``{generation id: (has_failure, parse_failed, reasoning, critical_failures, procedure id,
    goal, reference steps, candidate steps)}`` of the run's judged items."""
    rows = JudgeRunItem.objects.filter(run=run, judgment__isnull=False).values_list(
        "generation_id",
        "judgment__has_failure",
        "judgment__parse_failed",
        "judgment__reasoning",
        "judgment__critical_failures",
        "generation__procedure_id",
        "generation__procedure__goal",
        "generation__procedure__steps",
        "generation__predicted_steps",
    )
    return {row[0]: row[1:] for row in rows.iterator(chunk_size=2000)}


def _run_verdicts(run: JudgeRun) -> dict[int, tuple[bool, bool]]:
    """``{generation id: (has_failure, parse_failed)}`` of the run's judged items."""
    rows = JudgeRunItem.objects.filter(run=run, judgment__isnull=False).values_list(
        "generation_id", "judgment__has_failure", "judgment__parse_failed"
    )
    return {gid: (hf, pf) for gid, hf, pf in rows.iterator(chunk_size=5000)}


def _human_labelled() -> tuple[set[int], set[int]]:
    """(generation ids, procedure ids) that humans labelled in any study."""
    rows = Annotation.objects.values_list(
        "item__generation_id", "item__generation__procedure_id"
    ).distinct()
    gens, procs = set(), set()
    for gid, pid in rows:
        gens.add(gid)
        procs.add(pid)
    return gens, procs


def completion_json(*, reasoning: str, critical_failures: list) -> str:
    return json.dumps(
        {"reasoning": reasoning, "critical_failures": critical_failures}, ensure_ascii=False
    )


def distill_records(
    *, teacher: Judge, runs: Sequence[JudgeRun], report: DistillationReport
) -> Iterator[dict[str, str]]:
    """The SFT records, counting kept and dropped items into ``report``."""
    _check_runs(teacher=teacher, runs=runs)
    template = teacher.prompt_text()
    first, second = _run_rows(runs[0]), _run_verdicts(runs[1])
    labelled_generations, labelled_procedures = _human_labelled()
    seen: set[str] = set()
    for gid in sorted(first.keys() | second.keys()):
        report.n_items += 1
        a, b = first.get(gid), second.get(gid)
        reason = None
        if a is None or b is None:
            reason = "not_in_both_runs"
        elif a[1] or b[1]:
            reason = "parse_failed"
        elif bool(a[0]) != bool(b[0]):
            reason = "inconsistent"
        elif gid in labelled_generations or a[4] in labelled_procedures:
            reason = "human_labelled"
        if reason is None:
            _, _, reasoning, failures, _, goal, ref, cand = a
            h = prompting.content_hash(goal=goal, reference_steps=ref or [], steps=cand or [])
            if h in seen:
                reason = "duplicate_content"
            seen.add(h)
        if reason is not None:
            report.dropped[reason] += 1
            continue
        report.n_kept += 1
        yield {
            "prompt": prompting.render_judge_prompt(
                template=template, goal=goal, reference_steps=ref or [], steps=cand or []
            ),
            "completion": completion_json(reasoning=reasoning, critical_failures=failures or []),
        }


def distill_export(
    *, teacher: Judge, run_ids: Sequence[int], path: str | Path
) -> DistillationReport:
    """Write the SFT JSONL to ``path`` (atomically: a failure leaves no partial file)."""
    runs_by_id = {
        r.pk: r for r in JudgeRun.objects.select_related("judge").filter(pk__in=list(run_ids))
    }
    missing = [str(i) for i in run_ids if i not in runs_by_id]
    if missing:
        raise DistillationError(f"no judge run with id {', '.join(missing)}")
    runs = [runs_by_id[i] for i in run_ids]
    report = DistillationReport(teacher=teacher.name, run_ids=tuple(run_ids))  # type: ignore[arg-type]
    path = Path(path)
    records = distill_records(teacher=teacher, runs=runs, report=report)
    fd, tmp = tempfile.mkstemp(
        prefix=".distill-", suffix=".jsonl", dir=path.parent if str(path.parent) else "."
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    report.path = str(path)
    return report
