"""The judge leaderboard out of the request. Computing it reads every judgment of the chosen
judges and counts the o200k tokens of candidates without stored counts (seconds at 70,000
items), so it is stored per choice of judges and study (:class:`judging.models.LeaderboardReport`)
with the state of the data it was computed on (:func:`leaderboard_signature`: a few aggregate
queries). A page asks :func:`leaderboard_get`: a stored report of the same state is shown at
once; otherwise a small leaderboard (at most :data:`INLINE_MAX` judgments) is computed in the
request, and a large one by a run of the engine (:class:`LeaderboardReportExecutor`, the
engine's chunk task; the report row is the run, resumed whenever it is asked again) while the
page shows the last report, marked as being updated, and polls."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from annotation.models import Annotation, Study
from core.runs import engine
from core.runs.engine import KEEP_WORKING, Lease, RunExecutor
from core.runs.models import RunStatus
from judging.leaderboard import reads as sel
from judging.models import Judge, JudgeRun, Judgment, LeaderboardReport

INLINE_MAX = 5000  # judgments; below this the leaderboard takes tens of ms


def _names(judges: Sequence[Judge] | None) -> list[str] | None:
    return None if judges is None else sorted(j.name for j in judges)


def leaderboard_key(*, judges: Sequence[Judge] | None, study: Study | None) -> str:
    raw = json.dumps({"judges": _names(judges), "study": study.pk if study else None})
    return hashlib.sha256(raw.encode()).hexdigest()


def leaderboard_signature(
    *, judges: Sequence[Judge] | None, study: Study | None
) -> tuple[str, int]:
    """(the state of what the leaderboard reads, its number of judgments): the judgments of the
    chosen judges (count, last id), their runs (last change) and the study's labels."""
    chosen = list(judges) if judges is not None else list(Judge.objects.all())
    judgments = Judgment.objects.filter(judge_key__in={j.judge_id for j in chosen}).aggregate(
        n=Count("id"), last=Max("id")
    )
    runs = JudgeRun.objects.filter(judge__in=chosen).aggregate(
        n=Count("id"), last=Max("updated_at")
    )
    parts = [
        ",".join(str(j.pk) for j in sorted(chosen, key=lambda j: j.pk)),
        f"{judgments['n']}:{judgments['last']}",
        f"{runs['n']}:{runs['last'].isoformat() if runs['last'] else ''}",
    ]
    if study is not None:
        labels = Annotation.objects.filter(item__study=study).aggregate(
            n=Count("id"), last=Max("id"), at=Max("submitted_at")
        )
        parts.append(
            f"{labels['n']}:{labels['last']}:{labels['at'].isoformat() if labels['at'] else ''}"
        )
    return hashlib.sha256("|".join(parts).encode()).hexdigest(), judgments["n"]


def _json_ready(value: Any) -> Any:
    """What jsonb stores: NaN and infinities become null, other values their text."""
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, bool | int | str):
        return value
    return str(value)


def _result(report: LeaderboardReport) -> Any:
    judges = None if report.judges is None else list(Judge.objects.filter(name__in=report.judges))
    return _json_ready(sel.judge_leaderboard(judges=judges, study=report.study))


def _stored(report: LeaderboardReport, result: Any, signature: str) -> dict[str, Any]:
    return {
        "result": result,
        "signature": signature,
        "error": "",
        "computed_at": timezone.now(),
        "n_total": 1,
        "n_done": 1,
    }


def _compute_inline(report: LeaderboardReport, signature: str) -> None:
    """A small leaderboard, computed in the request (tens of ms): not a background run, but the
    row ends as a finished run would."""
    now = timezone.now()
    try:
        result = _result(report)
    except Exception as exc:  # noqa: BLE001 - stored and shown on the page
        LeaderboardReport.objects.filter(pk=report.pk).update(
            status=RunStatus.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            finished_at=now,
        )
        return
    LeaderboardReport.objects.filter(pk=report.pk).update(
        status=RunStatus.DONE, finished_at=now, **_stored(report, result, signature)
    )


def leaderboard_get(
    *, judges: Sequence[Judge] | None, study: Study | None, refresh: bool = False
) -> dict[str, Any]:
    """``{"report": the leaderboard or None, "fresh": computed on the current data, "pending":
    a worker is recomputing it, "computed_at", "error", "status"}``. ``refresh`` recomputes
    even when the data looks unchanged."""
    signature, n_judgments = leaderboard_signature(judges=judges, study=study)
    key = leaderboard_key(judges=judges, study=study)
    report, created = LeaderboardReport.objects.get_or_create(
        key=key, defaults={"judges": _names(judges), "study": study, "n_total": 1}
    )
    done = RunStatus.DONE
    if report.status == done and report.signature == signature and not refresh:
        return _answer(report, fresh=True)
    idle = created or not report.is_active  # a new row is queued but never launched
    if n_judgments <= INLINE_MAX and idle:
        _compute_inline(report, signature)
        report.refresh_from_db()
        return _answer(report, fresh=report.status == done)
    with transaction.atomic():
        locked = LeaderboardReport.objects.select_for_update().get(pk=report.pk)
        if not (locked.is_active and locked.wanted == signature):
            LeaderboardReport.objects.filter(pk=report.pk).update(
                wanted=signature, asked_at=timezone.now()
            )
            if created:
                engine.launch(locked)
            elif not locked.is_active:
                engine.resume(locked, done_too=True)
            # an active run notices the newer ask when its chunk ends and computes again
    report.refresh_from_db()
    return _answer(report, fresh=False)


def _answer(report: LeaderboardReport, *, fresh: bool) -> dict[str, Any]:
    return {
        "report": report.result,
        "fresh": fresh,
        "pending": report.is_active,
        "computed_at": report.computed_at,
        "error": report.error if report.status == RunStatus.FAILED else "",
        "status": report.status,
    }


def leaderboard_compute(*, report_id: int) -> LeaderboardReport | None:
    """Work an asked (active) report in this process, as the engine's chunk task would
    (commands, benchmarks). A finished report is left as it is."""
    return engine.execute_pending(LeaderboardReport, report_id)


class LeaderboardReportExecutor(RunExecutor):
    """One chunk recomputes the leaderboard on the data as it is now (its state taken before
    reading, so a change meanwhile asks again). A newer ask that came while it computed
    (``asked_at`` later than the chunk's start) makes it compute once more."""

    def work_chunk(self, run: LeaderboardReport, lease: Lease) -> bool:
        asked_at = run.asked_at
        judges = None if run.judges is None else list(Judge.objects.filter(name__in=run.judges))
        signature, _ = leaderboard_signature(judges=judges, study=run.study)
        result = _result(run)
        if lease.beat() not in KEEP_WORKING:
            return True  # cancelling or lost: the engine ends or leaves it
        lease.held().update(**_stored(run, result, signature))
        now_asked = LeaderboardReport.objects.filter(pk=run.pk).values_list("asked_at", flat=True)
        latest = now_asked.first()
        return latest is not None and asked_at is not None and latest > asked_at

    def counters(self, run: LeaderboardReport) -> dict[str, Any]:
        """One item, the leaderboard: done once a result is stored (counted from the row)."""
        stored = LeaderboardReport.objects.filter(pk=run.pk, result__isnull=False).exists()
        return {"n_total": 1, "n_done": int(stored)}
