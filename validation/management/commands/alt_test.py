"""python manage.py alt_test --humans H.json --llm L.json --scoring accuracy|neg_rmse
[--epsilon E | --annotator-kind crowd|skilled|experts] [--q 0.05] [--format json|text]

or python manage.py alt_test --labels FILE [...]: a label-set file
(:mod:`annotation.label_set_file`), every judge in it tested against its annotators; scoring
from the labels (categories: accuracy, numbers: negative RMSE) unless --scoring says.

or, to size a study first: python manage.py alt_test --plan [--categories K]
[--annotator-noise X] [--judge-noise Y] [--annotators N] [--sizes 30,50,100]
[--epsilons 0,0.05,0.1,0.2] [--datasets D] [--boots B] [--seed S] [--format json|text]"""

from __future__ import annotations

import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.label_set_file import LabelSetError, read_label_set
from validation.alt_test import planner as alt_test_planner
from validation.alt_test.formats import AltTestFormatError, nested_labels, read_json
from validation.alt_test.stats import (
    DEFAULT_ANNOTATORS,
    DEFAULT_Q,
    EPSILON_BY_ANNOTATORS,
    SCORINGS,
    alt_test,
)
from validation.alt_test.words import annotator_line, power_sentence, verdict_sentence
from validation.label_sets.adapters import alt_test_inputs


def _numbers(raw: str, *, option: str, kind=float) -> list:
    try:
        return [kind(x) for x in raw.split(",") if x.strip()]
    except ValueError as exc:
        raise CommandError(f"{option}: expected comma-separated numbers, got {raw!r}") from exc


def _fmt(value, digits: int = 2) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


class Command(BaseCommand):
    help = (
        "The alternative annotator test (alt-test, Calderon et al. 2025) of every LLM in --llm "
        "against the annotators in --humans (the reference repository's JSON format): winning "
        "rate, advantage probability, pass/fail, per-annotator p-values (Benjamini-Yekutieli). "
        "With --plan: the sample-size simulation (expected winning rate per number of items and "
        "epsilon)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--humans", help="JSON {annotator: {instance: label}}")
        parser.add_argument("--llm", help="JSON {llm_name: {instance: label}}")
        parser.add_argument(
            "--labels", help="label-set file (CSV or JSONL: item_id,source,kind,label[,group])"
        )
        parser.add_argument("--scoring", choices=sorted(SCORINGS), default=None)
        parser.add_argument(
            "--annotator-kind",
            choices=sorted(EPSILON_BY_ANNOTATORS),
            default=DEFAULT_ANNOTATORS,
            help="who the annotators are; sets ε when --epsilon is not given "
            "(crowd 0.1, skilled 0.15, experts 0.2)",
        )
        parser.add_argument(
            "--epsilon",
            type=float,
            default=None,
            help="cost-benefit ε (default: by --annotator-kind)",
        )
        parser.add_argument("--q", type=float, default=DEFAULT_Q, help="FDR level (0.05)")
        parser.add_argument("--format", choices=["json", "text"], default="text")
        plan = parser.add_argument_group("sample-size planner (--plan)")
        plan.add_argument("--plan", action="store_true", help="simulate instead of testing")
        plan.add_argument("--categories", type=int, default=4, help="K label categories (4)")
        plan.add_argument("--annotator-noise", type=float, default=0.3, help="(0.3)")
        plan.add_argument("--judge-noise", type=float, default=0.3, help="(0.3)")
        plan.add_argument("--annotators", type=int, default=3, help="annotators per item (3)")
        plan.add_argument("--sizes", default="30,40,50,60,70,80,90,100,120,140,160,180,200")
        plan.add_argument("--epsilons", default="0,0.05,0.1,0.2")
        plan.add_argument("--datasets", type=int, default=20, help="simulated datasets (20)")
        plan.add_argument("--boots", type=int, default=10, help="samples per dataset (10)")
        plan.add_argument("--seed", type=int, default=0)

    def handle(self, *args, **opts):
        if opts["plan"]:
            return self._plan(opts)
        if opts["epsilon"] is None:
            opts["epsilon"] = EPSILON_BY_ANNOTATORS[opts["annotator_kind"]]
        if opts["labels"]:
            if opts["humans"] or opts["llm"]:
                raise CommandError("--labels: give either --labels or --humans/--llm")
            humans, llms = self._label_set(opts)
        else:
            humans, llms = self._json(opts)
        try:
            results = {
                name: alt_test(
                    humans=humans,
                    judge=labels,
                    scoring=opts["scoring"],
                    epsilon=opts["epsilon"],
                    q=opts["q"],
                ).to_json()
                for name, labels in llms.items()
            }
        except ValueError as exc:
            raise CommandError(f"--{exc!s}") from exc
        if opts["format"] == "json":
            self.stdout.write(json.dumps(results, indent=2, ensure_ascii=False))
            return
        n_categories = len({v for labels in humans.values() for v in labels.values()})
        for name, r in results.items():
            verdict = "PASSED" if r["passed"] else "FAILED"
            self.stdout.write(verdict_sentence(r, judge=name, annotators=opts["annotator_kind"]))
            if not r["passed"]:
                estimate = alt_test_planner.items_needed(
                    n_categories=n_categories, n_annotators=len(humans), epsilon=r["epsilon"]
                )
                self.stdout.write(power_sentence(r, estimate))
            self.stdout.write(
                f"{name} [{verdict}]: winning rate ω {_fmt(r['winning_rate'])}, advantage "
                f"probability ρ {_fmt(r['advantage_probability'])} (ε {r['epsilon']:g}, "
                f"q {r['q']:g}, {r['n_items']} items)"
            )
            for a in r["annotators"]:
                self.stdout.write(f"  {annotator_line(a)}")
            skipped = r["skipped"]
            for s in skipped["annotators"]:
                self.stdout.write(f"  left out: {s['annotator']} ({s['n_items']} items)")
            if skipped["items"]:
                self.stdout.write(f"  {len(skipped['items'])} items left out")

    def _json(self, opts):
        missing = [f"--{k}" for k in ("humans", "llm", "scoring") if opts[k] is None]
        if missing:
            raise CommandError(f"{', '.join(missing)}: required (or use --labels or --plan)")
        numeric = opts["scoring"] == "neg_rmse"
        try:
            humans = nested_labels(
                read_json(opts["humans"], option="--humans"),
                where=f"--humans {opts['humans']}",
                outer="annotator",
                numeric=numeric,
            )
            llms = nested_labels(
                read_json(opts["llm"], option="--llm"),
                where=f"--llm {opts['llm']}",
                outer="LLM",
                numeric=numeric,
            )
        except AltTestFormatError as exc:
            raise CommandError(str(exc)) from exc
        return humans, llms

    def _label_set(self, opts):
        try:
            label_set = read_label_set(opts["labels"], max_bytes=settings.LABEL_SET_MAX_BYTES)
            humans, judges, opts["scoring"] = alt_test_inputs(label_set, scoring=opts["scoring"])
        except LabelSetError as exc:
            raise CommandError(f"--labels {exc}") from None
        if not humans or not judges:
            raise CommandError(
                f"--labels {opts['labels']}: the alt-test needs labels of kind human and of kind "
                "judge"
            )
        return humans, judges

    def _plan(self, opts):
        try:
            result = alt_test_planner.plan(
                n_categories=opts["categories"],
                annotator_noise=opts["annotator_noise"],
                judge_noise=opts["judge_noise"],
                n_annotators=opts["annotators"],
                sizes=_numbers(opts["sizes"], option="--sizes", kind=int),
                epsilons=_numbers(opts["epsilons"], option="--epsilons"),
                n_datasets=opts["datasets"],
                n_boots=opts["boots"],
                q=opts["q"],
                seed=opts["seed"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if opts["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2))
            return
        eps = list(result["rows"][0]["winning_rate"])
        self.stdout.write(
            f"Expected winning rate ω (annotators' κ {_fmt(result['annotator_kappa'])}, judge "
            f"accuracy vs majority {result['judge_accuracy_vs_majority']:.2f})"
        )
        self.stdout.write("items  " + "  ".join(f"ε={e:>5}" for e in eps) + "  ρ")
        for row in result["rows"]:
            cells = "  ".join(f"{row['winning_rate'][e]:7.2f}" for e in eps)
            self.stdout.write(f"{row['n_items']:5d}  {cells}  {row['advantage_probability']:.2f}")
        for e, n in result["smallest_n_items_passing"].items():
            self.stdout.write(
                f"ε={e}: "
                + (f"ω ≥ 0.5 from {n} items" if n else "ω stays below 0.5 at these sizes")
            )
