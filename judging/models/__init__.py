"""The judging data model: one module per concern, all importable from ``judging.models``."""

from judging.models.judges import Judge, JudgeRun, JudgeRunItem, Judgment

__all__ = ["Judge", "JudgeRun", "JudgeRunItem", "Judgment"]
