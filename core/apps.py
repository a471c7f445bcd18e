from django.apps import AppConfig
from django.core import checks
from django.db.models.signals import post_migrate


class CoreConfig(AppConfig):
    """Shared plumbing, the lowest layer: roles, access checks, error conversion, streaming
    exports, formatting, dataset references, prepared statements and the run engine. Imports
    no other app."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from core import tasks  # noqa: F401  registers core's tasks (the engine's core.run_chunk)
        from core.prepared_check import CHECK_TAG, check_prepared_statements
        from core.roles import ensure_roles

        post_migrate.connect(ensure_roles, dispatch_uid="how2review.ensure_roles")
        # the console's JSON boxes are empty, not "null", when there is no value
        from core.admin_a11y import json_boxes_empty_when_null

        json_boxes_empty_when_null()
        # and stored JSON it only shows (a run's result) as lists a person reads, not JSON text
        from core.admin_json import show_json_readably

        show_json_readably()
        # manage.py check and server start: every prepared statement compiles as the ORM does.
        checks.register(check_prepared_statements, CHECK_TAG)
        # and every run model has a run type registered by its app (core.runs.registry)
        from core.runs.registry import check_run_types

        checks.register(check_run_types)
