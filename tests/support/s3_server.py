"""A real S3-compatible object store on loopback for tests: ``moto`` in server mode, over HTTP.

It is a separate process (``python -m moto.server``) on a free port, so the test process and
real Celery worker processes reach the same buckets the way machines reach an object store::

    def test_x(s3_server, s3_storage):   # s3_storage: STORAGES["default"] is the bucket
        ...
        worker_env = s3_server.worker_env()   # STORAGE_BACKEND=s3 ... for start_worker
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ACCESS_KEY = "test-access-key"
SECRET_KEY = "test-secret-key"
REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class S3Server:
    proc: subprocess.Popen
    port: int
    bucket: str
    log_path: Path
    created: list[str] = field(default_factory=list)

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )

    def keys(self) -> list[str]:
        client = self.client()
        try:
            listing = client.list_objects_v2(Bucket=self.bucket)
        finally:
            client.close()
        return sorted(obj["Key"] for obj in listing.get("Contents", []))

    def worker_env(self) -> dict[str, str]:
        """What a worker process (another machine) is configured with."""
        return {
            "STORAGE_BACKEND": "s3",
            "STORAGE_S3_BUCKET": self.bucket,
            "STORAGE_S3_ENDPOINT_URL": self.endpoint_url,
            "STORAGE_S3_REGION": REGION,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        }

    def storages_default(self) -> dict:
        """The ``STORAGES["default"]`` entry config/settings.py builds from ``worker_env()``."""
        return {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": self.bucket,
                "endpoint_url": self.endpoint_url,
                "region_name": REGION,
                "location": "",
                "file_overwrite": False,
                "default_acl": None,
            },
        }


def start_s3_server(tmp_path: Path) -> S3Server:
    port = _free_port()
    log_path = tmp_path / "moto.log"
    log = open(log_path, "wb")  # noqa: SIM115 - the server writes to it for its lifetime
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"moto server exited: {log_path.read_text(errors='replace')}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        raise RuntimeError("moto server did not start in 30 s")
    server = S3Server(proc, port, f"h2r-{uuid.uuid4().hex[:12]}", log_path)
    client = server.client()
    try:
        client.create_bucket(Bucket=server.bucket)
    finally:
        client.close()
    return server


@pytest.fixture
def s3_server(tmp_path):
    server = start_s3_server(tmp_path)
    try:
        yield server
    finally:
        server.proc.terminate()
        try:
            server.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.proc.kill()


@pytest.fixture
def s3_storage(s3_server, settings, monkeypatch):
    """This (web) process stores files in the moto bucket, credentials from the environment."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    settings.STORAGES = {**settings.STORAGES, "default": s3_server.storages_default()}
    from django.core.files.storage import default_storage

    return default_storage
