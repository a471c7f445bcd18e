"""Add items of any form type to a study from a JSONL file, all or none.

    manage.py add_form_items --study 12 items.jsonl

One JSON object a line: ``{"generation_id", "generation_b_id"? (pairwise), "kind"? (regular |
attention | training | qualification | gold), "context"? ({"hint"}, {"prompt", "record"}),
"expected_label"? (known items), "explanation"?}``; a bad line is refused naming the file line
and the field, and nothing is added (:func:`annotation.services.form_items.study_form_items_add`).
"""

from __future__ import annotations

import json
import re

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from annotation.services.form_items import study_form_items_add
from core.errors import validation_text

_ITEM = re.compile(r"^item (\d+): ")


class Command(BaseCommand):
    help = "Add items of the study's form type (pairs, hints, solve records, known answers)."

    def add_arguments(self, parser):
        parser.add_argument("--study", type=int, required=True, help="study id")
        parser.add_argument("file", help="JSONL, one item a line")

    def handle(self, *args, **opts):
        study = Study.objects.filter(pk=opts["study"]).first()
        if study is None:
            raise CommandError(f"--study {opts['study']}: no such study")
        path = opts["file"]
        specs, lines = [], []
        try:
            with open(path, encoding="utf-8") as stream:
                for number, raw in enumerate(stream, start=1):
                    if not raw.strip():
                        continue
                    try:
                        spec = json.loads(raw)
                    except json.JSONDecodeError as exc:
                        raise CommandError(f"{path} line {number}: not JSON ({exc.msg})") from exc
                    if not isinstance(spec, dict):
                        raise CommandError(f"{path} line {number}: must be a JSON object")
                    specs.append(spec)
                    lines.append(number)
        except OSError as exc:
            raise CommandError(f"{path}: {exc.strerror or exc}") from exc
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path}: not UTF-8 text") from exc
        try:
            items = study_form_items_add(study=study, items=specs)
        except ValidationError as exc:
            text = validation_text(exc)
            found = _ITEM.match(text)
            if found:
                text = f"line {lines[int(found.group(1)) - 1]}: " + text[found.end() :]
            raise CommandError(f"{path} {text}") from exc
        self.stdout.write(f"added {len(items)} {study.form_type} items to study {study.pk}")
