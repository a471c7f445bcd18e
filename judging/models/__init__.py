"""The judging data model: one module per concern, all importable from ``judging.models``."""

from judging.models.judges import Judge, Judgment
from judging.models.leaderboard import LeaderboardReport
from judging.models.prompts import PromptVersion
from judging.models.runs import JudgeRun, JudgeRunEstimate, JudgeRunItem
from judging.models.samples import JudgmentSample

__all__ = [
    "Judge",
    "JudgeRun",
    "JudgeRunEstimate",
    "JudgeRunItem",
    "Judgment",
    "JudgmentSample",
    "LeaderboardReport",
    "PromptVersion",
]
