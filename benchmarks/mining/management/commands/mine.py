"""``manage.py mine FILE [--stages 2,3] [--dry-run]``: run a How2Mine batch from the command line
and print one JSON line per document (its outcome, the stage it reached and why it was dropped)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError

from benchmarks.mining.readers import UnsupportedFormat
from benchmarks.mining.selectors import batches as selectors
from benchmarks.mining.services import batches as services
from benchmarks.mining.services.dry_run import dry_run_file
from core.errors import validation_text


class Command(BaseCommand):
    help = "Run the How2Mine stages over a JSONL/CSV/Parquet file and print per-document outcomes as JSONL."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "file", help="documents: .jsonl[.gz], .csv or .parquet with text, url, topic"
        )
        parser.add_argument(
            "--stages", default="", help="comma-separated stage numbers 1-6 (default: all)"
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="validate input and run only the heuristics filter; no LLM call, nothing saved",
        )
        parser.add_argument("--name", default="", help="batch name (default: the file name)")
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
            "--any-topic", action="store_true", help="accept records with unknown or no topic"
        )

    def handle(self, *args, **opts) -> None:
        path = Path(opts["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        options = {
            "min_steps": opts["min_steps"],
            "max_steps": opts["max_steps"],
            "require_topic": not opts["any_topic"],
        }
        if opts["max_doc_chars"]:
            options["max_doc_chars"] = opts["max_doc_chars"]
        try:
            if opts["dry_run"]:
                self._dry_run(path, stages=opts["stages"], options=options)
                return
            with path.open("rb") as fh:
                batch = services.batch_create(
                    name=opts["name"] or path.name,
                    upload=File(fh, name=path.name),
                    stages=opts["stages"],
                    backends=self._backends(opts),
                    options=options,
                    start=False,
                )
        except (ValidationError, UnsupportedFormat, ValueError) as exc:
            raise CommandError(_message(exc)) from None
        batch = services.batch_run(batch_id=batch.pk)  # in this process (engine.execute_inline)
        if batch.is_active:
            raise CommandError(
                f"batch {batch.pk} is held by another execution (a worker took it over); "
                f"follow it at {batch.get_absolute_url()}"
            )
        self._report(batch)

    def _dry_run(self, path: Path, *, stages: str, options: dict) -> None:
        counts: dict[str, int] = {}
        for line in dry_run_file(path=path, stages=stages, options=options):
            counts[line["outcome"]] = counts.get(line["outcome"], 0) + 1
            self.stdout.write(json.dumps(line, ensure_ascii=False))
        sys.stderr.write(f"dry run: {json.dumps(counts)}\n")

    def _report(self, batch) -> None:
        """One JSON line per document on stdout; the totals on stderr."""
        for doc in selectors.document_list(batch=batch).iterator(chunk_size=500):
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


def _message(exc: Exception) -> str:
    return validation_text(exc) if isinstance(exc, ValidationError) else str(exc)
