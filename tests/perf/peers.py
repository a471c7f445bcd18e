"""What the side-by-side peer benchmarks share (``bench_peers_judge.py``,
``bench_peers_annotation.py``): each peer installed in a virtual environment of its own under
``var/peers/`` (``python -m venv`` + pip from the configured package index, never the project's
``.venv``), the CPU time and peak memory of a process tree, the machine's load, and a Markdown
table of the rows.

The reference CLI (``h2e``, the public repository lilakk/how2everything) is not a package on
the index: the benchmark installs it from a snapshot of its repository, found through the
environment variable ``H2E_SOURCE`` — a checkout or a bare git directory (its ``HEAD`` is
archived into ``var/peers/how2everything-src``). Get a snapshot with ``git clone`` of that
repository (a bare clone works too); when ``H2E_SOURCE`` is not set, a bare git directory of
``lilakk/how2everything`` under ``/work/.mirror/`` is looked for.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "var" / "peers"
OUT = ROOT / "tests" / "perf" / "out"
H2E_FALLBACK = Path("/work/.mirror/lilakk+how2everything/repo")
H2E_PATHS = ["pyproject.toml", "README.md", "how2everything", "prompts"]


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kw)


def venv(name: str, requirements: list[list[str]]) -> Path:
    """The python of ``var/peers/<name>``, created with ``python -m venv`` and filled by pip
    (each entry of ``requirements`` is one ``pip install`` argument list) unless the same
    requirements are already installed there."""
    home = PEERS / name
    python = home / "bin" / "python"
    stamp = home / ".requirements.json"
    wanted = json.dumps(requirements, sort_keys=True)
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    if home.exists():
        shutil.rmtree(home)
    PEERS.mkdir(parents=True, exist_ok=True)
    base = getattr(sys, "_base_executable", sys.executable)
    print(f"peers: creating {home.relative_to(ROOT)} ...", flush=True)
    run([base, "-m", "venv", str(home)])
    for args in requirements:
        run([str(python), "-m", "pip", "install", "-q", *args])
    stamp.write_text(wanted)
    return python


def h2e_source() -> tuple[Path, str]:
    """A working tree of the reference repository and its commit: ``H2E_SOURCE`` (a checkout,
    used as is, or a bare git directory, archived into ``var/peers/how2everything-src``)."""
    given = os.environ.get("H2E_SOURCE", "")
    source = Path(given) if given else H2E_FALLBACK
    if not source.exists():
        raise SystemExit(
            "the reference CLI's repository (lilakk/how2everything) was not found: set H2E_SOURCE "
            "to a checkout or a bare git directory of it (see tests/perf/peers.py)"
        )
    if (source / "pyproject.toml").exists() and (source / "how2everything").is_dir():
        sha = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        return source, sha or "unknown"
    sha = run(
        ["git", "--git-dir", str(source), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    target = PEERS / "how2everything-src"
    marker = target / ".commit"
    if not (marker.exists() and marker.read_text() == sha):
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        archive = subprocess.Popen(
            # what installing the package needs (a snapshot may lack its large example data)
            ["git", "--git-dir", str(source), "archive", "--format=tar", "HEAD", *H2E_PATHS],
            stdout=subprocess.PIPE,
        )
        run(["tar", "-x", "-C", str(target)], stdin=archive.stdout)
        if archive.wait() != 0:
            raise SystemExit(f"git archive of {source} failed")
        marker.write_text(sha)
    return target, sha


def version_of(python: Path, dist: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({dist!r}))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return done.stdout.strip() or "?"


def git_head() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or "?"


def load() -> float:
    return round(os.getloadavg()[0], 2)


def own_cpu() -> float:
    """CPU seconds (user + system) of this process, all its threads: the local test server's
    share of the machine, which both tools' rounds compete with."""
    t = os.times()
    return t.user + t.system


def _vm_hwm_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class TreeMeter:
    """CPU seconds (user + system) and peak RSS of a process and its descendants, sampled every
    ``every`` seconds on a side thread: ``mark()`` starts the CPU count, ``stop()`` ends it.
    Peak RSS is the sum over the tree's processes of each one's high-water mark (VmHWM)."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.every = every
        self.cpu: dict[int, float] = {}
        self.cpu0: dict[int, float] = {}
        self.hwm: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _sample(self) -> None:
        import psutil

        try:
            procs = [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        for p in procs:
            try:
                t = p.cpu_times()
                self.cpu[p.pid] = t.user + t.system
                self.hwm[p.pid] = max(self.hwm.get(p.pid, 0), _vm_hwm_kb(p.pid))
            except psutil.NoSuchProcess:
                pass

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def mark(self) -> TreeMeter:
        self._sample()
        self.cpu0 = dict(self.cpu)
        self._thread.start()
        return self

    def stop(self) -> dict:
        self._sample()
        self._stop.set()
        self._thread.join()
        cpu = sum(v - self.cpu0.get(pid, 0.0) for pid, v in self.cpu.items())
        return {
            "cpu_s": cpu,
            "peak_rss_mb": sum(self.hwm.values()) / 1024,
            # each process's high-water mark, the root's first
            "peaks_mb": [round(self.hwm[pid] / 1024, 1) for pid in sorted(self.hwm)],
        }


def wait_rusage(proc: subprocess.Popen) -> tuple[int, float, float]:
    """Wait for ``proc``: (exit code, CPU seconds, peak RSS MB) from the kernel (wait4: the
    process and the descendants it waited for)."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def ratio_lines(
    rows: list[dict], min_ratio: float, max_cpu_ratio: float, peer: str = "Potato"
) -> list[str]:
    """Per user count, how2review's items/s over the peer's (means over the rounds) and its
    CPU per item (``total_cpu_ms_per_item``: web workers + database) over the peer's server CPU
    per item; a line per user count, ``ratio: FAIL`` where the items/s ratio is under
    ``min_ratio``, the CPU ratio over ``max_cpu_ratio``, or a peer round saved nothing (no
    figure to compare)."""
    lines = []
    for users in sorted({r["users"] for r in rows}):
        of = {
            tool: [r for r in rows if r["users"] == users and r["tool"] == tool]
            for tool in ("how2review", peer)
        }
        if not of["how2review"] or not of[peer]:
            continue
        if not all(r["saves"] for r in of[peer]):
            lines.append(
                f"ratio: FAIL ({users} users) no figure: a {peer} round saved no item in its "
                "time (its users still entering), so there is nothing to compare"
            )
            continue
        speed = _mean([r["items_per_s"] for r in of["how2review"]]) / _mean(
            [r["items_per_s"] for r in of[peer]]
        )
        cpu = _mean([r["total_cpu_ms_per_item"] for r in of["how2review"]]) / _mean(
            [r["server_cpu_ms_per_item"] for r in of[peer]]
        )
        ok = speed >= min_ratio and cpu <= max_cpu_ratio
        lines.append(
            f"ratio: {'OK' if ok else 'FAIL'} ({users} users) how2review {speed:.2f}x {peer}'s "
            f"items/s (at least {min_ratio:g}x) at {cpu:.3f}x its CPU per item, web workers + "
            f"database (at most {max_cpu_ratio:g}x)"
        )
    return lines


def table(headers: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def now() -> float:
    return time.perf_counter()
