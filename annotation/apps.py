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

        # the item page's codebook question, kept per process by version id
        from django.db.models.signals import post_delete, post_save

        from annotation.models import CodebookVersion
        from annotation.pages.annotator import forget_codebook_questions

        for signal in (post_save, post_delete):
            signal.connect(
                forget_codebook_questions, sender=CodebookVersion, dispatch_uid="codebook-q"
            )
