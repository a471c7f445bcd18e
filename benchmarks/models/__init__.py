"""The benchmark data model: one module per concern, all importable from ``benchmarks.models``."""

from benchmarks.models.batches import ProviderBatch
from benchmarks.models.catalog import Dataset, Generation, Generator, Procedure, Topic
from benchmarks.models.generation_runs import GenerationRun
from benchmarks.models.scoring_runs import ScoringRun

__all__ = [
    "Dataset",
    "Generation",
    "GenerationRun",
    "Generator",
    "Procedure",
    "ProviderBatch",
    "ScoringRun",
    "Topic",
]
