"""python manage.py run_generation --generator NAME --dataset NAME[@V] [--topics SLUG ...]
[--base-url URL --model M --api-key-env VAR] [--variant base|instruct] [--inline]
[--protocol procbench|scirecipe|customplans|longproc-TASK [--protocol-options JSON]]
python manage.py run_generation --resume RUN_ID | --rerun-failures RUN_ID | --cancel RUN_ID"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from benchmarks.management.arguments import dataset_argument
from benchmarks.models import GenerationRun, Generator, Topic
from benchmarks.packs.protocols import DEFAULT_PROTOCOL, PROTOCOL_NAMES
from benchmarks.services.generation_runs import (
    GenerationRunError,
    generation_run_cancel,
    generation_run_create,
    generation_run_rerun_failures,
    generation_run_start,
)
from core.runs import engine


def _json_object(value: str, flag: str) -> dict:
    try:
        data = json.loads(value)
    except ValueError as exc:
        raise CommandError(f"{flag}: not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise CommandError(f"{flag}: must be a JSON object")
    return data


class Command(BaseCommand):
    help = (
        "Run a generator over a dataset (or some topics of it) with the H.2 prompts: exactly n steps, "
        "greedy, stop \\n\\n for base models. Enqueues Celery chunk tasks (or runs them here with --inline), "
        "parses the steps and scores them (D.3 / E.4)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--generator", help="generator name (created if absent)")
        parser.add_argument("--dataset", help="NAME or NAME@VERSION")
        parser.add_argument(
            "--topics", nargs="*", default=[], help="topic slugs or names (default: all)"
        )
        parser.add_argument(
            "--base-url", default="", help="OpenAI-compatible base URL, e.g. http://host:8000/v1"
        )
        parser.add_argument("--model", default=None, help="model name (default: the generator's)")
        parser.add_argument(
            "--api-key-env", default="", help="NAME of the environment variable with the API key"
        )
        parser.add_argument("--backend", default="openai", help="LLM backend name or dotted path")
        parser.add_argument(
            "--variant",
            choices=["base", "instruct"],
            default=None,
            help="prompt variant (default: the generator's, else instruct)",
        )
        parser.add_argument(
            "--protocol",
            choices=PROTOCOL_NAMES,
            default=DEFAULT_PROTOCOL,
            help="the paper whose prompt, answer format and budget to use (default: the H.2 "
            "prompts); a scorer pack's name for a dataset imported with import_pack",
        )
        parser.add_argument(
            "--protocol-options",
            default=None,
            help='the protocol\'s options as JSON, e.g. \'{"level": "2k"}\' (LongProc) or '
            '\'{"conversion_model": "gpt-4o"}\' (ProcBench)',
        )
        parser.add_argument(
            "--parse-profile",
            choices=("reference", "lenient"),
            default="reference",
            help="step parser: reference (the reference implementation's rules) or lenient",
        )
        parser.add_argument("--concurrency", type=int, default=16)
        parser.add_argument("--chunk-size", type=int, default=64)
        parser.add_argument("--max-tokens", type=int, default=None)
        parser.add_argument("--temperature", type=float, default=None, help="default 0 (greedy)")
        parser.add_argument(
            "--decoding", default=None, help="extra decoding JSON, e.g. '{\"top_p\": 1}'"
        )
        parser.add_argument(
            "--backend-options", default=None, help="backend JSON, e.g. '{\"timeout_s\": 60}'"
        )
        parser.add_argument(
            "--scorers", default="", help="comma-separated scorer names or dotted paths"
        )
        parser.add_argument(
            "--input-price", type=float, default=0.0, help="USD per 1M prompt tokens"
        )
        parser.add_argument(
            "--output-price", type=float, default=0.0, help="USD per 1M completion tokens"
        )
        parser.add_argument(
            "--inline", action="store_true", help="run the chunks in this process, not in Celery"
        )
        parser.add_argument(
            "--resume",
            type=int,
            metavar="RUN_ID",
            help="resume a failed, cancelled or stalled run (retries failures, fills gaps)",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="with --resume: take over a run whose worker is known to be gone",
        )
        parser.add_argument(
            "--rerun-failures",
            type=int,
            metavar="RUN_ID",
            help="a done or failed run: ask again only its failures (missing and empty "
            "generations); everything else is kept",
        )
        parser.add_argument("--cancel", type=int, metavar="RUN_ID", help="cancel a run")

    def handle(self, *args, **opts):
        try:
            if opts["cancel"]:
                run = generation_run_cancel(run=self._run(opts["cancel"]))
                stopping = run.status == GenerationRun.Status.CANCELLING
                self.stdout.write(
                    f"run {run.pk}: {run.status}"
                    + (" (its worker stops after storing what is in flight)" if stopping else "")
                )
                return
            if opts["rerun_failures"]:
                run = generation_run_rerun_failures(
                    run=self._run(opts["rerun_failures"]), enqueue=not opts["inline"]
                )
            elif opts["resume"]:
                run = generation_run_start(
                    run=self._run(opts["resume"]),
                    enqueue=not opts["inline"],
                    force=opts["force"],
                )
            else:
                run = self._create(opts)
        except GenerationRunError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"run {run.pk}: {run.generator.name} on {run.dataset}, {run.n_total} procedure(s), "
            f"{run.n_done} already generated, variant {run.variant}, model {run.model}, "
            f"protocol {run.protocol}"
        )
        if not opts["inline"]:
            self.stdout.write("enqueued; a Celery worker runs the chunks (follow it in the admin)")
            return
        run = engine.execute_inline(
            run,
            on_chunk=lambda r: self.stdout.write(
                f"  {r.n_done}/{r.n_total} done, {r.n_failed} failed"
            ),
        )
        self.stdout.write(
            f"run {run.pk}: {run.status} — {run.n_done}/{run.n_total} generated, {run.n_failed} failed, "
            f"{run.prompt_tokens}+{run.completion_tokens} tokens, cost {run.cost}"
        )
        if run.error:
            self.stdout.write(run.error)
        if run.status != GenerationRun.Status.DONE:
            raise CommandError(f"run {run.pk} ended {run.status}")

    def _run(self, pk: int) -> GenerationRun:
        try:
            return GenerationRun.objects.get(pk=pk)
        except GenerationRun.DoesNotExist as exc:
            raise CommandError(f"no generation run with id {pk}") from exc

    def _create(self, opts) -> GenerationRun:
        if not opts["generator"] or not opts["dataset"]:
            raise CommandError(
                "--generator and --dataset are required (or --resume / --cancel RUN_ID)"
            )
        dataset = dataset_argument(opts["dataset"])
        topics = []
        for value in opts["topics"]:
            topic = Topic.objects.filter(Q(slug=value) | Q(name__iexact=value)).first()
            if topic is None:
                known = ", ".join(Topic.objects.values_list("slug", flat=True))
                raise CommandError(f"--topics: unknown topic {value!r}; known: {known}")
            topics.append(topic)
        decoding = _json_object(opts["decoding"], "--decoding") if opts["decoding"] else {}
        if opts["max_tokens"] is not None:
            decoding["max_tokens"] = opts["max_tokens"]
        if opts["temperature"] is not None:
            decoding["temperature"] = opts["temperature"]
        backend_options = (
            _json_object(opts["backend_options"], "--backend-options")
            if opts["backend_options"]
            else {}
        )
        generator, _ = Generator.objects.get_or_create(name=opts["generator"])
        run = generation_run_create(
            generator=generator,
            dataset=dataset,
            topics=topics,
            variant=opts["variant"],
            model=opts["model"],
            base_url=opts["base_url"],
            api_key_env=opts["api_key_env"],
            backend=opts["backend"],
            decoding=decoding,
            backend_options=backend_options,
            concurrency=opts["concurrency"],
            chunk_size=opts["chunk_size"],
            scorers=[s.strip() for s in opts["scorers"].split(",") if s.strip()],
            input_price_per_mtok=opts["input_price"],
            output_price_per_mtok=opts["output_price"],
            start=not opts["inline"],
            parse_profile=opts["parse_profile"],
            protocol=opts["protocol"],
            protocol_options=(
                _json_object(opts["protocol_options"], "--protocol-options")
                if opts["protocol_options"]
                else {}
            ),
        )
        return run
