"""The judging data model: one module per concern, all importable from ``judging.models``."""

from judging.models.judges import Judge, Judgment
from judging.models.runs import JudgeRun, JudgeRunItem

__all__ = ["Judge", "JudgeRun", "JudgeRunItem", "Judgment"]
