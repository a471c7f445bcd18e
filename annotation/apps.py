from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from django.core import checks

        # registers the Prolific tasks, which the webhook receiver sends by name
        from annotation import tasks  # noqa: F401

        # manage.py check and server start: the item path's one-statement writes compose
        from annotation.prepared_cte import check_composed_statements

        checks.register(check_composed_statements, "prepared_statements")
