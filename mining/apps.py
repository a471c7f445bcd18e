from django.apps import AppConfig


class MiningConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "mining"
    label = "mining"
    verbose_name = "Mining (How2Mine)"

    def ready(self) -> None:
        register_run_types()


def register_run_types() -> None:
    """Mining's run types on the run engine (:mod:`core.runs.registry`): a batch (its upload
    read by the worker before the first chunk; the Batch API where its stages ask for it) and
    a promotion."""
    from core.runs import registry
    from mining.models import MiningBatch, MiningPromotion
    from mining.services.batch_mode import MiningBatches
    from mining.services.execution import MiningBatchExecutor
    from mining.services.ingest import batch_launch_prepare
    from mining.services.promotion import MiningPromotionExecutor

    registry.register(
        MiningBatch,
        executor=MiningBatchExecutor(),
        batch_adapter=MiningBatches(),
        prepare_launch=batch_launch_prepare,
    )
    registry.register(MiningPromotion, executor=MiningPromotionExecutor())
