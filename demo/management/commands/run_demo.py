"""Run the demo: the web server and a real Celery worker, as two child processes.

- web: Django's ``runserver --noreload`` on ``--host``/``--port`` (static files served by Django);
- worker: ``celery -A config worker`` on the configured broker; with the default settings that is
  kombu's filesystem transport under ``var/broker`` (no server needed), whose folders are created here.

Both children's output is shown with a ``[web]`` / ``[worker]`` prefix. Once the page answers and
the worker is ready the URL and the demo logins are printed. Ctrl-C or SIGTERM is forwarded to
both (a second one kills them at once); when either child dies the other is stopped and the
command exits with an error.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

STOP_GRACE_S = 20.0
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM it if run_demo itself dies."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # no prctl: the child simply outlives a killed parent
        return


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _url_host(host: str) -> str:
    if host in {"0.0.0.0", ""}:
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


class Child:
    """One child process whose output is copied, prefixed, to our stdout."""

    def __init__(self, name: str, argv: list[str], *, cwd: Path, env: dict[str, str]) -> None:
        self.name = name
        self.argv = argv
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # our Ctrl-C reaches it once, forwarded by us
            # Both children are started before any thread of ours exists (see handle()).
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        self.ready = threading.Event()
        self._ready_marker: str | None = None
        self._pump: threading.Thread | None = None

    def start_output(self, write, *, ready_marker: str | None = None) -> None:
        self._ready_marker = ready_marker

        def pump() -> None:
            assert self.proc.stdout is not None
            for raw in iter(self.proc.stdout.readline, b""):
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                if self._ready_marker and self._ready_marker in line:
                    self.ready.set()
                write(f"[{self.name}] {line}")

        self._pump = threading.Thread(target=pump, name=f"{self.name}-output", daemon=True)
        self._pump.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def signal(self, signum: int) -> None:
        """SIGKILL goes to the child's whole process group (e.g. celery's pool processes); other
        signals to the child alone, which shuts its own processes down."""
        if not self.alive():
            return
        try:
            if signum == signal.SIGKILL:
                os.killpg(self.proc.pid, signum)
            else:
                self.proc.send_signal(signum)
        except ProcessLookupError:
            pass

    def sweep(self) -> None:
        """SIGKILL whatever is left in the child's process group (e.g. pool processes of a worker
        that was killed); the group id stays reserved while any member lives."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def drain(self) -> None:
        if self._pump is not None:
            self._pump.join(timeout=2)


class Command(BaseCommand):
    help = "Start the web server and a Celery worker for the demo; Ctrl-C stops both."

    def add_arguments(self, parser):
        parser.add_argument(
            "--host", default="127.0.0.1", help="Address to bind (default: %(default)s)."
        )
        parser.add_argument(
            "--port",
            type=int,
            default=8000,
            help="Port (default: %(default)s; 0 picks a free one).",
        )
        parser.add_argument(
            "--pool", choices=["prefork", "solo"], default="prefork", help="Celery worker pool."
        )
        parser.add_argument(
            "--concurrency", type=int, default=2, help="Worker processes for the prefork pool."
        )
        parser.add_argument(
            "--ready-timeout",
            type=float,
            default=90.0,
            help="Seconds to wait for web and worker to be ready.",
        )

    # --- the two children -----------------------------------------------------------------------

    def _prepare_broker(self) -> str:
        url = settings.CELERY_BROKER_URL
        if url.startswith("filesystem://"):
            opts = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}) or {}
            for key, value in opts.items():  # data_folder_in/out, processed_folder, control_folder
                if "folder" in key and isinstance(value, str) and value:
                    Path(value).mkdir(parents=True, exist_ok=True)
            return (
                f"filesystem broker in {Path(opts.get('data_folder_in', settings.VAR_DIR)).parent}"
            )
        return url.split("@")[-1] if "@" in url else url

    def _children(
        self, *, host: str, port: int, pool: str, concurrency: int
    ) -> tuple[Child, Child]:
        base = Path(settings.BASE_DIR)
        env = dict(os.environ)
        env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        # the demo shows what a user sees: the project's 404/403/500 pages, not Django's debug
        # pages (static files are still served: WhiteNoise finds them outside production)
        env.setdefault("DEBUG", "0")
        env["PYTHONUNBUFFERED"] = "1"
        bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        web_argv = [sys.executable, str(base / "manage.py"), "runserver", "--noreload", bind]
        worker_argv = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool",
            pool,
            "--concurrency",
            str(concurrency),
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            "demo@%h",
        ]
        web = Child("web", web_argv, cwd=base, env=env)
        try:
            worker = Child("worker", worker_argv, cwd=base, env=env)
        except Exception:
            web.signal(signal.SIGKILL)
            raise
        return web, worker

    # --- output ---------------------------------------------------------------------------------

    def _write(self, line: str) -> None:
        with self._lock:
            self.stdout.write(line)
            self.stdout.flush()

    def _banner(self, *, url: str, broker: str, pool: str, concurrency: int) -> None:
        try:
            from demo.management.commands.ensure_demo_admin import login_lines

            logins = login_lines(base_url=url)
        except DatabaseError as exc:  # e.g. not migrated yet: the server still runs
            logins = [
                f"  (demo logins unavailable: {exc}; run 'make demo' or migrate + ensure_demo_admin)"
            ]
        workers = f"{pool} pool" + (f", {concurrency} processes" if pool == "prefork" else "")
        rule = "=" * 72
        lines = [
            rule,
            "  how2review demo is running",
            f"  Open:    {url}",
            f"  Health:  {url}healthz",
            f"  Worker:  celery ({workers}) on the {broker}",
            *logins,
            "  Press Ctrl-C to stop the web server and the worker.",
            rule,
        ]
        self._write("\n".join(lines))

    def _web_answers(self, url: str) -> bool:
        try:
            with urllib.request.urlopen(f"{url}healthz", timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return False

    # --- main loop ------------------------------------------------------------------------------

    def handle(self, *args, **options):
        self._lock = threading.Lock()
        host, port = self._address(options)
        url = f"http://{_url_host(host)}:{port}/"
        broker = self._prepare_broker()

        stop: list[int] = []

        def on_signal(signum, _frame):
            stop.append(signum)

        previous = {
            s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        }
        web, worker = self._children(
            host=host, port=port, pool=options["pool"], concurrency=options["concurrency"]
        )
        web.start_output(self._write)
        worker.start_output(self._write, ready_marker=" ready.")
        self._write(f"[demo] web server pid {web.pid}, worker pid {worker.pid}; starting on {url}")
        try:
            dead = self._supervise(web, worker, stop, url=url, broker=broker, options=options)
        finally:
            self._shutdown((web, worker), stop)
            for s, handler in previous.items():
                signal.signal(s, handler)

        if dead is not None:
            raise CommandError(
                f"the {dead.name} process exited (code {dead.proc.returncode}); the demo was stopped"
            )
        self._write("[demo] stopped.")

    @staticmethod
    def _address(options) -> tuple[str, int]:
        host, port = options["host"], options["port"]
        if not 0 <= port <= 65535:
            raise CommandError(
                f"--port {port}: use a port between 1 and 65535 (or 0 for a free one)"
            )
        if options["concurrency"] < 1:
            raise CommandError(f"--concurrency {options['concurrency']}: must be at least 1")
        return host, port or _free_port(host)

    def _supervise(self, web, worker, stop, *, url: str, broker: str, options) -> Child | None:
        """Wait until a signal arrives or a child dies (returned); announce the demo once both
        answer."""
        announced = False
        deadline = time.monotonic() + options["ready_timeout"]
        while not stop:
            dead = next((c for c in (web, worker) if not c.alive()), None)
            if dead is not None:
                return dead
            if not announced:
                if worker.ready.is_set() and self._web_answers(url):
                    self._banner(
                        url=url,
                        broker=broker,
                        pool=options["pool"],
                        concurrency=options["concurrency"],
                    )
                    announced = True
                elif time.monotonic() > deadline:
                    self._write(
                        f"[demo] not ready after {options['ready_timeout']:.0f}s; still waiting"
                    )
                    deadline = float("inf")
            time.sleep(0.2)
        return None

    def _shutdown(self, children: tuple[Child, ...], stop: list[int]) -> None:
        seen = len(stop)
        alive = [c for c in children if c.alive()]
        if alive:
            self._write(f"[demo] stopping {', '.join(c.name for c in alive)} ...")
        for child in alive:
            child.signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while any(c.alive() for c in children):
            if len(stop) > seen or time.monotonic() > deadline:  # a second Ctrl-C, or too slow
                for child in children:
                    child.signal(signal.SIGKILL)
                seen = len(stop)
            time.sleep(0.1)
        for child in children:
            child.proc.wait()
            child.sweep()
            child.drain()
