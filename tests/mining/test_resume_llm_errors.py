"""Documents of a mining batch that ended in an LLM error are tried again when the batch is
resumed (a done batch too); every other outcome is kept and never sent again."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from mining.models import MiningDocument
from mining.services import batches as services
from tests.mining.factories import doc

pytestmark = pytest.mark.django_db(transaction=True)


def _outcomes(batch) -> dict[str, str]:
    return dict(MiningDocument.objects.filter(batch=batch).values_list("source_id", "outcome"))


def test_llm_errors_are_retried_on_resume_and_nothing_else(
    media_root, mining_backends, script, llm_server
):
    upload = SimpleUploadedFile(
        "d.jsonl", "".join(json.dumps(doc(i)) + "\n" for i in range(6)).encode()
    )
    batch = services.batch_create(
        name="errors",
        upload=upload,
        backends=mining_backends,
        options={"chunk_size": 3},
        start=False,
    )
    # the first request about document 2 is refused for good (a 400 is not retried)
    llm_server.add_fault("status", status=400, match=lambda r: "Recipe 2 " in r.prompt_text)
    batch = services.batch_run(batch_id=batch.pk)
    first = _outcomes(batch)
    assert batch.status == "done" and first["d2"] == "error", (batch.status, first)
    assert sum(1 for o in first.values() if o == "error") == 1
    sent_before = sum(script.by_goal.values())

    batch = services.batch_resume(batch=batch)
    assert batch.status == "queued"
    assert _outcomes(batch)["d2"] == "pending"  # reset in the resume's transaction
    batch = services.batch_run(batch_id=batch.pk)
    again = _outcomes(batch)
    assert batch.status == "done" and again["d2"] == first["d0"] != "error"
    assert {k: v for k, v in again.items() if k != "d2"} == {
        k: v for k, v in first.items() if k != "d2"
    }
    # only document 2 went through the stages again
    resent = {goal for goal, n in script.by_goal.items() if n > 1}
    assert sum(script.by_goal.values()) > sent_before
    assert all("2" in goal for goal in resent), resent
    assert (batch.n_total, batch.n_done) == (6, 6)


def test_a_done_batch_without_llm_errors_is_not_resumed(media_root, mining_backends):
    upload = SimpleUploadedFile("d.jsonl", (json.dumps(doc(0)) + "\n").encode())
    batch = services.batch_create(
        name="clean", upload=upload, backends=mining_backends, start=False
    )
    batch = services.batch_run(batch_id=batch.pk)
    assert batch.status == "done"
    with pytest.raises(Exception, match="done; nothing to resume"):
        services.batch_resume(batch=batch)
