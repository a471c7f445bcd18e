"""The benchmarks console: catalog data and generation runs."""

from benchmarks.admin import catalog, generation_runs, scoring_runs  # noqa: F401  (registers the model admins)
