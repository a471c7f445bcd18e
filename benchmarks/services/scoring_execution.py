"""The scoring-run executor: one scorer pack over a generator's generations on a dataset, in
bounded batches along the generations ordered by id.

Each generation's record is rebuilt from what is stored (:func:`benchmarks.formats.packs.
pack_record`: the procedure's gold payload, the generation's structured payload or raw text,
its finish_reason) and scored by the pack; the result goes to ``Generation.pack_scores[pack]``
as ``{"run", "metrics", "breakdown"}``, or ``{"run", "error"}`` when the record does not have
the pack's shape (the error names the field). Counters are counted from those rows. An option
value the pack rejects fails the run at once (it would fail every record alike).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q, QuerySet

from benchmarks.formats.packs import pack_record
from benchmarks.models import Generation, ScoringRun
from benchmarks.packs.registry import PackScorer, RecordError, get_pack
from benchmarks.packs.sandbox import SandboxUnavailable
from core.runs import lanes
from core.runs.engine import Lease, LeaseState, RunExecutor
from core.runs.models import RunStatus
from core.runs.progress import LiveCounters


def scoring_selection(*, run: ScoringRun) -> QuerySet[Generation]:
    """The generations a scoring run scores: its generator's, on its dataset."""
    return Generation.objects.filter(
        generator_id=run.generator_id, procedure__dataset_id=run.dataset_id
    )


def _by_run(run: ScoringRun) -> Q:
    """Generations this run scored (key lookups: JSON containment is not on SQLite)."""
    return Q(**{f"pack_scores__{run.pack}__run": run.pk})


def _not_by_run(run: ScoringRun) -> Q:
    """Generations this run has not scored: no entry for the pack, or another run's (a missing
    key reads NULL, so it is named rather than left to a negation)."""
    key = f"pack_scores__{run.pack}__run"
    return Q(**{f"{key}__isnull": True}) | ~Q(**{key: run.pk})


def _failed(run: ScoringRun) -> Q:
    return _by_run(run) & Q(**{f"pack_scores__{run.pack}__has_key": "error"})


def scoring_run_counts(*, run: ScoringRun) -> dict[str, int]:
    """``n_total`` the selection, ``n_done`` scored by this run, ``n_failed`` those of them
    whose record could not be scored; counted from the generations' rows."""
    counts = scoring_selection(run=run).aggregate(  # one scan of the rows, not three
        total=Count("pk"),
        scored=Count("pk", filter=_by_run(run)),
        failed=Count("pk", filter=_failed(run)),
    )
    failed = counts["failed"]
    return {"n_total": counts["total"], "n_done": counts["scored"] - failed, "n_failed": failed}


def score_generation(pack: PackScorer, generation: Generation, options: dict[str, Any]) -> dict:
    """One generation's entry in ``pack_scores`` (without the run id). ``ValueError`` (other
    than a record's shape) propagates: it is the options' fault, not the generation's."""
    record = pack_record(
        item_id=generation.procedure.source_example_id,
        gold=generation.procedure.payload,
        output=generation.payload,
        model_completion=generation.model_completion,
        finish_reason=generation.finish_reason,
        pack=pack.name,
    )
    try:
        scored = pack.score_with(record, options)
    except RecordError as exc:
        return {"error": str(exc)}
    return {"metrics": dict(scored.metrics), "breakdown": scored.breakdown}


class ScoringRunExecutor(RunExecutor):
    def queue(self, run: ScoringRun) -> str | None:
        """A pack that runs generated code (``sandboxed``) is scored on the sandbox queue
        (``CELERY_SANDBOX_QUEUE``, default ``sandbox``): workers started with ``-Q sandbox``,
        on machines of their own; every other pack on the default queue."""
        if get_pack(run.pack).sandboxed:
            return settings.CELERY_SANDBOX_QUEUE
        return None

    def lanes(self, run: ScoringRun) -> int:
        """:func:`core.runs.lanes.default_lanes`: lane *k* of *n* scores the generations whose
        id is *k* mod *n*, walking them with its own cursor."""
        return lanes.default_lanes()

    def work_chunk(self, run: ScoringRun, lease: Lease) -> bool:
        pack = get_pack(run.pack)
        live = LiveCounters(run, lease, self.counters)  # counted from the scored rows
        mine = lanes.in_lane(scoring_selection(run=run), lane=lease.lane, n_lanes=lease.n_lanes)
        if lease.lane is not None:
            run.cursor = lanes.cursor(ScoringRun, run.pk, lease.lane)
        while True:
            batch = list(
                mine.filter(pk__gt=run.cursor)
                .filter(_not_by_run(run))
                .select_related("procedure")
                .order_by("pk")[: run.chunk_size]
            )
            if not batch:
                return False
            entries: dict[int, dict] = {}
            errors: list[dict[str, str]] = []
            try:
                for generation in batch:
                    entry = score_generation(pack, generation, run.options)
                    entries[generation.pk] = {**entry, "run": run.pk}
                    if "error" in entry:
                        errors.append(
                            {"id": generation.procedure.source_example_id, "error": entry["error"]}
                        )
            except SandboxUnavailable as exc:  # no network namespace here: run nothing
                run.error = str(exc)
                lease.held().update(error=run.error)
                return False
            except (ValueError, TypeError) as exc:  # a bad option value: every record alike
                run.error = f"the pack rejected the run's options: {exc}"
                lease.held().update(error=run.error)  # the outcome of a run's last lane reads it
                return False
            with transaction.atomic():
                if not lease.held().exists():
                    return True  # lost: the engine leaves the run
                # merged into the rows as they are now (locked): another pack's run may have
                # written its own key since the batch was read
                rows = list(
                    Generation.objects.select_for_update()
                    .filter(pk__in=list(entries))
                    .only("pk", "pack_scores")
                )
                for row in rows:
                    row.pack_scores = {**(row.pack_scores or {}), run.pack: entries[row.pk]}
                Generation.objects.bulk_update(rows, ["pack_scores"])
                run.cursor = batch[-1].pk
                locked = ScoringRun.objects.select_for_update().only("errors").get(pk=run.pk)
                kept = (errors + list(locked.errors))[: ScoringRun.MAX_ERRORS_KEPT]
                if lease.lane is not None:  # a lane keeps its own cursor
                    lanes.advance(ScoringRun, run.pk, lease.lane, lease.token, run.cursor)
                    lease.held().update(errors=kept)
                else:
                    lease.held().update(cursor=run.cursor, errors=kept)
                run.errors = kept
            live.write()
            if lease.beat() is not LeaseState.HELD:
                return True

    def counters(self, run: ScoringRun) -> dict[str, Any]:
        return scoring_run_counts(run=run)

    def outcome(self, run: ScoringRun) -> tuple[str, str]:
        """The run's end (its last lane's): the pack's summary, then done or failed."""
        if run.error:
            return RunStatus.FAILED, run.error
        self._summarize(run, get_pack(run.pack))
        counts = self.counters(run)
        if counts["n_total"] and counts["n_done"] == 0:
            return RunStatus.FAILED, "no generation could be scored (see the recent failures)"
        return RunStatus.DONE, ""

    def on_resume(self, run: ScoringRun) -> None:
        """A new attempt walks the selection from the start; what this run scored is kept."""
        ScoringRun.objects.filter(pk=run.pk).update(cursor=0, **scoring_run_counts(run=run))

    @staticmethod
    def _summarize(run: ScoringRun, pack: PackScorer) -> None:
        rows = [
            entry["metrics"]
            for entry in scoring_selection(run=run)
            .filter(_by_run(run))
            .values_list(f"pack_scores__{run.pack}", flat=True)
            if entry and "metrics" in entry
        ]
        summary = pack.summary(rows)
        ScoringRun.objects.filter(pk=run.pk).update(summary=summary)
