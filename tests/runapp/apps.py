from django.apps import AppConfig


class RunappConfig(AppConfig):
    name = "tests.runapp"
    label = "runapp"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core.runs import registry
        from tests.runapp.executor import ScriptedExecutor
        from tests.runapp.models import EngineRun

        registry.register(EngineRun, executor=ScriptedExecutor())
