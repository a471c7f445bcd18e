"""Celery tasks of the judging app: none of its own. A judge run is worked by the run engine's
one chunk task, ``core.run_chunk`` (:mod:`core.tasks`), on the queue its judge's backend is
routed to (``benchmarks.llm.registry.queue_for``: a vLLM judge on the ``gpu`` queue); runs left
active by a dead worker are resumed when a worker starts (``core.runs_resume_orphans``)."""
