"""``manage.py record_demo_mining``: record the demo mining batch's replies again
(``demo/fixtures/mining/replies.jsonl``) with the ``record`` backend around the scripted
replies of ``answers.json``. Needed only after a mining prompt changes."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from demo.mining import RECORDING, record_demo_replies


class Command(BaseCommand):
    help = "Record the demo mining batch's replies again (demo/fixtures/mining/replies.jsonl)."

    def handle(self, *args, **options):
        counts = record_demo_replies()
        n = sum(1 for line in RECORDING.read_text(encoding="utf-8").splitlines() if line.strip())
        shown = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        self.stdout.write(self.style.SUCCESS(f"Recorded {n} replies in {RECORDING} ({shown})."))
