"""Celery tasks of the mining app: none of its own. Batch chunks and promotions
(:class:`mining.models.MiningPromotion`, embedding every candidate) are runs of the engine,
worked by its one chunk task (``core.run_chunk``, :mod:`core.tasks`), sent by
:func:`core.runs.engine.launch`."""

from __future__ import annotations
