"""Judge runs in batch mode (a judge whose backend config has ``"mode": "batch"``): the
judge-run side of :mod:`benchmarks.services.batch_runs`. Items are sent one per distinct
content (duplicates are linked once it is judged); results are stored by the judge run's one
store (:func:`judging.services.run_items.judgments_store`), so a parse failure is asked again
and a failed request counts an attempt exactly as online."""

from __future__ import annotations

from collections.abc import Iterator

from benchmarks.llm.base import LLMRequest, LLMResult
from benchmarks.services.batch_runs import BatchAdapter
from judging.models import JudgeRun, JudgeRunItem
from judging.services.items import judge_request, retry_suffix_for, run_item_input
from judging.services.run_items import MAX_ITEM_ATTEMPTS, judgments_store, link_known

PAGE = 1000


class JudgeRunBatches(BatchAdapter):
    def backend_config(self, run: JudgeRun) -> dict:
        return run.judge.backend_config()

    def _inputs(self, run: JudgeRun, items) -> Iterator:
        template = run.judge.prompt_text()
        retry_suffix = retry_suffix_for(run.judge)
        for item in items:
            yield run_item_input(item, template=template, retry_suffix=retry_suffix)

    def _pending(self, run: JudgeRun):
        return (
            JudgeRunItem.objects.filter(
                run=run, judgment__isnull=True, attempts__lt=MAX_ITEM_ATTEMPTS
            )
            .select_related("generation__procedure")
            .order_by("id")
        )

    def pending(
        self, run: JudgeRun, *, exclude: set[int], lease=None
    ) -> Iterator[tuple[int, LLMRequest]]:
        link_known(run)
        seen: set[str] = set()
        last = 0
        while True:
            page = list(self._pending(run).filter(id__gt=last)[:PAGE])
            if not page:
                return
            last = page[-1].id
            fresh = [i for i in page if i.id not in exclude and i.content_hash not in seen]
            seen.update(i.content_hash for i in page)
            for inp in self._inputs(run, fresh):
                yield inp.item_id, judge_request(judge=run.judge, prompt=inp.prompt)

    def store(self, run: JudgeRun, results: list[tuple[int, LLMResult]], lease=None) -> None:
        by_id = dict(results)
        items = self._pending(run).filter(id__in=list(by_id))
        batch = [(inp, by_id[inp.item_id]) for inp in self._inputs(run, items)]
        if batch:
            judgments_store(run=run, judge=run.judge, results=batch)

    def after_store(self, run: JudgeRun) -> None:
        link_known(run, parse_failures=True)
