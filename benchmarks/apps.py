from django.apps import AppConfig
from django.db.models.signals import post_migrate


def ensure_topics(**_kwargs) -> None:
    """The 14 topics are reference data: (re)create them after every migrate and every test-database
    flush (Django's flush emits post_migrate), so they are always there."""
    from benchmarks.models import Topic
    from benchmarks.topics import TOPICS

    existing = dict(Topic.objects.values_list("slug", "name"))
    if existing and all(existing.get(slug) == name for slug, name in TOPICS):
        return
    for position, (slug, name) in enumerate(TOPICS):
        Topic.objects.update_or_create(slug=slug, defaults={"name": name, "position": position})


def preload_client(**_kwargs) -> None:
    """A Celery worker's main process, when it starts and before its pool processes fork: the
    LLM client's libraries (``warm_up(tokens=False)``, ~0.4 s of CPU, ~23 MB shared with the
    pool), which a run's first chunk in a fresh pool process imported before its first request."""
    from benchmarks.llm.openai_compat import warm_up
    from core import heap

    warm_up(tokens=False)
    heap.settle()


def warm_up_worker(**_kwargs) -> None:
    """A Celery pool process, when it starts: with ``settings.WORKER_WARM_UP`` it loads the token
    counter (and the client, where its main process did not) now rather than on its first chunk
    (:func:`benchmarks.llm.openai_compat.warm_up`); then what it holds is frozen out of the
    garbage collector's scans (:func:`core.heap.settle`)."""
    from django.conf import settings

    from core import heap

    if settings.WORKER_WARM_UP:
        from benchmarks.llm.openai_compat import warm_up

        warm_up()
    heap.settle()


class BenchmarksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "benchmarks"
    verbose_name = "Benchmarks"

    def ready(self) -> None:
        post_migrate.connect(ensure_topics, sender=self, dispatch_uid="how2review.ensure_topics")
        from celery.signals import worker_init, worker_process_init

        worker_init.connect(preload_client, dispatch_uid="how2review.preload_client")
        worker_process_init.connect(warm_up_worker, dispatch_uid="how2review.warm_up_worker")
        # registers benchmarks.batches_poll, which beat sends by name, at start (as core.apps and
        # annotation.apps do theirs): a task module first imported later in a long-lived process
        # was once missing from the app's registry (NotRegistered in CI)
        from benchmarks import tasks  # noqa: F401

        register_run_types()


def register_run_types() -> None:
    """The benchmarks' run types on the run engine (:mod:`core.runs.registry`)."""
    from benchmarks.models import GenerationRun, ScoringRun
    from benchmarks.services.generation_batches import GenerationRunBatches
    from benchmarks.services.generation_execution import GenerationRunExecutor
    from benchmarks.services.scoring_execution import ScoringRunExecutor
    from core.runs import registry

    registry.register(
        GenerationRun, executor=GenerationRunExecutor(), batch_adapter=GenerationRunBatches()
    )
    registry.register(ScoringRun, executor=ScoringRunExecutor())
