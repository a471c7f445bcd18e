"""``manage.py mine`` over shard directories and globs: a Celery run followed with a progress
bar (``--wait``, a real worker), ``--no-wait``, ``--sync`` in this process; and a glob of
shards in an S3-compatible object store (moto over HTTP) mined by a real worker."""

from __future__ import annotations

import gzip
import json
from io import StringIO

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command

from mining.models import MiningBatch, MiningDocument
from mining.services import batches as services
from tests.mining.factories import doc
from tests.support.s3_server import s3_server, s3_storage  # noqa: F401
from tests.support.worker import running_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _shards(folder, n_shards: int, per_shard: int, **extra) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for s in range(n_shards):
        rows = [doc(s * per_shard + i, **extra) for i in range(per_shard)]
        body = "".join(json.dumps(r) + "\n" for r in rows).encode()
        (folder / f"part-{s}.jsonl.gz").write_bytes(gzip.compress(body))
    (folder / "notes.txt").write_text("not a shard")


def _llm_args(llm_server) -> list[str]:
    return ["--base-url", llm_server.base_url, "--model", "m", "--api-key-env", ""]


def test_sync_mines_a_local_shard_directory_with_budgets(
    tmp_path, media_root, llm_server, script, capsys
):
    _shards(tmp_path / "corpus", 3, 4)
    out = StringIO()
    call_command(
        "mine",
        str(tmp_path / "corpus"),
        "--sync",
        "--candidates-per-topic",
        "5",
        "--chunk-size",
        "2",
        *_llm_args(llm_server),
        stdout=out,
    )
    batch = MiningBatch.objects.get()
    assert batch.status == "done" and batch.n_total == 12 == batch.n_done
    assert batch.source_pattern.startswith("mining/corpus/")  # copied into storage
    assert sorted(default_storage.listdir(batch.source_pattern)[1]) == [
        "part-0.jsonl.gz",
        "part-1.jsonl.gz",
        "part-2.jsonl.gz",
    ]
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert len(lines) == 12
    assert sum(x["outcome"] == "kept" for x in lines) == 5
    assert sum(x["stage"] == "budget" for x in lines) == 7
    assert script.calls["procedures"] == 5  # the budget: no request for the other seven
    err = capsys.readouterr().err
    assert f"batch {batch.pk} [" in err and "12/12 done" in err


def test_glob_and_column_options_and_errors(tmp_path, media_root, llm_server, script):
    folder = tmp_path / "c"
    folder.mkdir()
    rows = [{"body": doc(i)["text"], "cat": "Health", "key": f"k{i}"} for i in range(3)]
    (folder / "a-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "b-1.jsonl").write_text(json.dumps(doc(9)) + "\n")
    out = StringIO()
    call_command(
        "mine",
        str(folder / "a-*.jsonl"),
        "--sync",
        "--summary-only",
        "--text-column",
        "body",
        "--topic-column",
        "cat",
        "--id-column",
        "key",
        "--stages",
        "1",
        *_llm_args(llm_server),
        stdout=out,
    )
    batch = MiningBatch.objects.get()
    assert out.getvalue() == ""  # --summary-only
    ids = set(MiningDocument.objects.filter(batch=batch).values_list("source_id", flat=True))
    assert ids == {"k0", "k1", "k2"} and batch.n_total == 3
    assert set(MiningDocument.objects.values_list("topic", flat=True)) == {"health"}
    with pytest.raises(CommandError, match="matched no corpus file"):
        call_command("mine", str(folder / "z-*.jsonl"), "--sync", *_llm_args(llm_server))
    with pytest.raises(CommandError, match="no such file, directory or glob"):
        call_command("mine", str(tmp_path / "nothing"), "--sync", *_llm_args(llm_server))
    with pytest.raises(CommandError, match="candidates_per_topic must be an integer >= 1"):
        call_command("mine", str(folder), "--candidates-per-topic", "0", *_llm_args(llm_server))
    assert MiningBatch.objects.count() == 1


@pytest.mark.worker
def test_wait_launches_a_celery_run_and_draws_a_progress_bar(
    tmp_path, media_root, llm_server, script, capsys
):
    _shards(tmp_path / "corpus", 2, 5)
    # the worker's MEDIA_ROOT is the test's (tmp_path/media): one machine's filesystem storage
    with running_worker(tmp_path, concurrency=1, extra_env={"HOW2REVIEW_VAR_DIR": str(tmp_path)}):
        out = StringIO()
        call_command(
            "mine",
            str(tmp_path / "corpus"),
            "--chunk-size",
            "3",
            *_llm_args(llm_server),
            stdout=out,
        )
        batch = MiningBatch.objects.get()
        assert batch.status == "done" and batch.n_done == 10
        assert batch.lease_owner == ""  # a worker worked it, then let go
        assert len(out.getvalue().splitlines()) == 10
        assert "10/10 done" in capsys.readouterr().err
        # --no-wait: queued for the workers, the command returns at once
        out = StringIO()
        call_command(
            "mine", str(tmp_path / "corpus"), "--no-wait", *_llm_args(llm_server), stdout=out
        )
        second = MiningBatch.objects.exclude(pk=batch.pk).get()
        assert out.getvalue().startswith(f"batch {second.pk} queued: /mining/batches/{second.pk}/")
        wait_for(
            lambda: MiningBatch.objects.get(pk=second.pk).status == "done",
            timeout=120,
            message="the --no-wait batch finished by the worker",
        )
    assert script.calls["procedures"] == 20


@pytest.mark.worker
def test_a_glob_of_shards_in_the_object_store_is_mined_by_a_worker(
    tmp_path,
    settings,
    s3_server,  # noqa: F811
    s3_storage,  # noqa: F811
    llm_server,
    mining_backends,
    script,
):
    settings.MEDIA_ROOT = tmp_path / "web" / "media"
    for s in range(3):
        body = "".join(json.dumps(doc(s * 4 + i)) + "\n" for i in range(4)).encode()
        default_storage.save(f"corpus/2026/part-{s}.jsonl.gz", ContentFile(gzip.compress(body)))
    default_storage.save("corpus/2026/other-0.jsonl.gz", ContentFile(gzip.compress(b"{}\n")))
    env = {**s3_server.worker_env(), "HOW2REVIEW_VAR_DIR": str(tmp_path / "worker")}
    with running_worker(tmp_path, concurrency=1, extra_env=env):
        batch = services.batch_create(
            name="s3 glob",
            source="corpus/*/part-*.jsonl.gz",
            backends=mining_backends,
            options={"chunk_size": 5, "candidates_per_topic": 10},
        )
        wait_for(
            lambda: MiningBatch.objects.get(pk=batch.pk).status in ("done", "failed"),
            timeout=120,
            message="batch finished by the worker",
        )
    batch.refresh_from_db()
    assert batch.status == "done", batch.error
    assert batch.n_total == 12 == batch.n_done
    rows = MiningDocument.objects.filter(batch=batch)
    assert rows.filter(outcome="kept").count() == 10
    assert rows.filter(stage_reached="budget").count() == 2
    assert set(rows.values_list("source_id", flat=True)) == {f"d{i}" for i in range(12)}
    assert not (tmp_path / "worker" / "media").exists()  # read from the bucket only
