"""python manage.py judge_validation --study ID --judge NAME [--others A,B] [--dataset ID]
[--bootstrap N] [--seed S] [--format json|text]"""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from benchmarks.models import Dataset
from core.formatting import fmt_interval, fmt_stat
from judging.selectors import verdicts as comparison_sel
from validation.judge_validation import reads as sel


def _fmt(stat: dict, *, percent: bool = False) -> str:
    text = fmt_stat(stat, percent=percent, undefined="undefined ({reason})")
    interval = fmt_interval(stat)
    return f"{text} [{interval}]" if interval else text


def _block_lines(name: str, block: dict) -> list[str]:
    per_class = block["per_class"]
    return [
        f"{name} (n {block['n_compared']}): agreement {_fmt(block['agreement'], percent=True)}",
        f"  has_failure {_fmt(per_class['has_failure'], percent=True)}"
        f" (n {per_class['has_failure']['n_items']}),"
        f" no_failure {_fmt(per_class['no_failure'], percent=True)}"
        f" (n {per_class['no_failure']['n_items']})",
        f"  Cohen's kappa {_fmt(block['kappa'])}, Gwet's AC1 {_fmt(block['gwet_ac1'])}",
    ]


def report_lines(report: dict) -> list[str]:
    items = report["items"]
    lines = [
        f"Judge {report['judge']['name']} vs the human majority of study "
        f"{report['study']['name']} (#{report['study']['id']})",
        f"Items: {items['n_compared']} compared of {items['n_items']} "
        f"({items['n_tied']} tied, {items['n_not_judged']} not judged, "
        f"{items['n_parse_failed']} not parsed)",
        *_block_lines("Judge", report),
        "Constant-predictor baselines:",
        *(line for b in report["baselines"] for line in _block_lines(b["predictor"], b)),
        "Leave-one-out human agreement:",
        *(
            f"  {a['annotator_id']} (n {a['n_compared']}): {_fmt(a['agreement'], percent=True)}"
            for a in report["leave_one_out"]["annotators"]
        ),
        f"The judge is {report['versus_humans']['position']} the annotators' range.",
        f"Human gwet_ac1 {_fmt(report['human']['gwet_ac1'])}, alpha "
        f"{_fmt(report['human']['alpha'])}",
    ]
    for p in report["judge_pairs"]:
        lines.append(
            f"vs {p['judge_b']} (n {p['n_shared']} items both judged): agreement "
            f"{_fmt(p['agreement'], percent=True)}, kappa {_fmt(p['kappa'])}, "
            f"AC1 {_fmt(p['gwet_ac1'])}"
        )
    for t in report["ranking_tau"]:
        lines.append(
            f"Kendall tau-b {t['judge_a']} vs {t['judge_b']} "
            f"(n {t['n_common']} generators): {_fmt(t['tau'])}"
        )
    return lines


class Command(BaseCommand):
    help = (
        "Validate a judge against a study's human majority: agreement overall and per class "
        "with 95% bootstrap CIs, Cohen's kappa and Gwet's AC1 with CIs, constant-predictor "
        "baselines, leave-one-out human agreement, and agreement / ranking tau with other judges."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", type=int, required=True, help="study id")
        parser.add_argument("--judge", required=True, help="judge name")
        parser.add_argument("--others", default=None, help="comma-separated other judge names")
        parser.add_argument("--dataset", type=int, default=None, help="rank generators on it")
        parser.add_argument("--bootstrap", type=int, default=1000, help="resamples (0: no CI)")
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, **opts):
        study = Study.objects.filter(pk=opts["study"]).first()
        if study is None:
            raise CommandError(f"--study: no study with id {opts['study']}")
        try:
            judge = comparison_sel.judges_by_names([opts["judge"]])[0]
        except ValidationError as exc:
            raise CommandError(f"--judge: {'; '.join(exc.messages)}") from exc
        others = None
        if opts["others"]:
            try:
                others = comparison_sel.judges_by_names(
                    [n.strip() for n in opts["others"].split(",") if n.strip()]
                )
            except ValidationError as exc:
                raise CommandError(f"--others: {'; '.join(exc.messages)}") from exc
        dataset = None
        if opts["dataset"] is not None:
            dataset = Dataset.objects.filter(pk=opts["dataset"]).first()
            if dataset is None:
                raise CommandError(f"--dataset: no dataset with id {opts['dataset']}")
        if opts["bootstrap"] < 0:
            raise CommandError("--bootstrap: must be 0 or more")
        report = sel.judge_validation(
            study=study,
            judge=judge,
            others=others,
            dataset=dataset,
            n_resamples=opts["bootstrap"],
            seed=opts["seed"],
        )
        if opts["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        for line in report_lines(report):
            self.stdout.write(line)
