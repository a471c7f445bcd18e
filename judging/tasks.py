"""Celery tasks of the judging app: none of its own. A judge run, a cost estimate asked in the
console or the API and a large judge leaderboard are runs of the engine, worked by its one chunk
task, ``core.run_chunk`` (:mod:`core.tasks`), on the queue the run's executor picks (a judge
run: the queue its judge's backend is routed to, ``benchmarks.llm.registry.queue_for``; a vLLM
judge on the ``gpu`` queue); a judge run's items are selected and hashed by the worker before
its first chunk (:func:`judging.services.runs.judge_run_launch_prepare`); runs left active by a dead worker are resumed when a worker
starts (``core.runs_resume_orphans``)."""

from __future__ import annotations
