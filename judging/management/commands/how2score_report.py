"""python manage.py how2score_report --judge NAME [--generator NAME] [--run ID] [--format json|text]"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks.management.arguments import generator_argument
from core.formatting import fmt_number
from judging.models import Judge, JudgeRun
from judging.selectors.judgments import how2score_report


class Command(BaseCommand):
    help = "How2Score of a judge per generator, overall and by topic (reference field names)."

    def add_arguments(self, parser):
        parser.add_argument("--judge", required=True)
        parser.add_argument("--generator", default=None)
        parser.add_argument("--run", type=int, default=None)
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, **opts):
        judge = Judge.objects.filter(name=opts["judge"]).first()
        if judge is None:
            raise CommandError(f"no judge named {opts['judge']!r}")
        generator = generator_argument(opts["generator"]) if opts["generator"] else None
        run = None
        if opts["run"] is not None:
            run = JudgeRun.objects.filter(pk=opts["run"], judge=judge).first()
            if run is None:
                raise CommandError(f"no run {opts['run']} of judge {judge.name!r}")
        report = how2score_report(judge=judge, generator=generator, run=run)
        if opts["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        self.stdout.write(f"How2Score of judge {report['judge']} ({report['judge_id'][:12]})")
        if not report["generators"]:
            self.stdout.write("  no judgments")
        for g in report["generators"]:
            tokens = fmt_number(g["avg_generated_tokens"], 1, undefined="-")
            self.stdout.write(
                f"\n{g['generator']}: How2Score {g['how2score_percent']:.1f}%  n={g['n_examples']}  "
                f"with failures={g['n_with_failures']}  avg failures={g['avg_failures_per_example']:.3f}  "
                f"parse failed={g['n_parse_failed']}  avg generated tokens={tokens}"
            )
            self.stdout.write(f"  {'topic':<28} {'n':>6} {'fail':>6} {'How2Score':>10}")
            for r in g["by_topic"]:
                self.stdout.write(
                    f"  {r['topic'] or '(none)':<28} {r['n_judged']:>6} {r['n_with_failures']:>6} "
                    f"{r['how2score_percent']:>9.1f}%"
                )
