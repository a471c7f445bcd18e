"""Celery tasks of the benchmarks app. Generation and scoring runs have none of their own:
their chunks are the run engine's one task (``core.run_chunk``, :mod:`core.tasks`)."""
