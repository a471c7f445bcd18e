"""python manage.py generation_scores --generator NAME [--dataset NAME[@V]] [--format json|text]"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks.management.arguments import dataset_argument, generator_argument
from benchmarks.models import Procedure
from benchmarks.services.scores import generation_scores_summary
from core.formatting import fmt_value

TEXT_ROWS = [
    ("n_examples", "examples", "{:.0f}"),
    ("avg_gen_tokens", "avg generated tokens (o200k_base)", "{:.2f}"),
    ("avg_ref_tokens", "avg reference tokens (o200k_base)", "{:.2f}"),
    ("gen_ref_ratio", "gen/ref token ratio (ratio of means)", "{:.3f}"),
    ("mean_example_gen_ref_ratio", "gen/ref token ratio (mean per example)", "{:.3f}"),
    ("step_count_mismatch", "step-count mismatch rate (D.3)", "{:.2%}"),
    ("duplicate_steps", "duplicate-step example rate (D.3)", "{:.2%}"),
    ("dup_ngram_rate", "dup n-gram rate, mean n=1..4 (D.3)", "{:.2%}"),
    ("step_format", "step-format verifier pass rate (E.4)", "{:.2%}"),
    ("length_reward", "mean length reward (E.4)", "{:.3f}"),
]


class Command(BaseCommand):
    help = "The D.3 / E.4 scorer summary of a generator's generations (scores missing ones first)."

    def add_arguments(self, parser):
        parser.add_argument("--generator", required=True, help="generator name")
        parser.add_argument(
            "--dataset", default=None, help="only procedures of NAME or NAME@VERSION"
        )
        parser.add_argument(
            "--scorers", default="", help="comma-separated scorer names or dotted paths"
        )
        parser.add_argument("--refresh", action="store_true", help="rescore every generation")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, **opts):
        generator = generator_argument(opts["generator"])
        procedures = None
        if opts["dataset"]:
            procedures = Procedure.objects.filter(dataset=dataset_argument(opts["dataset"]))
        names = [s.strip() for s in opts["scorers"].split(",") if s.strip()] or None
        try:
            summary = generation_scores_summary(
                generator=generator,
                procedures=procedures,
                scorer_names=names,
                refresh=opts["refresh"],
            )
        except ValueError as exc:
            raise CommandError(f"--scorers: {exc}") from exc
        if opts["format"] == "json":
            self.stdout.write(json.dumps(summary, indent=2, sort_keys=True))
            return
        self.stdout.write(f"generator: {summary['generator']}")
        shown = set()
        for key, label, fmt in TEXT_ROWS:
            if key in summary:
                shown.add(key)
                value = summary[key]
                self.stdout.write(f"  {label}: {fmt_value(value, fmt, undefined='n/a')}")
        for key in sorted(set(summary) - shown - {"generator"}):
            self.stdout.write(f"  {key}: {summary[key]}")
