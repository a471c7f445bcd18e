"""The benchmarks' own PostgreSQL cluster, run as in production: ``initdb`` in a temporary folder
(as the ``postgres`` OS user when the benchmark runs as root), PostgreSQL's default settings
(autovacuum on), a free TCP port on 127.0.0.1 and the unix socket in that folder, started with
``pg_ctl`` and stopped and removed at the end, on an error or on Ctrl-C / SIGTERM too.

    with pg_cluster() as cluster:
        cluster.url("h2r_bench")  # postgres://postgres@127.0.0.1:<port>/h2r_bench
        cluster.cpu()             # CPU seconds the cluster's processes have used so far

:meth:`Cluster.cpu` sums the user + system CPU of the postmaster, of its live children
(backends, autovacuum workers, checkpointer, WAL writer) and of the children it has already
reaped (``children_user``/``children_system`` of the postmaster), so a backend that
disconnected mid-run still counts. Nothing else on the machine runs on this cluster, so every
second of it is the benchmark's.

The binaries: ``PG_BINDIR`` if set, else the newest ``/usr/lib/postgresql/<version>/bin``,
else ``initdb`` on the PATH.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path


def bindir() -> Path:
    if os.environ.get("PG_BINDIR"):
        return Path(os.environ["PG_BINDIR"])
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parents[1].name) if Path(p).parents[1].name.isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise RuntimeError(
        "initdb not found: install PostgreSQL's server binaries or set PG_BINDIR to their folder"
    )


def _as_owner(cmd: list[str]) -> list[str]:
    """``cmd`` as the ``postgres`` OS user when running as root (PostgreSQL refuses root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    folder: Path
    data: Path
    port: int

    @property
    def admin_url(self) -> str:
        return self.url("postgres")

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])

    def cpu(self) -> float:
        """User + system CPU seconds of the cluster so far: the postmaster, its live children
        and the children it has reaped. A backend caught between its exit and the postmaster
        reaping it counts nowhere for that moment: the reading is taken again until no child
        is exiting and the reaped total held still while the children were read."""
        import psutil

        root = psutil.Process(self.postmaster_pid())
        total = 0.0
        for _ in range(50):
            t0 = root.cpu_times()
            live, settled = 0.0, True
            for child in root.children():
                try:
                    if child.status() == psutil.STATUS_ZOMBIE:
                        settled = False
                        continue
                    c = child.cpu_times()
                except psutil.NoSuchProcess:  # exited between the listing and the read
                    settled = False
                    continue
                live += c.user + c.system
            t1 = root.cpu_times()
            total = t1.user + t1.system + t1.children_user + t1.children_system + live
            if settled and (t0.children_user, t0.children_system) == (
                t1.children_user,
                t1.children_system,
            ):
                return total
            time.sleep(0.01)
        return total

    def settings(self, *names: str) -> dict[str, str]:
        """The running server's values of ``names`` (e.g. ``autovacuum``)."""
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            return {n: conn.execute(f"SHOW {n}").fetchone()[0] for n in names}


def _run(cmd: list[str], what: str) -> None:
    done = subprocess.run(
        _as_owner(cmd),
        capture_output=True,
        text=True,
        check=False,
        start_new_session=True,  # Ctrl-C reaches the benchmark, which stops the cluster itself
    )
    if done.returncode:
        raise RuntimeError(f"{what} failed (exit {done.returncode}): {done.stderr or done.stdout}")


@contextmanager
def pg_cluster(database: str | None = None) -> Iterator[Cluster]:
    """A fresh cluster for the ``with`` block (and ``database`` created in it), then stopped
    and its folder removed."""
    bins = bindir()
    folder = Path(tempfile.mkdtemp(prefix="h2r-perf-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    cluster = Cluster(folder=folder, data=folder / "data", port=_free_port())
    log = folder / "server.log"
    previous_term = signal.getsignal(signal.SIGTERM)

    def _term(signum, frame):  # a killed benchmark still stops its cluster (the finally below)
        raise KeyboardInterrupt("SIGTERM")

    started = False
    try:
        signal.signal(signal.SIGTERM, _term)
        _run(
            [
                str(bins / "initdb"),
                *("-D", str(cluster.data), "-U", "postgres", "--auth=trust"),
                *("-E", "UTF8", "--no-sync"),
            ],
            "initdb",
        )
        options = f"-p {cluster.port} -k {folder} -c listen_addresses=127.0.0.1"
        started = True
        _run(
            [
                *(str(bins / "pg_ctl"), "start", "-w", "-D", str(cluster.data)),
                *("-l", str(log), "-o", options),
            ],
            "pg_ctl start",
        )
        if database:
            import psycopg

            with psycopg.connect(cluster.admin_url, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{database}"')
        yield cluster
    finally:
        if started:
            # not running: it failed to start, or was stopped already
            with suppress(RuntimeError):
                _run(
                    [str(bins / "pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(cluster.data)],
                    "pg_ctl stop",
                )
            deadline = time.monotonic() + 10
            while (cluster.data / "postmaster.pid").exists() and time.monotonic() < deadline:
                time.sleep(0.2)
        shutil.rmtree(folder, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous_term)
