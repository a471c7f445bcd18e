"""``manage.py record_demo_judge``: record the demo replay judge's replies again
(``demo/fixtures/judge/replies.jsonl``) from the paper's published verdicts. Needs the demo
loaded (``manage.py load_demo``); needed only after the H.3 prompt or the demo data changes."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from demo.management.commands.load_demo import DEMO_DATASET, DEMO_JUDGE
from demo.replay_judge import RECORDING, record_demo_judge


class Command(BaseCommand):
    help = "Record the demo replay judge's replies again (demo/fixtures/judge/replies.jsonl)."

    def handle(self, *args, **options):
        n = record_demo_judge(dataset=DEMO_DATASET, published_judge=DEMO_JUDGE)
        if not n:
            raise CommandError(
                f"no published verdicts of {DEMO_JUDGE!r} on dataset {DEMO_DATASET!r}: "
                "run manage.py load_demo first"
            )
        self.stdout.write(self.style.SUCCESS(f"Recorded {n} replies in {RECORDING}."))
