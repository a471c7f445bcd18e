from django.apps import AppConfig
from django.db.models.signals import post_migrate


class BenchmarksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "benchmarks"
    verbose_name = "Benchmarks"

    def ready(self) -> None:
        from config.roles import ensure_roles

        post_migrate.connect(ensure_roles, dispatch_uid="how2review.ensure_roles")
