"""python manage.py generator_checkpoint --generator NAME --family F [--size S] [--stage S]
[--step N] [--flops X] | --clear"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks.checkpoints import CheckpointError, checkpoint_clean
from benchmarks.models import Generator


class Command(BaseCommand):
    help = (
        "Set (or clear) a generator's training-checkpoint metadata, used by the checkpoint "
        "scaling, formatting-proxy and ordering analyses (family, size, stage, step, FLOPs)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--generator", required=True)
        parser.add_argument("--family", default=None)
        parser.add_argument("--size", default=None)
        parser.add_argument("--stage", default=None)
        parser.add_argument("--step", default=None)
        parser.add_argument("--flops", default=None)
        parser.add_argument("--clear", action="store_true")

    def handle(self, *args, **opts):
        generator = Generator.objects.filter(name=opts["generator"]).first()
        if generator is None:
            raise CommandError(f"--generator: no generator named {opts['generator']!r}")
        if opts["clear"]:
            value = {}
        else:
            raw = {k: opts[k] for k in ("family", "size", "stage", "step", "flops") if opts[k]}
            try:
                value = checkpoint_clean(raw)
            except CheckpointError as exc:
                raise CommandError(str(exc).replace("checkpoint.", "--")) from exc
        generator.checkpoint = value
        generator.save(update_fields=["checkpoint"])
        self.stdout.write(f"{generator.name}: checkpoint {json.dumps(value)}")
