"""python manage.py judge_compare --study ID | --judges A,B [--dataset ID] [--format json|text]"""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from benchmarks.models import Dataset
from core.formatting import fmt_percent, fmt_stat
from judging.selectors.verdicts import judges_by_names
from validation.comparisons.reads import comparison_report


def _pct(stat: dict | None) -> str:
    return fmt_stat(stat, percent=True)


class Command(BaseCommand):
    help = (
        "Judges against the human majority of a study (overall, per class, Cohen's kappa) and against "
        "each other; with --judges alone: judge-judge agreement on everything both judged, generator "
        "rankings with Kendall's tau, and the judge leaderboard."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", type=int, default=None, help="study id")
        parser.add_argument("--judges", default=None, help="comma-separated judge names")
        parser.add_argument(
            "--dataset", type=int, default=None, help="rank generators on this dataset only"
        )
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, **opts):
        if opts["study"] is None and not opts["judges"]:
            raise CommandError("give --study ID or --judges A,B (or both)")
        judges = self._judges(opts)
        study = dataset = None
        if opts["study"] is not None:
            study = Study.objects.filter(pk=opts["study"]).first()
            if study is None:
                raise CommandError(f"no study with id {opts['study']}")
        elif opts["dataset"] is not None:
            dataset = Dataset.objects.filter(pk=opts["dataset"]).first()
            if dataset is None:
                raise CommandError(f"no dataset with id {opts['dataset']}")
        report = comparison_report(study=study, judges=judges, dataset=dataset)
        if opts["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        lines = [
            *(_study_lines(report["comparison"]) if "comparison" in report else []),
            *_pair_lines(report),
            *(_ranking_lines(report["rankings"]) if "rankings" in report else []),
            *_leaderboard_lines(report["leaderboard"]),
        ]
        for line in lines:
            self.stdout.write(line)

    @staticmethod
    def _judges(opts) -> list | None:
        if not opts["judges"]:
            return None
        names = [n.strip() for n in opts["judges"].split(",") if n.strip()]
        try:
            judges = judges_by_names(names)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        if opts["study"] is None and len(judges) < 2:
            raise CommandError("--judges needs at least two judge names to compare")
        return judges


def _study_lines(c: dict) -> list[str]:
    h = c["human"]
    lines = [
        f"Study {c['study']['id']} {c['study']['name']}: {h['n_labelled']} items with human labels, "
        f"{h['n_tied']} tied (excluded); majority has_failure {h['n_has_failure']}, "
        f"no_failure {h['n_no_failure']}"
    ]
    if h["leave_one_out_min"] is not None:
        low, high = fmt_percent(h["leave_one_out_min"]), fmt_percent(h["leave_one_out_max"])
        lines.append(f"Leave-one-out human agreement: {low}–{high}")
    lines.append(
        f"\n{'judge':<28} {'n':>5} {'agree':>8} {'has_fail':>9} {'no_fail':>9} {'kappa':>8}"
    )
    for j in c["judges"]:
        lines.append(
            f"{j['judge']:<28} {j['n_compared']:>5} {_pct(j['agreement']):>8} "
            f"{_pct(j['per_class']['has_failure']['agreement']):>9} "
            f"{_pct(j['per_class']['no_failure']['agreement']):>9} {fmt_stat(j['kappa']):>8}"
        )
    return lines


def _pair_lines(report: dict) -> list[str]:
    pairs = (report.get("comparison") or report["judge_pairs"])["pairs"]
    if not pairs:
        return []
    return [f"\n{'judge A':<24} {'judge B':<24} {'n':>6} {'agree':>8} {'kappa':>8}"] + [
        f"{p['judge_a']:<24} {p['judge_b']:<24} {p['n_shared']:>6} {_pct(p['agreement']):>8} "
        f"{fmt_stat(p['kappa']):>8}"
        for p in pairs
    ]


def _ranking_lines(rankings: dict) -> list[str]:
    lines = []
    for j in rankings["judges"]:
        lines.append(f"\nGenerators under {j['judge']}:")
        lines += [
            f"  {r['rank']:>3}. {r['generator']:<32} {r['how2score_percent']:6.1f}  n={r['n_examples']}"
            for r in j["ranking"]
        ]
    lines += [
        f"Kendall tau-b {t['judge_a']} vs {t['judge_b']}: {fmt_stat(t['tau'])} over "
        f"{t['n_common']} generators, n={t.get('n_items', 0)} generations both judges scored"
        for t in rankings["kendall_tau"]
    ]
    return lines


def _leaderboard_lines(leaderboard: dict) -> list[str]:
    header = (
        f"\n{'leaderboard':<28} {'agree':>8} {'parse_fail':>10} {'fail_rate':>10} {'cost':>10} "
        f"{'time_s':>9} {'gen/ref':>8}"
    )
    return [header] + [
        f"{r['judge']:<28} {_pct(r['agreement']):>8} {_pct(r['parse_failure_rate']):>10} "
        f"{_pct(r['failure_rate']):>10} {r['cost']:>10.4f} {r['time_s']:>9.1f} "
        f"{fmt_stat(r['verbosity']):>8}"
        for r in leaderboard["rows"]
    ]
