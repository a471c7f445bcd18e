"""Live progress, the same way for every run type (core.runs.progress.LiveCounters): while a
chunk works, the run row's counters are the executor's, counted from the run's rows and written
under the chunk's lease, never added; a count repeated is still right; without the lease nothing
is written; counting is throttled."""

from __future__ import annotations

import pytest

from core.runs import engine
from core.runs.engine import Lease
from core.runs.progress import LiveCounters
from tests.core.factories import make_engine_run
from tests.runapp.models import EngineItem, EngineRun

pytestmark = pytest.mark.django_db


def test_live_counters_are_counted_from_rows_under_the_lease(engine_script):
    run = make_engine_run(items=5)
    seen = {}

    def during(run, lease):
        live = LiveCounters(run, lease, every_s=60)
        EngineItem.objects.filter(run=run, position__lt=2).update(done=True)
        EngineItem.objects.filter(run=run, position=4).update(failed=True)
        assert live.write() and live.write(force=True)  # twice: the same numbers, not doubled
        row = EngineRun.objects.get(pk=run.pk)
        seen["mid"] = (row.n_total, row.n_done, row.n_failed)
        EngineItem.objects.filter(run=run, position=2).update(done=True)
        seen["throttled"] = live.write()  # within every_s: not counted again
        seen["row"] = EngineRun.objects.get(pk=run.pk).n_done
        # someone else's lease writes nothing
        stranger = LiveCounters(run, Lease(EngineRun, run.pk, "not-the-lease"))
        EngineRun.objects.filter(pk=run.pk).update(n_done=0)
        seen["stranger"] = stranger.write(force=True)
        seen["after_stranger"] = EngineRun.objects.get(pk=run.pk).n_done
        engine_script["during"] = None

    engine_script["during"] = during
    engine_script["fail"] = {4}
    assert engine.execute(EngineRun._meta.label, run.pk, chain=False).status == "failed"
    assert seen["mid"] == (5, 2, 1)
    assert seen["throttled"] is False and seen["row"] == 2
    assert seen["stranger"] is False and seen["after_stranger"] == 0
    run.refresh_from_db()
    assert (run.n_total, run.n_done, run.n_failed) == (5, 4, 1)  # the chunk's end: from rows too
