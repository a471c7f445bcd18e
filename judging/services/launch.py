"""A judge run's launch, finished in the worker: the console and the API only create the run
row (its size is one COUNT) and launch it; selecting its generations, hashing each item's
content and inserting the items (seconds for 70,000 items) is the first thing the worker does,
holding the run's lease, before its first chunk (:func:`judging.services.runs.judge_run_prepare`).
Everything else is :class:`judging.services.execution.JudgeRunExecutor`'s."""

from __future__ import annotations

from core.runs.engine import Lease
from judging.models import JudgeRun
from judging.services.execution import JudgeRunExecutor


class JudgeRunLaunchExecutor(JudgeRunExecutor):
    """The judge-run executor whose ``prepare`` first selects and hashes the run's items (once:
    ``prepared_at``), then links what is known as before."""

    def prepare(self, run: JudgeRun, lease: Lease) -> None:
        if run.prepared_at is None:
            from judging.services.runs import judge_run_prepare

            judge_run_prepare(run=run, lease=lease)
            run.refresh_from_db()
        super().prepare(run, lease)
