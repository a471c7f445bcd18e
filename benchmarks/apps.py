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


class BenchmarksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "benchmarks"
    verbose_name = "Benchmarks"

    def ready(self) -> None:
        post_migrate.connect(ensure_topics, sender=self, dispatch_uid="how2review.ensure_topics")
