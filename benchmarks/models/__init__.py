"""The benchmark data model: one module per concern, all importable from ``benchmarks.models``."""

from benchmarks.models.catalog import Dataset, Generation, Generator, Procedure, Topic
from benchmarks.models.generation_runs import GenerationRun

__all__ = ["Dataset", "Generation", "GenerationRun", "Generator", "Procedure", "Topic"]
