"""Generation runs in batch mode (``backend_options: {"mode": "batch"}``): the generation-run
side of :mod:`benchmarks.services.batch_runs`. A procedure is sent while it has no generation by
the run's generator; a reply is stored like an online one (never a second generation for a
procedure, scored on arrival); a request that failed inside a batch is recorded in the run's
errors and counted failed, and sent again when the run is resumed (the online rule)."""

from __future__ import annotations

from collections.abc import Iterator

from django.db import transaction
from django.utils import timezone

from benchmarks import scorers as sc
from benchmarks.llm.base import LLMRequest, LLMResponse, LLMResult
from benchmarks.models import Generation, GenerationRun
from benchmarks.services import batch_runs
from benchmarks.services.batch_runs import BatchAdapter
from benchmarks.services.generation_requests import (
    generation_build,
    generation_request,
    generation_run_backend_config,
)
from benchmarks.services.generation_runs import generation_run_selection

PAGE = 1000


class GenerationRunBatches(BatchAdapter):
    def backend_config(self, run: GenerationRun) -> dict:
        return generation_run_backend_config(run=run)

    def _missing(self, run: GenerationRun):
        return generation_run_selection(run=run).exclude(generations__generator_id=run.generator_id)

    def pending(
        self, run: GenerationRun, *, exclude: set[int], lease=None
    ) -> Iterator[tuple[int, LLMRequest]]:
        skip = exclude | batch_runs.failed_keys(run)
        last = 0
        while True:
            page = list(
                self._missing(run).filter(pk__gt=last).defer("source_text").order_by("pk")[:PAGE]
            )
            if not page:
                return
            last = page[-1].pk
            for procedure in page:
                if procedure.pk not in skip:
                    yield procedure.pk, generation_request(run=run, procedure=procedure)

    def store(self, run: GenerationRun, results: list[tuple[int, LLMResult]], lease=None) -> None:
        by_id = dict(results)
        procedures = {p.pk: p for p in self._missing(run).filter(pk__in=list(by_id))}
        scorers = sc.get_scorers(run.scorers or None)
        new, failed = [], []
        for pk, result in sorted(by_id.items()):
            procedure = procedures.get(pk)
            if procedure is None:
                continue  # generated meanwhile: never a second generation
            if isinstance(result, LLMResponse):
                new.append(
                    generation_build(run=run, procedure=procedure, response=result, scorers=scorers)
                )
            else:
                failed.append(
                    {
                        "source_example_id": procedure.source_example_id,
                        "procedure_id": pk,
                        "error": str(result)[:500],
                    }
                )
        with transaction.atomic():
            Generation.objects.bulk_create(new, ignore_conflicts=True)
            if failed:
                locked = GenerationRun.objects.select_for_update().only("errors").get(pk=run.pk)
                errors = (list(locked.errors) + failed)[-GenerationRun.MAX_ERRORS_KEPT :]
                GenerationRun.objects.filter(pk=run.pk).update(
                    errors=errors, updated_at=timezone.now()
                )
