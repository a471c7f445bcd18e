"""``manage.py agreement_report --input FILE.csv --format json|text``: the agreement report
for a long-format label CSV from any source (``item_id,annotator_id,label`` and optionally
``first_failure_step`` and grouping columns such as ``topic`` or ``generator``)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.agreement import LEVELS
from annotation.agreement_report import build_report, report_to_text
from annotation.label_file import LabelFileError, parse_label_csv


class Command(BaseCommand):
    help = "Agreement statistics (Krippendorff's α with a bootstrap CI, κ, majority, leave-one-out) for a label CSV."

    def add_arguments(self, parser):
        parser.add_argument(
            "--input",
            required=True,
            help="long-format CSV: item_id,annotator_id,label[,first_failure_step]",
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

    def handle(self, *args, **options):
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
        categories = options["categories"].split(",") if options["categories"] else None
        try:
            report = build_report(
                label_file.rows,
                level=options["level"],
                categories=categories,
                group_columns=[c.lower() for c in options["group_by"]],
                with_location=label_file.has_location,
                n_resamples=options["bootstrap"],
                seed=options["seed"],
            )
        except ValueError as exc:
            raise CommandError(f"{path}: {exc}") from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False))
        else:
            self.stdout.write(report_to_text(report), ending="")
