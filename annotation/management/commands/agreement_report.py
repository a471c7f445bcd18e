"""``manage.py agreement_report --input FILE.csv --format json|text``: the agreement report
for a long-format label CSV from any source (``item_id,annotator_id,label`` and optionally
``first_failure_step`` and grouping columns such as ``topic`` or ``generator``).

``manage.py agreement_report --labels FILE`` reads a label-set file instead
(:mod:`annotation.label_set_file`): its people's labels (kind ``human``), with a breakdown by
``group`` when the file has groups."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.agreement import LEVELS
from annotation.agreement_report import build_report, report_to_text
from annotation.label_file import LabelFileError, parse_label_csv
from annotation.label_set_file import LabelSetError, agreement_rows, read_label_set


class Command(BaseCommand):
    help = "Agreement statistics (Krippendorff's α with a bootstrap CI, κ, majority, leave-one-out) for a label CSV."

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument(
            "--input", help="long-format CSV: item_id,annotator_id,label[,first_failure_step]"
        )
        source.add_argument(
            "--labels",
            help="label-set file (CSV or JSONL: item_id,source,kind,label[,group][,text]); "
            "the kind-human rows",
        )
        parser.add_argument("--format", choices=("json", "text"), default="text")
        parser.add_argument(
            "--level", choices=LEVELS, default="nominal", help="level of measurement of the label"
        )
        parser.add_argument(
            "--categories", help="comma-separated category order (ordinal labels that are words)"
        )
        parser.add_argument(
            "--group-by",
            action="append",
            default=[],
            metavar="COLUMN",
            help="a per-group breakdown by this column (repeatable), e.g. topic",
        )
        parser.add_argument(
            "--bootstrap", type=int, default=1000, help="bootstrap resamples for α's CI (0: none)"
        )
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")

    def _label_set(self, options):
        try:
            label_set = read_label_set(options["labels"], max_bytes=settings.LABEL_SET_MAX_BYTES)
        except LabelSetError as exc:
            raise CommandError(str(exc)) from None
        rows = agreement_rows(label_set)
        if not rows:
            raise CommandError(f"{options['labels']}: no labels of kind human")
        unknown = [c for c in options["group_by"] if c.lower() != "group"]
        if unknown:
            raise CommandError(
                f"--group-by {unknown[0]}: a label-set file groups by its group column only"
            )
        groups = ["group"] if label_set.groups else []
        return rows, groups, False

    def handle(self, *args, **options):
        if options["labels"]:
            path = options["labels"]
            rows, group_columns, with_location = self._label_set(options)
        else:
            path = options["input"]
            rows, group_columns, with_location = self._csv(options)
        categories = options["categories"].split(",") if options["categories"] else None
        try:
            report = build_report(
                rows,
                level=options["level"],
                categories=categories,
                group_columns=group_columns,
                with_location=with_location,
                n_resamples=options["bootstrap"],
                seed=options["seed"],
            )
        except ValueError as exc:
            raise CommandError(f"{path}: {exc}") from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False))
        else:
            self.stdout.write(report_to_text(report), ending="")

    def _csv(self, options):
        path = options["input"]
        try:
            with open(path, encoding="utf-8-sig", newline="") as stream:
                label_file = parse_label_csv(stream, group_columns=options["group_by"])
        except FileNotFoundError:
            raise CommandError(f"{path}: no such file") from None
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path}: not UTF-8 text (byte {exc.start})") from None
        except LabelFileError as exc:
            raise CommandError(f"{path} {exc}") from None
        return (
            label_file.rows,
            [c.lower() for c in options["group_by"]],
            label_file.has_location,
        )
