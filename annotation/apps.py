from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self) -> None:
        # registers the Prolific tasks, which the webhook receiver sends by name
        from annotation import tasks  # noqa: F401
