"""Mining batches have no task of their own: each chunk of a batch is the run engine's chunk
task (``core.run_chunk``, :mod:`core.tasks`), sent by :func:`core.runs.engine.launch`."""
