from django.apps import AppConfig


class JudgingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "judging"
    verbose_name = "Judging"

    def ready(self) -> None:
        register_run_types()


def register_run_types() -> None:
    """Judging's run types on the run engine (:mod:`core.runs.registry`): a judge run (its
    items selected and hashed by the worker before the first chunk; the Batch API where its
    judge's backend asks for it), a cost estimate and a leaderboard report."""
    from core.runs import registry
    from judging.models import JudgeRun, JudgeRunEstimate, LeaderboardReport
    from judging.services.batch_mode import JudgeRunBatches
    from judging.services.estimates import JudgeRunEstimateExecutor
    from judging.services.execution import JudgeRunExecutor
    from judging.services.leaderboard import LeaderboardReportExecutor
    from judging.services.runs import judge_run_launch_prepare

    registry.register(
        JudgeRun,
        executor=JudgeRunExecutor(),
        batch_adapter=JudgeRunBatches(),
        prepare_launch=judge_run_launch_prepare,
    )
    registry.register(JudgeRunEstimate, executor=JudgeRunEstimateExecutor())
    registry.register(LeaderboardReport, executor=LeaderboardReportExecutor())
