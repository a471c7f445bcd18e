"""python manage.py longproc_segments TASK (FILE | --dataset NAME[@V]) --backend JSON [--out DIR]

LongProc's segment analysis (seed 001 §5, Figure 4): for each record of the JSONL ``FILE``
(the pack's record with the prompt fields the generation protocol reads, ``gold`` and
``level``; or the procedures of a dataset imported with ``import_pack``), four requests, segment i prefilled with the gold segments 1…i−1, segment i
scored alone. ``TASK``: ``path-traversal``, ``tom-tracking`` or ``html-to-tsv``. ``--backend``:
the backend config as JSON (``{"backend": "vllm", "model": …}``, or an OpenAI-compatible vLLM
server with ``"prefill": true``); a backend that cannot prefill is refused before anything is
sent. Prints the table (segment, n, mean, 95% CI); ``--out DIR`` also writes
``segments.csv`` (the table), ``segments.json`` (table, every request's prefix, output and
score, the refused records) and ``segments.svg`` (the plot).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from benchmarks.formats.common import RecordError as LineError
from benchmarks.formats.common import iter_json_lines
from benchmarks.management.arguments import dataset_argument
from benchmarks.packs.longproc_segments import SEGMENT_TASKS
from benchmarks.packs.protocols.longproc import DEFAULT_BUFFER
from benchmarks.services.longproc_segments import dataset_records, segment_analysis


class Command(BaseCommand):
    help = "LongProc segment analysis: correctness per quarter of the gold output, gold prefilled."

    def add_arguments(self, parser):
        parser.add_argument("task", choices=SEGMENT_TASKS)
        parser.add_argument(
            "file", nargs="?", help="JSONL records (id, gold, level, the prompt's fields)"
        )
        parser.add_argument("--dataset", help="or the procedures of this dataset (NAME[@V])")
        parser.add_argument("--backend", required=True, help="backend config as a JSON object")
        parser.add_argument("--level", default=None, help="level for records without one")
        parser.add_argument("--buffer", type=int, default=DEFAULT_BUFFER)
        parser.add_argument("--out", default=None, help="folder for segments.csv/.json/.svg")

    def handle(self, *args, **opts):
        try:
            config = json.loads(opts["backend"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--backend: not JSON ({exc})") from None
        if not isinstance(config, dict):
            raise CommandError("--backend: must be a JSON object")
        if bool(opts["file"]) == bool(opts["dataset"]):
            raise CommandError("give either FILE or --dataset")
        if opts["dataset"]:
            records = dataset_records(dataset=dataset_argument(opts["dataset"]))
        else:
            records = self._read(opts["file"])
        self._run(records, config, opts)

    def _read(self, path: str) -> list[dict]:
        records, problems = [], []
        try:
            with open(path, "rb") as stream:
                for line, value in iter_json_lines(stream):
                    if isinstance(value, LineError):
                        problems.append(f"{path}:{line}: {value.message}")
                    elif not isinstance(value, dict):
                        problems.append(f"{path}:{line}: expected a JSON object")
                    else:
                        records.append(value)
        except OSError as exc:
            raise CommandError(f"{path}: cannot read ({exc.strerror})") from None
        if problems:
            raise CommandError("bad line(s), nothing sent:\n" + "\n".join(problems))
        return records

    def _run(self, records: list[dict], config: dict, opts: dict) -> None:
        try:
            result = segment_analysis(
                backend=config,
                task=opts["task"],
                records=records,
                level=opts["level"],
                buffer=opts["buffer"],
            )
        except ValidationError as exc:
            raise CommandError(
                "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            ) from None
        for refused in result.refused:
            self.stderr.write(f"refused {refused['id']}: {refused['reason']}")
        self.stdout.write(result.table_csv().rstrip("\n"))
        if opts["out"]:
            out = Path(opts["out"])
            out.mkdir(parents=True, exist_ok=True)
            (out / "segments.csv").write_text(result.table_csv(), encoding="utf-8")
            (out / "segments.json").write_text(
                json.dumps(result.as_json(), ensure_ascii=False, indent=1), encoding="utf-8"
            )
            (out / "segments.svg").write_text(result.svg(), encoding="utf-8")
