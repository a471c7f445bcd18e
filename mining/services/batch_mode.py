"""Mining batches in batch mode (every LLM stage on one batch-mode config, e.g.
``{"backend": "openai", "mode": "batch", "model": "gpt-4.1"}``): the mining side of
:mod:`benchmarks.services.batch_runs`. Each round sends one request per pending document, for
the stage it waits at (a document's stages follow one another, so a document is in at most one
batch); a reply moves the document on, through the stages that need no model, to its next LLM
stage (sent in the next round) or its end, stored by the batch's one store
(:func:`mining.services.progress.store`, which needs the batch's lease: what the batches of a
cancelled mining batch finished is stored when it is resumed). Stage costs are at the batch
rate (:func:`mining.costs.cost_usd`). Per-topic budgets need the online path."""

from __future__ import annotations

from collections.abc import Iterator

from benchmarks.llm.base import LLMRequest, LLMResult
from benchmarks.services.batch_runs import BatchAdapter
from mining.budgets import budgets_of
from mining.heuristics import HeuristicsConfig
from mining.models import MiningBatch, MiningDocument
from mining.pipeline import Pipeline
from mining.services import progress
from mining.services.progress import read_states
from mining.services.stage_backends import config_identity

PAGE = 500


def batch_config(run: MiningBatch) -> dict:
    """The one config of the batch's LLM stages; a ``ValueError`` saying why batch mode cannot
    work this batch."""
    configs = {config_identity(c): c for c in (run.backends or {}).values()}
    if len(configs) != 1:
        raise ValueError("batch mode: every LLM stage must use the same backend config")
    if budgets_of(run.options or {}).active:
        raise ValueError("batch mode: per-topic budgets need the online path")
    return next(iter(configs.values()))


class MiningBatches(BatchAdapter):
    needs_lease = True

    def backend_config(self, run: MiningBatch) -> dict:
        return batch_config(run)

    def _pipeline(self, run: MiningBatch) -> Pipeline:
        opts = run.options
        return Pipeline(
            stages=list(run.stages),
            backends=run.backends or {},
            heuristics=HeuristicsConfig(min_steps=opts["min_steps"], max_steps=opts["max_steps"]),
            max_tokens=opts.get("max_tokens"),
        )

    def pending(
        self, run: MiningBatch, *, exclude: set[int], lease=None
    ) -> Iterator[tuple[int, LLMRequest]]:
        pipeline = self._pipeline(run)
        pending = MiningDocument.objects.filter(batch=run, outcome=MiningDocument.Outcome.PENDING)
        last = 0
        while True:
            # in file order, the order of the (batch, outcome, position) index: each page reads
            # its own rows, not every pending row of the batch again. Those an open batch holds
            # are left out here, not in SQL: as a NOT IN list they were tens of thousands of
            # parameters in every page's query.
            keys = pending.filter(position__gt=last).order_by("position")
            keys = list(keys.values_list("position", "pk")[:PAGE])
            if not keys:
                return
            last = keys[-1][0]
            wanted = [pk for _position, pk in keys if pk not in exclude]
            if not wanted:
                continue
            finished = []  # documents the stages without a model take to their end
            for state in read_states(pending.filter(pk__in=wanted).order_by("position")):
                stage = pipeline.advance(state)
                if stage is None:
                    finished.append(progress.snapshot(state, None, None))
                else:
                    yield state.key, pipeline.request(stage, state)
            if finished and lease is not None:
                progress.store(run, lease, finished)

    def store(self, run: MiningBatch, results: list[tuple[int, LLMResult]], lease=None) -> None:
        if lease is None:
            raise ValueError("a mining batch's replies are stored under its lease")
        pipeline = self._pipeline(run)
        by_id = dict(results)
        keys = sorted(by_id)
        # a page at a time (a provider's file holds up to 50,000 replies): the documents read
        # and the write's statement stay small; the caller's transaction makes the pages one
        for start in range(0, len(keys), PAGE):
            docs = MiningDocument.objects.filter(
                batch=run,
                outcome=MiningDocument.Outcome.PENDING,
                pk__in=keys[start : start + PAGE],
            )
            snapshots = []
            for state in read_states(docs, text=False):
                stage = pipeline.advance(state)
                if stage is None:
                    continue
                usage = pipeline.reply(stage, state, by_id[state.key])
                pipeline.advance(state)  # on to its next LLM stage, or its end
                snapshots.append(progress.snapshot(state, stage, usage))
            if snapshots and not progress.store(run, lease, snapshots):
                raise RuntimeError("the mining batch's lease was lost while storing a batch")
