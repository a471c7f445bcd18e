from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo data and the ``make demo`` runner: the top layer, nothing imports it."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "demo"
    verbose_name = "Demo"
