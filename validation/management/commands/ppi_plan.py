"""python manage.py ppi_plan --labelled FILE --cost-human C --cost-judge c
(--budget B | --effective-n N | --half-width H) [--judge NAME] [--currency GBP] [--format json];
--study ID instead of --cost-human takes the study's pay terms (:mod:`validation.ppi_plan.costs`);
--pilot-study ID --judge NAME instead of --labelled takes a running study's labels and an app
judge's verdicts as the pilot; without --cost-judge an app judge's measured cost per judgment

or, without pilot labels, --ppi-corr R --sigma S instead of --labelled. FILE is a label-set file
(:mod:`annotation.label_set_file`): an item's human label is the majority of its annotators (a
tie: not labelled), the judge's verdict its kind=judge row. See :mod:`validation.ppi_plan.stats`."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.label_set_file import LabelSetError, read_label_set
from validation.label_sets.adapters import ALL_GROUPS, judge_names, ppi_inputs
from validation.ppi_plan.reads import judge_cost_per_verdict, study_human_cost, study_pilot
from validation.ppi_plan.stats import (
    BUDGET,
    EFFECTIVE_N,
    HALF_WIDTH,
    PlanError,
    plan_from_pilot,
    plan_stated,
)
from validation.ppi_plan.words import money, plan_sentences, points

OPTIONS = {
    "cost_human": "--cost-human",
    "cost_judge": "--cost-judge",
    "ppi_corr": "--ppi-corr",
    "sigma": "--sigma",
    "labels": "--labelled",
    BUDGET: "--budget",
    EFFECTIVE_N: "--effective-n",
    HALF_WIDTH: "--half-width",
}
KEYS = ("n", "N", "judge_verdicts", "cost", "effective_n", "ppi_corr", "sigma", "half_width",
        "confidence", "people_only", "target", "basis")  # fmt: skip


class Command(BaseCommand):
    help = (
        "Plan a study: the cost-optimal number of human labels (n) and judge verdicts for a "
        "budget, an effective sample size or a 95% half-width on How2Score (ppi_py."
        "ppi_mean_power), beside what the same interval costs with people alone."
    )

    def add_arguments(self, parser):
        parser.add_argument("--labelled", help="pilot label-set file (item_id,source,kind,label)")
        parser.add_argument(
            "--pilot-study", type=int, help="a running study's labels as the pilot (with --judge)"
        )
        parser.add_argument(
            "--judge",
            help="with --labelled: the file's judge (default: the first); with --pilot-study: "
            "an app judge's name",
        )
        parser.add_argument("--ppi-corr", type=float, help="without pilot: judge–human correlation")
        parser.add_argument("--sigma", type=float, help="without pilot: σ of a human 0/1 label")
        parser.add_argument(
            "--cost-human", type=float, help="cost of one human label (default: --study's terms)"
        )
        parser.add_argument(
            "--study", type=int, help="a study id: its reward per item plus PROLIFIC_FEE_RATE"
        )
        parser.add_argument(
            "--cost-judge",
            type=float,
            help="cost of one verdict (default: the app judge's measured cost per judgment)",
        )
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--budget", type=float, help="total budget to spend")
        target.add_argument("--effective-n", type=int, help="effective sample size to reach")
        target.add_argument(
            "--half-width", type=float, help="95%% half-width on How2Score, 0–1 (0.03 = ±3 points)"
        )
        parser.add_argument("--currency", default="", help="shown after amounts (e.g. GBP)")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, **opts):
        kind, value = next(
            (k, opts[k]) for k in (BUDGET, EFFECTIVE_N, HALF_WIDTH) if opts[k] is not None
        )
        said = ""
        if opts["study"] is not None and opts["cost_human"] is None:
            try:
                opts["cost_human"], currency, said = study_human_cost(opts["study"])
            except LookupError as exc:
                raise CommandError(f"--study: {exc}") from None
            opts["currency"] = opts["currency"] or currency
        elif opts["cost_human"] is None:
            raise CommandError("--cost-human: required (or give --study ID to use its pay terms)")
        measured = opts["cost_judge"] is None
        if measured:
            if not opts["judge"]:
                raise CommandError("--cost-judge: required (or name an app judge with --judge)")
            try:
                opts["cost_judge"], judge_said = judge_cost_per_verdict(opts["judge"])
            except LookupError as exc:
                raise CommandError(f"--judge: {exc}") from None
            said = f"{said} {judge_said}".strip()
        costs = {"cost_human": opts["cost_human"], "cost_judge": opts["cost_judge"]}
        if opts["pilot_study"] is not None and opts["labelled"]:
            raise CommandError("--pilot-study: give it or --labelled, not both")
        pilot_given = opts["labelled"] or opts["pilot_study"] is not None
        if pilot_given and (opts["ppi_corr"] is not None or opts["sigma"] is not None):
            raise CommandError(
                "--ppi-corr/--sigma: give them without --labelled or --pilot-study (a pilot "
                "measures both)"
            )
        try:
            if opts["pilot_study"] is not None:
                if not opts["judge"]:
                    raise CommandError("--judge: required with --pilot-study (an app judge)")
                try:
                    pilot = study_pilot(study_id=opts["pilot_study"], judge_name=opts["judge"])
                except LookupError as exc:
                    raise CommandError(f"--pilot-study: {exc}") from None
                plan = plan_from_pilot(**pilot, **costs, target=kind, value=value)
            elif opts["labelled"]:
                plan = plan_from_pilot(
                    **self._pilot(opts["labelled"], opts["judge"]), **costs, target=kind,
                    value=value,
                )  # fmt: skip
            else:
                missing = [
                    f"--{k}" for k in ("ppi-corr", "sigma") if opts[k.replace("-", "_")] is None
                ]
                if missing:
                    raise CommandError(
                        f"{' and '.join(missing)}: required without --labelled (the plan rests "
                        "on the judge–human correlation and the spread of a human label)"
                    )
                if opts["judge"] and not measured:
                    raise CommandError(
                        "--judge: without a pilot it only takes the judge's measured cost; "
                        "give --cost-judge or --judge, not both"
                    )
                plan = plan_stated(
                    ppi_corr=opts["ppi_corr"], sigma=opts["sigma"], **costs, target=kind,
                    value=value,
                )  # fmt: skip
        except PlanError as exc:
            raise CommandError(f"{OPTIONS.get(exc.field, exc.field)}: {exc}") from None
        if opts["format"] == "json":
            out = {k: plan[k] for k in KEYS}
            out["cost_human"] = plan["cost_human"]
            for key in ("pilot", "note"):
                if key in plan:
                    out[key] = plan[key]
            self.stdout.write(json.dumps(out, indent=2, ensure_ascii=False))
            return
        cur = opts["currency"]
        for sentence in plan_sentences(plan, currency=cur):
            self.stdout.write(sentence)
        if said:
            self.stdout.write(said)
        self.stdout.write(
            f"Human labels n: {plan['n']:,}; judge verdicts: {plan['judge_verdicts']:,} "
            f"(N = {plan['N']:,} judge-only items); cost {money(plan['cost'], cur)}"
        )
        self.stdout.write(
            f"Effective n: {plan['effective_n']:,}; expected half-width {points(plan['half_width'])}"
            f" at 95%; ρ = {plan['ppi_corr']:.3f}; σ = {plan['sigma']:.3f}"
        )
        self.stdout.write(
            f"People alone: {plan['people_only']['n']:,} label(s), "
            f"{money(plan['people_only']['cost'], cur)}"
        )

    def _pilot(self, path: str, judge: str | None) -> dict:
        try:
            label_set = read_label_set(path, max_bytes=settings.LABEL_SET_MAX_BYTES)
            name = judge or (judge_names(label_set) or [None])[0]
            rows = ppi_inputs(label_set, judge=name)[ALL_GROUPS]
        except LabelSetError as exc:
            where = f"--labelled {path}, " if exc.line is not None else "--labelled "
            raise CommandError(f"{where}{exc}") from None
        return {
            "human": rows["human"],
            "judge": rows["judge"],
            "unlabelled": len(rows["unlabelled"]),
        }
