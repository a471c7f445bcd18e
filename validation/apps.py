from django.apps import AppConfig


class ValidationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "validation"

    def ready(self) -> None:
        """A study made from a plan shows its corrected How2Score on its report
        (:mod:`annotation.report_panels`)."""
        from annotation import report_panels
        from validation.ppi_plan.study_report import study_interval_panel

        report_panels.register(study_interval_panel)
