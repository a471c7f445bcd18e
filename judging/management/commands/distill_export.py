"""python manage.py distill_export --teacher NAME --runs ID1,ID2 -o FILE.jsonl"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from judging.models import Judge
from judging.services.distillation import DistillationError, distill_export


class Command(BaseCommand):
    help = (
        "SFT JSONL {prompt, completion} from a teacher judge's two runs (seed 000 C.2): items whose binary "
        "verdict agrees in both runs, leaving out items humans labelled."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--teacher", required=True, help="name of the teacher judge (the first run's judge)"
        )
        parser.add_argument(
            "--runs",
            required=True,
            help="two judge run ids, comma-separated: teacher run, second run",
        )
        parser.add_argument("-o", "--output", required=True, help="JSONL file to write")

    def handle(self, *args, **opts):
        teacher = Judge.objects.filter(name=opts["teacher"]).first()
        if teacher is None:
            raise CommandError(f"no judge named {opts['teacher']!r}")
        parts = [p.strip() for p in opts["runs"].split(",") if p.strip()]
        if not all(p.isdigit() for p in parts):
            raise CommandError(
                f"--runs: expected two integer run ids like 12,13, got {opts['runs']!r}"
            )
        try:
            report = distill_export(
                teacher=teacher, run_ids=[int(p) for p in parts], path=opts["output"]
            )
        except (DistillationError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        data = report.to_json()
        self.stdout.write(
            f"wrote {data['n_kept']} records to {data['path']} ({data['n_items']} items, {data['n_dropped']} dropped: "
            + ", ".join(f"{k} {v}" for k, v in data["dropped"].items())
            + ")"
        )
