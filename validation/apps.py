from django.apps import AppConfig


class ValidationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "validation"

    def ready(self) -> None:
        """A study made from a plan shows its corrected How2Score on its report
        (:mod:`annotation.report_panels`); a study with a target interval has it checked after
        labels arrive (:mod:`validation.stopping.hooks`, which also registers the task with the
        worker)."""
        from annotation import report_panels
        from validation.ppi_plan.study_report import study_interval_panel
        from validation.stopping import hooks

        report_panels.register(study_interval_panel)
        hooks.connect()
