"""python manage.py how2score_ppi --labelled L.csv --unlabelled U.csv [--format json|text]"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from validation.ppi.formats import PPIFormatError, read_rows
from validation.ppi.stats import how2score_ppi

FIELDS = (
    "how2score",
    "ci",
    "failure_rate",
    "failure_rate_ci",
    "judge_only_how2score",
    "judge_only_ci",
    "human_only_how2score",
    "human_only_ci",
    "n_labelled",
    "n_unlabelled",
)


def _pct(value) -> str:
    return "undefined" if value is None else f"{100 * value:.1f}%"


def _ci(ci) -> str:
    return "" if ci is None else f" [95% CI {100 * ci[0]:.1f} – {100 * ci[1]:.1f}%]"


class Command(BaseCommand):
    help = (
        "How2Score corrected with human labels (PPI++, ppi-python, power-tuned lambda, 95% CI): "
        "labelled CSV id,human,judge and unlabelled CSV id,judge (has_failure 0/1); prints the "
        "corrected score beside the judge-only and human-only estimates."
    )

    def add_arguments(self, parser):
        parser.add_argument("--labelled", required=True, help="CSV with columns id,human,judge")
        parser.add_argument("--unlabelled", required=True, help="CSV with columns id,judge")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, **opts):
        try:
            labelled, w1 = read_rows(
                opts["labelled"], option="--labelled", columns=("id", "human", "judge")
            )
            unlabelled, w2 = read_rows(
                opts["unlabelled"], option="--unlabelled", columns=("id", "judge")
            )
        except PPIFormatError as exc:
            raise CommandError(str(exc)) from exc
        for warning in w1 + w2:
            self.stderr.write(warning)
        both = sorted({r[0] for r in labelled} & {r[0] for r in unlabelled})
        if both:
            shown = ", ".join(repr(i) for i in both[:5])
            raise CommandError(
                f"--unlabelled: {len(both)} id(s) also in --labelled ({shown}); an item is "
                "either labelled or unlabelled"
            )
        result = how2score_ppi(
            human=[r[1] for r in labelled],
            judge=[r[2] for r in labelled],
            unlabelled=[r[1] for r in unlabelled],
        )
        out = {k: result[k] for k in FIELDS}
        for key in ("undefined", "lambda_note"):
            if key in result:
                out[key] = result[key]
        if opts["format"] == "json":
            self.stdout.write(json.dumps(out, indent=2))
            return
        self.stdout.write(
            f"How2Score (PPI++): {_pct(out['how2score'])}{_ci(out['ci'])}; failure rate "
            f"{_pct(out['failure_rate'])}{_ci(out['failure_rate_ci'])}"
        )
        self.stdout.write(
            f"Judge only: {_pct(out['judge_only_how2score'])}{_ci(out['judge_only_ci'])} "
            f"(n {out['n_labelled'] + out['n_unlabelled']})"
        )
        self.stdout.write(
            f"Human only: {_pct(out['human_only_how2score'])}{_ci(out['human_only_ci'])} "
            f"(n {out['n_labelled']})"
        )
        for key in ("undefined", "lambda_note"):
            if key in out:
                self.stdout.write(f"Note: {out[key]}")
