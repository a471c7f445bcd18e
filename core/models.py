"""The core app's own table: the lanes of runs worked by several workers at once (the abstract
run itself lives in :mod:`core.runs.models`)."""

from core.runs.models import RunLane

__all__ = ["RunLane"]
