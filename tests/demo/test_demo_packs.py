"""The demo's scorer-pack worked examples: imported with import_pack and scored by one scoring
run per pack, idempotently (a second load creates nothing)."""

from __future__ import annotations

import io
import time

import pytest

from benchmarks.models import Generation, ScoringRun
from demo.packs import demo_packs_ensure


@pytest.mark.django_db
def test_demo_packs_are_imported_and_scored_once():
    start = time.perf_counter()
    lines = demo_packs_ensure(stdout=io.StringIO())
    elapsed = time.perf_counter() - start
    assert [line.split(":")[0] for line in lines] == [
        "customplans",
        "longproc-countdown",
        "procbench",
        "scirecipe",
    ]
    runs = {r.pack: r for r in ScoringRun.objects.all()}
    assert all(r.status == "done" and r.n_failed == 0 for r in runs.values())
    assert runs["procbench"].summary["pml"] == pytest.approx(16 / 3)
    assert runs["longproc-countdown"].summary["acc_term"] == pytest.approx(1 / 2)
    f5 = Generation.objects.get(procedure__source_example_id="countdown-f5")
    assert f5.pack_scores["longproc-countdown"]["metrics"]["correct"] == 1
    demo_packs_ensure(stdout=io.StringIO())
    assert ScoringRun.objects.count() == 4
    # a figure, not a check (speed targets live in tests/perf): ~2 s of it is METEOR's WordNet,
    # loaded once per process
    print(f"demo_packs_ensure: {elapsed:.2f} s")
