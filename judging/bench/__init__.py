"""``manage.py bench``: the reference's suite configs (``h2e bench``) on how2review's runs.

- :mod:`~judging.bench.config`: load and check a YAML suite config (errors name the key and
  the file), resolve each model and the evaluator, the reference's ``generator_id`` /
  ``judge_id`` (pure);
- :mod:`~judging.bench.inputs`: the benchmark examples from a local file or a directory with
  ``include_globs`` (JSONL/CSV/Parquet/Arrow IPC, plain or gz/zst/bz2/xz; the ``bench`` and
  ``how2mine_export`` record kinds) (pure);
- :mod:`~judging.bench.layout`: where the output files go and what ids they already hold (pure);
- :mod:`~judging.bench.outputs`: the records, manifests, aggregates, leaderboard and tables
  written in the reference's formats (pure);
- :mod:`~judging.bench.store`: the database side — dataset, generator and judge of a config,
  the generation and judge runs (through the run services and Celery) and their rows;
- :mod:`~judging.bench.pipeline`: ``validate``, ``gen``, ``judge``, ``run``, ``leaderboard``.
"""
