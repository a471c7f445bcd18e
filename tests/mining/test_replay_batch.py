"""The replay backend against a recorded batch: a mining batch run through the ``record``
backend around the real OpenAI-compatible backend (real HTTP to the local test server) writes a
recording; a second batch over the same file on the ``replay`` backend then gives the same
outcome, goal, steps, resources and trace for every document, the same token counts, and sends
nothing to the server. A request the recording lacks fails that document, not the batch."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.llm.replay import read_recording
from mining.models import MiningDocument, MiningStageUsage
from mining.services import batches as services
from tests.mining.factories import doc

pytestmark = pytest.mark.django_db(transaction=True)

MARKERS = ["", "NOPROC", "SHORT", "FILTERME", "FINALNO", "", "REPEAT", ""]
FIELDS = ("source_id", "outcome", "stage_reached", "drop_reason", "goal", "steps", "resources")


def _upload(markers=MARKERS):
    body = "".join(json.dumps(doc(i, m)) + "\n" for i, m in enumerate(markers))
    return SimpleUploadedFile("docs.jsonl", body.encode())


def _run(backends, upload):
    batch = services.batch_create(name="b", upload=upload, backends=backends, start=False)
    return services.batch_run(batch_id=batch.pk)


def _documents(batch):
    return [
        {**{f: getattr(d, f) for f in FIELDS}, "trace": d.trace}
        for d in MiningDocument.objects.filter(batch=batch).order_by("position")
    ]


def _usage(batch):
    return {
        u.stage: (u.requests, u.failed_requests, u.prompt_tokens, u.completion_tokens)
        for u in MiningStageUsage.objects.filter(batch=batch)
    }


def test_a_recorded_batch_replays_identically_without_calling_a_model(
    media_root, llm_backend_config, llm_server, script, tmp_path
):
    recording = tmp_path / "replies.jsonl"
    recorded = _run(
        {
            "default": {
                "backend": "record",
                "model": "test-model",
                "recording": str(recording),
                "inner": llm_backend_config,
            }
        },
        _upload(),
    )
    sent = len(llm_server.requests)
    assert recorded.status == "done" and sent > 0
    replies = read_recording(recording)
    assert len(replies) == sent  # every reply recorded once (each request here is distinct)

    replayed = _run(
        {"default": {"backend": "replay", "model": "test-model", "recording": str(recording)}},
        _upload(),
    )
    assert replayed.status == "done"
    assert len(llm_server.requests) == sent  # the replay sent nothing
    assert _documents(replayed) == _documents(recorded)
    outcomes = {d["outcome"] for d in _documents(replayed)}
    assert {"kept", "dropped"} <= outcomes and "error" not in outcomes
    assert {k: v[:2] for k, v in _usage(replayed).items()} == {
        k: v[:2] for k, v in _usage(recorded).items()
    }
    assert {k: v[2:] for k, v in _usage(replayed).items()} == {
        k: v[2:] for k, v in _usage(recorded).items()
    }
    assert sum(u.cost_usd for u in MiningStageUsage.objects.filter(batch=replayed)) == 0


def test_a_request_missing_from_the_recording_fails_that_document_only(
    media_root, llm_backend_config, llm_server, script, tmp_path
):
    recording = tmp_path / "replies.jsonl"
    _run(
        {
            "default": {
                "backend": "record",
                "model": "test-model",
                "recording": str(recording),
                "inner": llm_backend_config,
            }
        },
        _upload(["", ""]),
    )
    batch = _run(
        {"default": {"backend": "replay", "model": "m", "recording": str(recording)}},
        _upload(["", "", "NEWDOC"]),  # the third document was never recorded
    )
    docs = _documents(batch)
    assert [d["outcome"] for d in docs] == ["kept", "kept", "error"]
    assert "no recorded reply" in docs[2]["drop_reason"]
    assert batch.status == "done"


def test_the_demo_batch_replays_its_bundled_recording(media_root):
    """The demo's recording matches today's prompts: every LLM request of the bundled corpus
    has its reply (a changed prompt would turn documents into errors here)."""
    from demo.mining import demo_batch_ensure

    batch = demo_batch_ensure()
    counts = {}
    for d in MiningDocument.objects.filter(batch=batch):
        counts[d.outcome] = counts.get(d.outcome, 0) + 1
    assert batch.status == "done"
    assert counts == {"kept": 7, "dropped": 4, "invalid": 1}
    assert not MiningStageUsage.objects.filter(batch=batch, failed_requests__gt=0).exists()
