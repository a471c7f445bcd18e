"""Stored files through STORAGES: the settings the environment selects, and reading a stored
file back (core.storage) from a real S3-compatible server (moto over HTTP) as from the
filesystem, including the mining readers over the stored stream."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.base import ContentFile

from core.storage import open_stored, storage_kind
from mining import readers
from tests.support.s3_server import s3_server, s3_storage  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]

PRINT_STORAGE = (
    "import django, json; django.setup(); from django.conf import settings; "
    "from core.storage import storage_kind; "
    "print(json.dumps({'default': settings.STORAGES['default'], 'kind': storage_kind(), "
    "'rate': settings.RATE_LIMIT_REDIS_URL}))"
)


def _settings_with(env: dict[str, str]) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("STORAGE_", "RATE_LIMIT"))}
    full.update({"DJANGO_SETTINGS_MODULE": "config.settings", **env})
    return subprocess.run(
        [sys.executable, "-c", PRINT_STORAGE],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_environment_selects_the_object_store(s3_server):  # noqa: F811
    result = _settings_with(s3_server.worker_env())
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["default"] == s3_server.storages_default()  # what the fixtures use is the same
    assert out["kind"] == "s3"


def test_filesystem_is_the_embedded_default_and_bad_settings_are_named():
    result = _settings_with({"CELERY_BROKER_URL": "filesystem://"})
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["kind"] == "filesystem"
    assert out["rate"] == ""  # no Redis broker: rate limits count per process
    missing = _settings_with({"STORAGE_BACKEND": "s3"})
    assert missing.returncode != 0 and "STORAGE_S3_BUCKET" in missing.stderr
    unknown = _settings_with({"STORAGE_BACKEND": "ftp"})
    assert unknown.returncode != 0 and "STORAGE_BACKEND='ftp'" in unknown.stderr


# django-storages made unfindable, as in an install without the extra
WITHOUT_STORAGES = "import sys\nsys.modules['storages'] = None\n"


def test_the_object_store_without_the_s3_extra_names_the_extra():
    env = {k: v for k, v in os.environ.items() if not k.startswith("STORAGE_")}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", STORAGE_BACKEND="s3")
    env["STORAGE_S3_BUCKET"] = "b"
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_STORAGES + PRINT_STORAGE.replace("; ", "\n")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "STORAGE_BACKEND=s3 needs the optional extra 's3'" in result.stderr
    assert "pip install -e '.[s3]'" in result.stderr


def test_rate_limit_redis_follows_a_redis_broker_unless_off():
    broker = "redis://127.0.0.1:6379/8"
    shared = _settings_with({"CELERY_BROKER_URL": broker})
    assert json.loads(shared.stdout)["rate"] == broker
    off = _settings_with({"CELERY_BROKER_URL": broker, "RATE_LIMIT_REDIS_URL": "off"})
    assert json.loads(off.stdout)["rate"] == ""


def test_saved_and_opened_through_the_object_store(s3_server, s3_storage, settings, tmp_path):  # noqa: F811
    settings.MEDIA_ROOT = tmp_path / "media"
    name = s3_storage.save("mining/uploads/a.jsonl", ContentFile(b'{"text": "x"}\n'))
    assert storage_kind() == "s3"
    assert s3_server.keys() == [name]  # in the bucket, over HTTP
    assert not (tmp_path / "media").exists()  # nothing on this host's disk
    with open_stored(name) as fh:
        assert fh.read() == b'{"text": "x"}\n'
    # a second upload of the same name is a second object, never an overwrite
    other = s3_storage.save("mining/uploads/a.jsonl", ContentFile(b"2"))
    assert other != name and len(s3_server.keys()) == 2
    with pytest.raises(FileNotFoundError, match=r"nope\.jsonl"):
        open_stored("mining/uploads/nope.jsonl")


def _parquet_bytes(rows: list[dict]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue()


def _zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return sink.getvalue().to_pybytes()


JSONL = b'{"text": "a"}\n{"text": "b"}\n'
CSV = b"text,url\na,u1\nb,u2\n"
SAMPLES = [
    ("d.jsonl", JSONL),
    ("d.jsonl.gz", gzip.compress(JSONL)),
    ("d.jsonl.zst", _zstd(JSONL)),
    ("d.jsonl.bz2", bz2.compress(JSONL)),
    ("d.jsonl.xz", lzma.compress(JSONL)),
    ("d.csv", CSV),
    ("d.csv.zst", _zstd(CSV)),
    ("d.csv.xz", lzma.compress(CSV)),
    ("d.parquet", _parquet_bytes([{"text": "a"}, {"text": "b"}])),
]


# ids by name: gzip writes the time into its bytes, and every xdist worker must collect the same ids
@pytest.mark.parametrize("name,body", SAMPLES, ids=[name for name, _ in SAMPLES])
def test_readers_stream_a_stored_file(s3_storage, name, body):  # noqa: F811
    stored = s3_storage.save(f"mining/uploads/{name}", ContentFile(body))
    with open_stored(stored) as fh:
        records = list(readers.iter_records(fh, name=stored))
    assert [r.data["text"] for r in records] == ["a", "b"]
    assert all(r.error is None for r in records)


@pytest.mark.parametrize("name,body", SAMPLES, ids=[name for name, _ in SAMPLES])
def test_readers_read_a_local_compressed_file(tmp_path, name, body):
    path = tmp_path / name
    path.write_bytes(body)
    assert [r.data["text"] for r in readers.iter_records(path)] == ["a", "b"]


def test_compressed_parquet_and_unknown_types_are_refused_by_name():
    with pytest.raises(readers.UnsupportedFormat, match="Parquet compresses itself"):
        readers.detect_format("d.parquet.zst")
    with pytest.raises(readers.UnsupportedFormat, match=r"d\.txt\.xz: unknown file type"):
        readers.detect_format("d.txt.xz")
    assert readers.detect_format("D.JSONL.BZ2") == "jsonl"


def test_filesystem_storage_reads_the_same_way(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    from django.core.files.storage import default_storage

    stored = default_storage.save(
        "mining/uploads/d.jsonl.gz", ContentFile(gzip.compress(b'{"text": "z"}\n'))
    )
    assert storage_kind() == "filesystem"
    with open_stored(stored) as fh:
        assert [r.data["text"] for r in readers.iter_records(fh, name=stored)] == ["z"]


def test_static_urls_are_worked_out_once_and_a_missing_name_still_raises(tmp_path, settings):
    """Production static storage (core.storage.StaticManifestStorage) caches each name's URL for
    the process; a name not in the manifest raises every time, never a cached guess."""
    import json

    from core.storage import StaticManifestStorage

    (tmp_path / "staticfiles.json").write_text(
        json.dumps({"version": "1.1", "paths": {"css/app.css": "css/app.abc123.css"}})
    )
    storage = StaticManifestStorage(location=str(tmp_path), base_url="/static/")
    assert storage.url("css/app.css") == "/static/css/app.abc123.css"
    storage.hashed_files["css/app.css"] = "css/app.changed.css"  # the cache answers, not this
    assert storage.url("css/app.css") == "/static/css/app.abc123.css"
    for _ in range(2):
        with pytest.raises(ValueError, match=r"nope\.css"):
            storage.url("nope.css")
