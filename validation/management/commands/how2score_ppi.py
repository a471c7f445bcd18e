"""python manage.py how2score_ppi --labelled L.csv --unlabelled U.csv [--format json|text]

or python manage.py how2score_ppi --labels FILE [--judge NAME] [--group G] [--format json|text]:
a label-set file (:mod:`annotation.label_set_file`), an item's human label being the majority
of its annotators (a tie: unlabelled), the judge's verdicts on every item it judged."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.label_set_file import LabelSetError, read_label_set
from validation.label_sets.adapters import ALL_GROUPS, judge_names, ppi_inputs
from validation.ppi.formats import PPIFormatError, read_rows
from validation.ppi.stats import how2score_ppi
from validation.ppi.words import ppi_sentences

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
    "lambda",
    "labelled_bias",
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
        parser.add_argument("--labelled", help="CSV with columns id,human,judge")
        parser.add_argument("--unlabelled", help="CSV with columns id,judge")
        parser.add_argument(
            "--labels", help="label-set file (CSV or JSONL: item_id,source,kind,label[,group])"
        )
        parser.add_argument("--judge", help="with --labels: the judge (default: the first)")
        parser.add_argument("--group", help="with --labels: only the items of this group")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, **opts):
        if opts["labels"]:
            if opts["labelled"] or opts["unlabelled"]:
                raise CommandError("--labels: give either --labels or --labelled/--unlabelled")
            return self._labels(opts)
        missing = [f"--{k}" for k in ("labelled", "unlabelled") if not opts[k]]
        if missing:
            raise CommandError(f"{', '.join(missing)}: required (or give --labels FILE)")
        if opts["judge"] or opts["group"]:
            raise CommandError("--judge and --group go with --labels")
        try:
            labelled, w1 = read_rows(
                opts["labelled"], option="--labelled", columns=("id", "human", "judge")
            )
            unlabelled, w2 = read_rows(
                opts["unlabelled"],
                option="--unlabelled",
                columns=("id", "judge"),
                empty_hint="; PPI needs the judge's verdicts on items people did not label (one "
                "id,judge row each): they are what the labelled items correct",
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
        out = _fields(result)
        if opts["format"] == "json":
            self.stdout.write(json.dumps(out, indent=2))
            return
        self._text(out, judge="the judge", group="")

    def _labels(self, opts):
        try:
            label_set = read_label_set(opts["labels"], max_bytes=settings.LABEL_SET_MAX_BYTES)
            judge = opts["judge"] or (judge_names(label_set) or [None])[0]
            inputs = ppi_inputs(label_set, judge=judge, group=opts["group"])
        except LabelSetError as exc:
            raise CommandError(f"--labels {exc}") from None
        results = {key: _fields(how2score_ppi(**rows)) for key, rows in inputs.items()}
        if opts["group"] is not None:
            out = {**results[opts["group"]], "judge": judge, "group": opts["group"]}
        else:
            out = {**results.pop(ALL_GROUPS), "judge": judge, "group": None}
            if results:
                out["groups"] = results
        if opts["format"] == "json":
            self.stdout.write(json.dumps(out, indent=2, ensure_ascii=False))
            return
        self._text(out, judge=judge, group=opts["group"] or "")
        for name, r in out.get("groups", {}).items():
            self.stdout.write("")
            self._text(r, judge=judge, group=name)

    def _text(self, out, *, judge: str, group: str):
        for sentence in ppi_sentences(out, judge=judge, group=group):
            self.stdout.write(sentence)
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


def _fields(result: dict) -> dict:
    out = {k: result[k] for k in FIELDS}
    for key in ("undefined", "lambda_note"):
        if key in result:
            out[key] = result[key]
    return out
