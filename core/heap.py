"""The garbage collector in a Celery worker's long-lived processes.

A worker's heap is mostly what it imported — Django, the apps, the LLM client's libraries:
~220,000 container objects that live as long as the process. CPython's cyclic collector walks all
of them in every full collection; in a judge run's pool process that was 4–5 full collections
of ~150 ms each (0.6–0.75 s of a 3.4 s run's CPU) and the young generation's collections (every
700 new objects) another ~0.2 s. :func:`settle` moves what is alive now into the permanent
generation (``gc.freeze``: never scanned again, and pages shared with a forked pool process stay
shared) and lets the young generation grow to :data:`YOUNG_THRESHOLD` objects before it is
collected. Garbage made later (reference cycles included) is collected as before.

Called in the worker's main process once the client is imported, before the pool forks
(:func:`benchmarks.apps.preload_client`), and in each pool process once it has warmed up
(:func:`benchmarks.apps.warm_up_worker`). Web processes keep the defaults: a request's garbage
is mostly cycles that live until a collection, so fewer, larger collections measured the same.
"""

from __future__ import annotations

import gc
import logging

logger = logging.getLogger(__name__)

YOUNG_THRESHOLD = 50_000


def settle() -> None:
    """Collect what is garbage now, freeze the rest, and collect the young generation every
    :data:`YOUNG_THRESHOLD` new objects (older generations keep their ratios)."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    logger.info(
        "heap settled: %d objects frozen, young generation collected every %d new objects",
        gc.get_freeze_count(),
        YOUNG_THRESHOLD,
    )
