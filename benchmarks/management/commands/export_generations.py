"""python manage.py export_generations --generator NAME [--dataset NAME[@V]] [-o FILE]"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

from django.core.management.base import BaseCommand, CommandError

from benchmarks import formats
from benchmarks.exports import generation_records, write_jsonl
from benchmarks.models import Dataset, Generator
from benchmarks.services import resolve_dataset


def write_output(command: BaseCommand, records: Iterator[dict[str, Any]], output: str | None) -> int:
    """Write records to stdout, or to ``output`` through a temporary file renamed at the end."""
    if not output:
        n = 0
        for record in records:
            command.stdout.write(formats.dumps_line(record), ending="")
            n += 1
        return n
    target = Path(output)
    fd, tmp = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".", prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            n = write_jsonl(records, out)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


class Command(BaseCommand):
    help = "Export a generator's generations as how2bench.generation.v1 JSONL (stdout by default)."

    def add_arguments(self, parser):
        parser.add_argument("--generator", required=True)
        parser.add_argument("--dataset", default=None, help="NAME or NAME@VERSION (default: all datasets)")
        parser.add_argument("-o", "--output", default=None, help="file to write (default stdout)")

    def handle(self, *args, **opts):
        generator = Generator.objects.filter(name=opts["generator"]).first()
        if generator is None:
            raise CommandError(f"--generator: no generator named {opts['generator']!r}")
        dataset = None
        if opts["dataset"]:
            name, version = formats.split_dataset_spec(opts["dataset"])
            try:
                dataset = resolve_dataset(name=name, version=version)
            except (Dataset.DoesNotExist, Dataset.MultipleObjectsReturned) as exc:
                raise CommandError(f"--dataset {opts['dataset']}: {exc}") from exc
        n = write_output(self, generation_records(generator=generator, dataset=dataset), opts["output"])
        self.stderr.write(f"exported {n} generations of {generator.name}")
