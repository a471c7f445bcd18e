"""python manage.py escalation --study ID --judge NAME [--alpha A] [--delta D] [--seed S]
[--format json|text]"""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from judging.selectors import verdicts as comparison_sel
from validation.escalation.reads import DEFAULT_SEED, escalation_report
from validation.escalation.stats import DEFAULT_ALPHA, DEFAULT_DELTA, EscalationError
from validation.escalation.words import report_sentences

OPTION_OF = {"alpha": "--alpha", "delta": "--delta", "seed": "--seed", "study": "--study"}


def report_lines(report: dict) -> list[str]:
    cal = report["calibration"]
    lines = [
        f"Judge {report['judge']['name']} on study {report['study']['name']} "
        f"(#{report['study']['id']}), alpha {report['alpha']:g}, delta {report['delta']:g}, "
        f"seed {report['seed']}",
        *report_sentences(report),
        "Scan (confidence >= threshold: items, against people, p-value):",
        *(
            f"  {s['threshold']:.3f}: {s['n']} items, {s['n_disagree']} against, "
            f"p {s['p_value']:.3g} {'passed' if s['passed'] else 'failed (stop)'}"
            for s in cal["steps"]
        ),
        f"Items below the threshold ({len(report['escalated'])}): "
        + ", ".join(str(e["item_id"]) for e in report["escalated"]),
    ]
    return lines


class Command(BaseCommand):
    help = (
        "Calibrate the confidence threshold above which a judge decides a study's items alone "
        "(the fixed-sequence test of Trust or Escalate): agreement with the human majority at "
        "least 1 - alpha with probability at least 1 - delta, checked on held-out labels, and "
        "the items below it (for people first)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", type=int, required=True, help="study id")
        parser.add_argument("--judge", required=True, help="judge name (with seeded samples)")
        parser.add_argument(
            "--alpha", type=float, default=DEFAULT_ALPHA, help="disagreement allowed (0.1)"
        )
        parser.add_argument(
            "--delta", type=float, default=DEFAULT_DELTA, help="risk the guarantee fails (0.1)"
        )
        parser.add_argument(
            "--seed", type=int, default=DEFAULT_SEED, help="seed of the calibration split"
        )
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, **opts):
        study = Study.objects.filter(pk=opts["study"]).first()
        if study is None:
            raise CommandError(f"--study: no study with id {opts['study']}")
        try:
            judge = comparison_sel.judges_by_names([opts["judge"]])[0]
        except ValidationError as exc:
            raise CommandError(f"--judge: {'; '.join(exc.messages)}") from exc
        try:
            report = escalation_report(
                study=study, judge=judge, alpha=opts["alpha"], delta=opts["delta"],
                seed=opts["seed"],
            )  # fmt: skip
        except EscalationError as exc:
            raise CommandError(f"{OPTION_OF.get(exc.field, '--study')}: {exc}") from exc
        if opts["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        for line in report_lines(report):
            self.stdout.write(line)
