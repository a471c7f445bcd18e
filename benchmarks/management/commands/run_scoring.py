"""python manage.py run_scoring --pack PACK --generator NAME --dataset NAME[@V]
[--option NAME=VALUE ...] [--chunk-size 500] [--inline]"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks.management.arguments import dataset_argument, generator_argument
from benchmarks.management.commands.score import parse_options
from benchmarks.packs.registry import get_pack
from benchmarks.services.scoring_runs import ScoringRunError, scoring_run_create
from core.runs import engine


class Command(BaseCommand):
    help = (
        "Create a scoring run: a scorer pack over every generation of a generator on a dataset "
        "(the console's Scoring runs). Queued for the workers, or worked here with --inline; "
        "prints the run's counters and the pack's summary."
    )

    def add_arguments(self, parser):
        parser.add_argument("--pack", required=True, help="scorer pack name, e.g. procbench")
        parser.add_argument("--generator", required=True)
        parser.add_argument("--dataset", required=True, help="NAME or NAME@VERSION")
        parser.add_argument(
            "--option", action="append", default=[], metavar="NAME=VALUE", help="a pack option"
        )
        parser.add_argument("--chunk-size", type=int, default=500)
        parser.add_argument("--inline", action="store_true", help="work the run in this process")

    def handle(self, *args, **opts):
        try:
            pack = get_pack(opts["pack"])
        except KeyError as exc:
            raise CommandError(f"--pack: {exc.args[0]}") from None
        options = parse_options(opts["option"], dict(pack.options))
        generator = generator_argument(opts["generator"])
        dataset = dataset_argument(opts["dataset"])
        try:
            run = scoring_run_create(
                generator=generator,
                dataset=dataset,
                pack=pack.name,
                options=options,
                chunk_size=opts["chunk_size"],
                start=not opts["inline"],
            )
        except ScoringRunError as exc:
            raise CommandError(str(exc)) from exc
        if not opts["inline"]:
            self.stdout.write(f"scoring run {run.pk} queued ({run.n_total} generations)")
            return
        run = engine.execute_inline(run)
        self.stdout.write(
            f"scoring run {run.pk} {run.status} — {run.n_done}/{run.n_total} scored, "
            f"{run.n_failed} not scorable{': ' + run.error if run.error else ''}"
        )
        self.stdout.write(json.dumps({"summary": run.summary}, sort_keys=True))
        if run.status != "done":
            raise CommandError(f"scoring run {run.pk} {run.status}: {run.error}")
