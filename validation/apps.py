from django.apps import AppConfig


class ValidationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "validation"

    def ready(self) -> None:
        # a study with a target interval: its check is enqueued after labels arrive (and the
        # worker registers the task)
        from validation.stopping import hooks

        hooks.connect()
