"""Celery tasks of the benchmarks app. Generation and scoring runs have none of their own:
their chunks are the run engine's one task (``core.run_chunk``, :mod:`core.tasks`)."""

from celery import shared_task


@shared_task(name="benchmarks.batches_poll", ignore_result=True, expires=300)
def batches_poll() -> dict[str, int]:
    """Look at every open provider batch (beat, every ``BATCH_POLL_SECONDS``): one service."""
    from benchmarks.services import batch_runs

    return batch_runs.poll()
