"""run_demo: the web server and a real Celery worker as child processes, started and stopped
as a person would (Ctrl-C), and stopped together when one of them dies."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def demo_env(tmp_path_factory):
    """A fresh embedded install as `make demo` makes it: SQLite in a temp dir, the demo data
    loaded (`load_demo` must work on SQLite: no PostgreSQL-only lookups), filesystem broker,
    demo admin."""
    var = tmp_path_factory.mktemp("demo-var")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CELERY_", "TEST_DATABASE", "DEMO_"))
    }
    env.update(
        DATABASE_URL=f"sqlite:///{var / 'demo.sqlite3'}",
        HOW2REVIEW_VAR_DIR=str(var),
        DJANGO_SETTINGS_MODULE="config.settings",
        PYTHONUNBUFFERED="1",
    )
    for argv in (["migrate", "--noinput", "-v", "0"], ["load_demo"], ["ensure_demo_admin"]):
        subprocess.run(
            [sys.executable, "manage.py", *argv], cwd=ROOT, env=env, check=True, capture_output=True
        )
    return env, var


class Demo:
    def __init__(self, env: dict, var: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log_path = var / f"run_demo-{self.port}.log"
        self._log_file = open(self.log_path, "wb")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "run_demo", "--port", str(self.port), "--pool", "solo"],
            cwd=ROOT,
            env=env,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
        )
        self.var = var

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for(self, needle: str, timeout: float = 90) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.log()
            if needle in log:
                return log
            assert self.proc.poll() is None, f"run_demo exited early:\n{log}"
            time.sleep(0.2)
        raise AssertionError(f"no {needle!r} in run_demo output:\n{self.log()}")

    def pids(self) -> tuple[int, int]:
        m = re.search(r"web server pid (\d+), worker pid (\d+)", self.log())
        return int(m.group(1)), int(m.group(2))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        self._log_file.close()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.status, resp.read().decode()


@pytest.mark.worker
def test_run_demo_serves_the_page_and_runs_a_worker(demo_env, monkeypatch):
    env, var = demo_env
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)  # it would override the probe's broker
    demo = Demo(env, var)
    try:
        log = demo.wait_for("how2review demo is running")
        password = (var / "demo-admin-password").read_text().strip()
        assert demo.url in log and password in log
        assert _get(demo.url + "healthz") == (200, "ok")
        status, page = _get(demo.url)
        assert status == 200 and "how2review" in page
        # DEBUG off: an unknown address gets the project's 404 page, not Django's debug page,
        # and the static files and the icon are still served
        with pytest.raises(urllib.error.HTTPError) as missing:
            _get(demo.url + "no-such-page/")
        body = missing.value.read().decode()
        assert missing.value.code == 404 and "Page not found" in body and "URLconf" not in body
        assert _get(demo.url + "static/css/app.css")[0] == 200
        assert _get(demo.url + "favicon.ico")[1].startswith("<svg")
        assert all((var / "broker" / d).is_dir() for d in ("queue", "processed", "control"))

        # The worker consumes from the embedded filesystem broker: send it a built-in task.
        from celery import Celery

        folder = str(var / "broker" / "queue")
        probe = Celery(
            "probe",
            set_as_current=False,  # else celery.current_app stays this probe for later tests
            broker="filesystem://",
            broker_transport_options={
                "data_folder_in": folder,
                "data_folder_out": folder,
                "processed_folder": str(var / "broker" / "processed"),
                "control_folder": str(var / "broker" / "control"),
            },
        )
        task_id = probe.send_task("celery.accumulate", args=(7, 8), queue="default").id
        demo.wait_for(f"celery.accumulate[{task_id}] succeeded", timeout=30)
        probe.close()

        web_pid, worker_pid = demo.pids()
        demo.proc.send_signal(signal.SIGTERM)  # forwarded to both children
        assert demo.proc.wait(timeout=40) == 0
        assert _gone(web_pid) and _gone(worker_pid)
        assert "[demo] stopped." in demo.log()
    finally:
        demo.close()


@pytest.mark.worker
def test_run_demo_stops_when_the_worker_dies(demo_env):
    env, var = demo_env
    demo = Demo(env, var)
    try:
        demo.wait_for("how2review demo is running")
        web_pid, worker_pid = demo.pids()
        os.kill(worker_pid, signal.SIGKILL)
        assert demo.proc.wait(timeout=40) != 0
        assert "the worker process exited" in demo.log()
        assert _gone(web_pid)
        with pytest.raises(OSError):
            _get(demo.url + "healthz")
    finally:
        demo.close()


# What a researcher's JSONL export of the demo's labelled study is on SQLite (no COPY there): the
# download's lines are the rows read in Python, one JSON object a stored label.
EXPORT_ON_SQLITE = """
import json
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from annotation.models import Annotation, Study
from annotation.selectors.flow import study_export_rows
from core.streaming import jsonl_lines
study = Study.objects.filter(items__annotations__isnull=False).distinct().order_by("pk").first()
client = Client()
client.force_login(User.objects.filter(is_superuser=True).order_by("pk").first())
response = client.get(f"/study/manage/{study.pk}/export.jsonl")
body = b"".join(response.streaming_content).decode()
print(json.dumps({
    "vendor": connection.vendor,
    "status": response.status_code,
    "same": body == "".join(jsonl_lines(study_export_rows(study=study))),
    "lines": body.count(chr(10)),
    "labels": Annotation.objects.filter(item__study=study).count(),
}))
"""


def test_the_demo_exports_a_study_on_sqlite(demo_env):
    env, _ = demo_env
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", EXPORT_ON_SQLITE],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["vendor"] == "sqlite" and result["status"] == 200 and result["same"] is True
    assert result["lines"] == result["labels"] > 0
