from django.apps import AppConfig


class MiningConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "mining"
    label = "mining"
    verbose_name = "Mining (How2Mine)"
