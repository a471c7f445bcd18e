from django.apps import AppConfig


class RunappConfig(AppConfig):
    name = "tests.runapp"
    label = "runapp"
    default_auto_field = "django.db.models.BigAutoField"
