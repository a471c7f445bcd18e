"""The run types (core.runs.registry): each app registers its own in ready(), the engine and the
batch driver find them by model, and a run model left unregistered fails ``manage.py check``."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from benchmarks.models import GenerationRun, ScoringRun
from benchmarks.services import batch_runs
from benchmarks.services.generation_batches import GenerationRunBatches
from core.runs import engine, registry
from core.runs.engine import RunExecutor
from core.runs.registry import check_run_types
from judging.models import JudgeRun, JudgeRunEstimate, LeaderboardReport
from judging.services.batch_mode import JudgeRunBatches
from judging.services.execution import JudgeRunExecutor
from judging.services.runs import judge_run_launch_prepare
from mining.models import MiningBatch, MiningPromotion
from mining.services.batch_mode import MiningBatches
from mining.services.ingest import batch_launch_prepare
from tests.runapp.executor import ScriptedExecutor
from tests.runapp.models import EngineRun


def test_every_run_model_is_registered_by_its_app():
    assert check_run_types() == []
    assert {t.label for t in registry.run_types()} >= {
        "benchmarks.GenerationRun",
        "benchmarks.ScoringRun",
        "mining.MiningBatch",
        "mining.MiningPromotion",
        "judging.JudgeRun",
        "judging.JudgeRunEstimate",
        "judging.LeaderboardReport",
        "runapp.EngineRun",
    }
    assert isinstance(engine.executor_for(JudgeRun), JudgeRunExecutor)
    assert not any(hasattr(t.model, "executor_path") for t in registry.run_types())


def test_batch_adapters_and_launch_preparations_are_the_types_own():
    adapters = {
        model: type(batch_runs.adapter_for(model))
        for model in (GenerationRun, MiningBatch, JudgeRun)
    }
    assert adapters == {
        GenerationRun: GenerationRunBatches,
        MiningBatch: MiningBatches,
        JudgeRun: JudgeRunBatches,
    }
    for model in (ScoringRun, MiningPromotion, JudgeRunEstimate, LeaderboardReport, EngineRun):
        assert batch_runs.adapter_for(model) is None
        assert registry.run_type(model).prepare_launch is None
    assert registry.run_type(JudgeRun).prepare_launch is judge_run_launch_prepare
    assert registry.run_type(MiningBatch).prepare_launch is batch_launch_prepare


def test_an_unregistered_run_model_fails_the_check_and_the_lookup(monkeypatch):
    kept = {t.label: t for t in registry.run_types() if t.model is not EngineRun}
    monkeypatch.setattr(registry, "_TYPES", kept)
    errors = check_run_types()
    assert [e.id for e in errors] == ["core.E004"]
    assert "runapp.EngineRun" in errors[0].msg
    with pytest.raises(LookupError, match=r"runapp\.EngineRun is not a registered run type"):
        engine.executor_for(EngineRun)


def test_a_second_executor_for_a_registered_model_is_refused():
    class Other(RunExecutor):
        def work_chunk(self, run, lease) -> bool:
            return False

    with pytest.raises(ImproperlyConfigured, match="registered twice"):
        registry.register(EngineRun, executor=Other())
    with pytest.raises(ImproperlyConfigured, match="not a concrete run model"):
        registry.register(ScriptedExecutor, executor=Other())
    # the same parts again (Django runs ready() again when the installed apps change): kept
    again = registry.register(EngineRun, executor=ScriptedExecutor())
    assert registry.run_type(EngineRun) is again
