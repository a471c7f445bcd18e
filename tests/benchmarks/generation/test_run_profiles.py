"""A generation run's parse profile (stored on the run) and the reference's defaults, through
the real openai client against the local test server."""

from __future__ import annotations

import pytest

from benchmarks.models import Generation, Generator
from benchmarks.services.generation_runs import GenerationRunError
from tests.benchmarks.factories import make_generation_run
from tests.benchmarks.generation.conftest import drive

COMPLETION = "<think>\n1. plan it</think>\nHere you go:\n1. Boil water.\n2 cups of milk\n3) Stir."


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("profile", "steps"),
    [
        ("reference", ["Boil water.", "cups of milk", "Stir."]),
        ("lenient", ["Boil water.", "Stir."]),
    ],
)
def test_run_parses_steps_by_its_profile(llm_server, small_dataset, profile, steps):
    dataset, _, _ = small_dataset
    llm_server.responder = lambda req: COMPLETION
    generator = Generator.objects.create(name=f"g-{profile}")
    kwargs = {} if profile == "reference" else {"parse_profile": profile}
    run = make_generation_run(llm_server, dataset, generator, **kwargs)
    assert run.parse_profile == profile
    run = drive(run)
    assert run.status == "done", run.error
    stored = {tuple(g.predicted_steps) for g in Generation.objects.filter(generator=generator)}
    assert stored == {tuple(steps)}
    assert all(g.model_completion == COMPLETION for g in Generation.objects.all())


@pytest.mark.django_db(transaction=True)
def test_defaults_are_the_references_and_bad_profile_is_refused(llm_server, small_dataset):
    dataset, _, _ = small_dataset
    llm_server.responder = lambda req: "1. a"
    generator = Generator.objects.create(name="g-defaults")
    run = make_generation_run(llm_server, dataset, generator, chunk_size=8)
    assert run.decoding["temperature"] == 0.0 and run.decoding["max_tokens"] == 4096
    drive(run)
    body = llm_server.requests[0].body
    assert body["temperature"] == 0.0 and body["max_tokens"] == 4096
    with pytest.raises(GenerationRunError, match="parse_profile 'strict'"):
        make_generation_run(
            llm_server, dataset, Generator.objects.create(name="g2"), parse_profile="strict"
        )


@pytest.mark.django_db(transaction=True)
def test_launch_refused_with_the_reason(llm_server, small_dataset, monkeypatch):
    from benchmarks.models import GenerationRun

    dataset, _, _ = small_dataset
    monkeypatch.delenv("GEN_TRUTH_API_KEY", raising=False)
    generator = Generator.objects.create(name="g-launch")
    with pytest.raises(GenerationRunError, match="'GEN_TRUTH_API_KEY' \\(api_key_env\\) is not"):
        make_generation_run(
            llm_server, dataset, generator, api_key_env="GEN_TRUTH_API_KEY", start=True
        )
    with pytest.raises(GenerationRunError, match="does not answer"):
        make_generation_run(
            llm_server, dataset, generator, base_url="http://127.0.0.1:9/v1", start=True
        )
    assert not GenerationRun.objects.exists()
    monkeypatch.setenv("GEN_TRUTH_API_KEY", "sk-test")
    run = make_generation_run(
        llm_server, dataset, generator, api_key_env="GEN_TRUTH_API_KEY", start=True
    )
    assert run.status == "queued" and llm_server.requests == []


@pytest.mark.django_db(transaction=True)
def test_resume_refused_when_the_server_does_not_answer(llm_server, small_dataset):
    from benchmarks.services.generation_runs import generation_run_start

    dataset, _, _ = small_dataset
    generator = Generator.objects.create(name="g-resume")
    run = make_generation_run(
        llm_server, dataset, generator, base_url="http://127.0.0.1:9/v1", start=False
    )
    type(run).objects.filter(pk=run.pk).update(status="failed")
    run.refresh_from_db()
    with pytest.raises(
        GenerationRunError, match=r"cannot launch: the server at .* does not answer"
    ):
        generation_run_start(run=run)
    run.refresh_from_db()
    assert run.status == "failed"  # the resume was rolled back
