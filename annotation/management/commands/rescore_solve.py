"""Score again a solve study's answers stored with ``score_error`` (e.g. after the scorer pack
or the study's ``pack_options`` were fixed), and judge again the attention and qualification
results those answers gave.

    manage.py rescore_solve --study 12
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from annotation.services.solve import solve_answers_rescore
from core.errors import validation_text


class Command(BaseCommand):
    help = "Re-score a solve study's answers that have a score_error."

    def add_arguments(self, parser):
        parser.add_argument("--study", type=int, required=True, help="study id")

    def handle(self, *args, **opts):
        study = Study.objects.filter(pk=opts["study"]).first()
        if study is None:
            raise CommandError(f"--study {opts['study']}: no such study")
        try:
            result = solve_answers_rescore(study=study)
        except ValidationError as exc:
            raise CommandError(f"--study {study.pk}: {validation_text(exc)}") from exc
        self.stdout.write(
            f"Study {study.pk}: {result['rescored']} answer(s) scored, "
            f"{result['still_failing']} still not scored."
        )
        for line in result["errors"]:
            self.stdout.write(f"  {line}")
        if result["checks_changed"]:
            self.stdout.write(
                f"{result['checks_changed']} attention/qualification result(s) judged again; "
                "review participants "
                + ", ".join(map(str, result["recheck"]))
                + " on the quality page (a warning, screening out or qualification already "
                "decided is not undone)."
            )
