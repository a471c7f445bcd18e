"""A mining batch reports what happened: launch refused when a stage's API key
variable is unset or its server does not answer; a batch whose every LLM request failed ends
"failed", not "done" at 100%."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from core.runs import engine
from mining.models import MiningBatch, MiningStageUsage
from mining.services import batches as services
from tests.mining.factories import doc

pytestmark = pytest.mark.django_db(transaction=True)


def upload(n=4):
    return SimpleUploadedFile(
        "d.jsonl", "".join(json.dumps(doc(i)) + "\n" for i in range(n)).encode()
    )


def test_launch_refused_when_the_key_variable_is_unset(media_root, mining_backends, monkeypatch):
    monkeypatch.delenv("MINE_TRUTH_API_KEY", raising=False)
    backends = {"default": dict(mining_backends["default"], api_key_env="MINE_TRUTH_API_KEY")}
    with pytest.raises(ValidationError) as info:
        services.batch_create(name="k", upload=upload(), backends=backends, start=True)
    assert "'MINE_TRUTH_API_KEY' (api_key_env) is not set" in str(info.value)
    assert "stage " in str(info.value)
    assert not MiningBatch.objects.exists()


def test_launch_refused_when_the_server_does_not_answer(media_root, mining_backends):
    backends = {"default": dict(mining_backends["default"], base_url="http://127.0.0.1:9/v1")}
    with pytest.raises(ValidationError, match="does not answer"):
        services.batch_create(name="d", upload=upload(), backends=backends, start=True)
    assert not MiningBatch.objects.exists()


def test_every_request_failing_ends_failed_not_done(
    media_root, mining_backends, llm_server, monkeypatch
):
    # the key variable disappears after launch (the worker's environment lacks it)
    monkeypatch.setenv("MINE_TRUTH_API_KEY", "sk-test")
    backends = {"default": dict(mining_backends["default"], api_key_env="MINE_TRUTH_API_KEY")}
    batch = services.batch_create(name="f", upload=upload(), backends=backends, start=False)
    monkeypatch.delenv("MINE_TRUTH_API_KEY")
    batch = engine.execute_inline(batch)
    usage = MiningStageUsage.objects.filter(batch=batch)
    assert sum(u.requests for u in usage) > 0
    assert all(u.failed_requests == u.requests for u in usage)
    assert batch.status == "failed", (batch.status, batch.error)
    assert "every LLM request failed" in batch.error
    assert llm_server.requests == []
