"""``manage.py mine SOURCE [--stages 2,3] [--wait | --no-wait | --sync] [--dry-run]``: a How2Mine
batch from the command line, like the console's: by default a Celery run (the run engine's
launch: the workers work it) followed with a progress bar (``--wait``), ``--sync`` worked in
this process (one machine, no worker). SOURCE is a local file, shard directory or glob (copied
into storage, where the workers read it), or with ``--stored`` a file, shard directory or glob
already in storage. When the run ends, one JSON line per document is printed (its outcome, the
stage it reached and why it was dropped) unless ``--summary-only``."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand, CommandError

from core.errors import validation_text
from core.runs import dispatch
from core.runs.progress import Progress, wait
from mining import readers
from mining.inputs import COLUMN_FIELDS
from mining.selectors import batches as selectors
from mining.services import batches as services
from mining.services.dry_run import dry_run_file


class Command(BaseCommand):
    help = (
        "Mine a JSONL/CSV/Parquet/Arrow corpus (a file, shard directory or glob) as a Celery run "
        "(--wait: progress bar) or in this process (--sync); print per-document outcomes as JSONL."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "source",
            help="a local file, shard directory or glob ('corpus/part-*.jsonl.gz'); with "
            "--stored, a storage name, directory or glob",
        )
        parser.add_argument(
            "--stored", action="store_true", help="SOURCE names files already in storage"
        )
        parser.add_argument(
            "--stages", default="", help="comma-separated stage numbers 1-6 (default: all)"
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="validate input and run only the heuristics filter; no LLM call, nothing saved",
        )
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument(
            "--wait",
            dest="wait",
            action="store_true",
            default=True,
            help="launch a Celery run and follow it with a progress bar (default)",
        )
        mode.add_argument(
            "--no-wait",
            dest="wait",
            action="store_false",
            help="launch a Celery run and return (follow it in the console)",
        )
        mode.add_argument(
            "--sync", action="store_true", help="work the batch in this process (no worker)"
        )
        parser.add_argument(
            "--summary-only", action="store_true", help="print the totals, not a line per document"
        )
        parser.add_argument("--name", default="", help="batch name (default: the source)")
        parser.add_argument(
            "--base-url",
            default=os.environ.get("MINING_LLM_BASE_URL", ""),
            help="OpenAI-compatible base URL for every LLM stage (env MINING_LLM_BASE_URL)",
        )
        parser.add_argument(
            "--model",
            default=os.environ.get("MINING_LLM_MODEL", "gpt-4.1"),
            help="model for every LLM stage (env MINING_LLM_MODEL; default gpt-4.1)",
        )
        parser.add_argument(
            "--api-key-env",
            default="OPENAI_API_KEY",
            help="NAME of the environment variable holding the API key ('' for none)",
        )
        parser.add_argument(
            "--backends",
            default="",
            help="JSON file: {stage key or 'default': backend config} (overrides --model/--base-url)",
        )
        parser.add_argument("--min-steps", type=int, default=5)
        parser.add_argument("--max-steps", type=int, default=15)
        parser.add_argument("--max-doc-chars", type=int, default=None)
        parser.add_argument(
            "--chunk-size",
            type=int,
            default=None,
            help="documents a chunk holds open at once (default 128; at least twice the "
            "backends' concurrency is used)",
        )
        parser.add_argument(
            "--any-topic", action="store_true", help="accept records with unknown or no topic"
        )
        for key in COLUMN_FIELDS:
            parser.add_argument(
                f"--{key}-column", default="", help=f"the input column holding {key!r}"
            )
        parser.add_argument(
            "--candidates-per-topic",
            type=int,
            default=None,
            help="at most this many documents of a topic go through the stages",
        )
        parser.add_argument(
            "--desired-valid-per-topic",
            type=int,
            default=None,
            help="stop a topic once this many of its documents passed every stage",
        )

    def handle(self, *args, **opts) -> None:
        options = self._options(opts)
        try:
            if opts["dry_run"]:
                path = Path(opts["source"])
                if not path.is_file():
                    raise CommandError(f"{path}: no such file (--dry-run reads one local file)")
                self._dry_run(path, stages=opts["stages"], options=options)
                return
            batch = self._create(opts, options)
        except (ValidationError, readers.UnsupportedFormat, ValueError) as exc:
            raise CommandError(_message(exc)) from None
        except dispatch.BrokerUnavailable as exc:
            raise CommandError(str(exc)) from None
        if not opts["sync"] and not opts["wait"]:
            self.stdout.write(f"batch {batch.pk} queued: {batch.get_absolute_url()}")
            return
        progress = Progress(f"batch {batch.pk}", sys.stderr)
        try:
            batch = wait(
                batch,
                inline=opts["sync"],
                on_progress=progress,
                cancel=lambda b: services.batch_cancel(batch=b),
            )
        except KeyboardInterrupt:
            raise CommandError(
                f"interrupted: batch {batch.pk} was cancelled; resume it in the console",
                returncode=130,
            ) from None
        except dispatch.NoWorker as exc:  # it stays queued for a worker that starts later
            raise CommandError(f"batch {batch.pk} is queued, and {exc}") from None
        if batch.is_active:
            raise CommandError(
                f"batch {batch.pk} is held by another execution (a worker took it over); "
                f"follow it at {batch.get_absolute_url()}"
            )
        self._report(batch, per_document=not opts["summary_only"])

    # -- creating the batch --------------------------------------------------------------
    def _create(self, opts, options: dict):
        common = {
            "stages": opts["stages"],
            "backends": self._backends(opts),
            "options": options,
            "start": not opts["sync"],  # a Celery run, launched like the console's
        }
        source = opts["source"]
        if opts["stored"]:
            return services.batch_create(name=opts["name"] or source, source=source, **common)
        files = _local_files(source)
        if len(files) == 1 and not Path(source).is_dir():
            with files[0].open("rb") as fh:
                return services.batch_create(
                    name=opts["name"] or files[0].name,
                    upload=File(fh, name=files[0].name),
                    **common,
                )
        folder = f"mining/corpus/{uuid.uuid4().hex[:12]}"
        for path in files:  # streamed into storage, where every worker reads them
            with path.open("rb") as fh:
                default_storage.save(f"{folder}/{path.name}", File(fh, name=path.name))
        return services.batch_create(name=opts["name"] or source, source=folder, **common)

    def _options(self, opts) -> dict:
        options = {
            "min_steps": opts["min_steps"],
            "max_steps": opts["max_steps"],
            "require_topic": not opts["any_topic"],
            "columns": {k: opts[f"{k}_column"] for k in COLUMN_FIELDS if opts[f"{k}_column"]},
            "candidates_per_topic": opts["candidates_per_topic"],
            "desired_valid_per_topic": opts["desired_valid_per_topic"],
        }
        for key in ("max_doc_chars", "chunk_size"):
            if opts[key]:
                options[key] = opts[key]
        return options

    def _dry_run(self, path: Path, *, stages: str, options: dict) -> None:
        counts: dict[str, int] = {}
        for line in dry_run_file(path=path, stages=stages, options=options):
            counts[line["outcome"]] = counts.get(line["outcome"], 0) + 1
            self.stdout.write(json.dumps(line, ensure_ascii=False))
        sys.stderr.write(f"dry run: {json.dumps(counts)}\n")

    def _report(self, batch, *, per_document: bool) -> None:
        """One JSON line per document on stdout; the totals on stderr."""
        if per_document:
            for doc in selectors.document_list(batch=batch).iterator(chunk_size=2000):
                self.stdout.write(json.dumps(selectors.document_outcome(doc), ensure_ascii=False))
        y = selectors.batch_yields(batch=batch)["total"]
        usage = selectors.batch_usage(batch=batch)["total"]
        sys.stderr.write(
            f"batch {batch.pk} {batch.status}: {y['n']} documents, {y['kept']} kept, {y['invalid']} invalid, "
            f"{y['errors']} errors; {usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion "
            f"tokens, ${float(usage['cost_usd']):.4f}\n"
        )

    def _backends(self, opts) -> dict:
        if opts["backends"]:
            try:
                return json.loads(Path(opts["backends"]).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise CommandError(f"--backends {opts['backends']}: {exc}") from None
        config = {"backend": "openai", "model": opts["model"], "api_key_env": opts["api_key_env"]}
        if opts["base_url"]:
            config["base_url"] = opts["base_url"]
        return {"default": config}


def _local_files(source: str) -> list[Path]:
    """The local corpus files SOURCE names: a file, a shard directory's corpus files, a glob."""
    path = Path(source)
    if readers.is_pattern(source):
        names = readers.match_names(source, readers.local_listdir)
    elif path.is_dir():
        names = []
        for name in sorted(os.listdir(path)):
            try:
                readers.file_kind(name)
            except readers.UnsupportedFormat:
                continue
            names.append(str(path / name))
    elif path.is_file():
        return [path]
    else:
        raise CommandError(f"{source}: no such file, directory or glob")
    if not names:
        raise CommandError(f"{source}: matched no corpus file")
    for name in names:
        readers.file_kind(Path(name).name)  # UnsupportedFormat names the file
    return [Path(n) for n in names]


def _message(exc: Exception) -> str:
    return validation_text(exc) if isinstance(exc, ValidationError) else str(exc)
