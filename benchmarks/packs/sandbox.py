"""Compile and run untrusted C++ (LongProc Pseudocode→Code). Pure: no Django.

Every step (the compiler, then each run of the program on one unit test) is a separate process
in an empty temporary directory, confined in ``preexec_fn`` before it starts:

- **no network**: a new network namespace (``unshare(CLONE_NEWNET)``; a worker that is not root
  first makes a user namespace, as ``unshare --net --map-root-user`` does). It holds only a
  loopback device that is down, so no address, not even 127.0.0.1, can be reached. Where no
  namespace can be made, :func:`probe` says why and :func:`run_tests` raises
  :class:`SandboxUnavailable` instead of running anything unconfined;
- **its own user** when the worker is root: a uid nobody else has (root ignores the process
  cap), and every process of that uid is killed once the step ends;
- **limits** (``resource.setrlimit``): CPU seconds, address space, file size (stdout and stderr
  go to files in the directory, so the output cap is ``RLIMIT_FSIZE``; at most that much is read
  back), processes (``RLIMIT_NPROC``), no core files; and a **wall-clock timeout** that kills the
  process group.

A program that breaks a limit is *wrong* with a reason (:data:`REASONS`), never an exception of
the caller.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000

# Why a program is wrong (the first failing unit test's), or "passed".
REASONS = (
    "passed",
    "no_code",
    "compile_error",
    "time_limit",
    "memory_limit",
    "output_limit",
    "runtime_error",
    "wrong_answer",
)

# The LongProc prompt says the standard headers are already included.
PREAMBLE = "#include <bits/stdc++.h>\nusing namespace std;\n"


class SandboxUnavailable(RuntimeError):
    """No network namespace can be made here: the sandbox refuses to run code unconfined."""


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 2  # per unit test
    wall_seconds: float = 5.0  # per unit test
    memory_mb: int = 512  # address space
    output_kb: int = 1024  # stdout (and stderr) each
    processes: int = 4  # threads count too
    compile_cpu_seconds: int = 30
    compile_wall_seconds: float = 60.0
    compile_memory_mb: int = 2048
    compile_processes: int = 32

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | None) -> Limits:
        values = {}
        for name, value in (options or {}).items():
            if name not in cls.__dataclass_fields__:
                raise ValueError(f"unknown sandbox limit {name}")
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"sandbox limit {name} must be a positive number")
            values[name] = value
        return cls(**values)


@dataclass
class StepResult:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    output_exceeded: bool
    cpu_seconds: float
    wall_seconds: float


@dataclass
class CodeResult:
    correct: bool
    reason: str
    passed: int = 0
    total: int = 0
    detail: str = ""
    tests: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "correct": self.correct,
            "reason": self.reason,
            "passed": self.passed,
            "total": self.total,
            "detail": self.detail,
            "tests": self.tests,
        }


# --- confinement --------------------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
_uids = itertools.count()


def _unshare(flags: int) -> None:
    if _libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


def _run_uid() -> int | None:
    """A uid of its own for one step when the worker is root (no passwd entry needed)."""
    if os.geteuid() != 0:
        return None
    return 1_500_000 + (os.getpid() % 20_000) * 100 + next(_uids) % 100


def _tasks_of(uid: int) -> int:
    """Threads of every process of ``uid`` (what ``RLIMIT_NPROC`` counts)."""
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status") as fh:
                    fields = dict(line.split(":", 1) for line in fh if ":" in line)
                if fields.get("Uid", "").split()[:1] == [str(uid)]:
                    count += int(fields.get("Threads", "1").strip() or 1)
            except (OSError, ValueError):
                continue
    return count


def _preexec(*, cpu: int, memory_mb: int, fsize: int, nproc: int, uid: int | None):
    def confine() -> None:
        os.setsid()
        if uid is None:
            _unshare(CLONE_NEWUSER | CLONE_NEWNET)
        else:
            _unshare(CLONE_NEWNET)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        memory = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)

    return confine


def _kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` (children that left the process group)."""
    for _ in range(3):
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/status") as fh:
                    line = next((x for x in fh if x.startswith("Uid:")), "")
                if line.split()[1:2] == [str(uid)]:
                    os.kill(int(entry), signal.SIGKILL)
                    found = True
            except (OSError, IndexError):
                continue
        if not found:
            return
        time.sleep(0.05)


def _read_capped(path: str, cap: int) -> tuple[str, bool]:
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            data = fh.read(cap)
    except OSError:
        return "", False
    return data.decode("utf-8", errors="replace"), size >= cap


def run_step(
    argv: Sequence[str],
    workdir: str,
    *,
    stdin: str = "",
    cpu: int,
    wall: float,
    memory_mb: int,
    output_bytes: int,
    nproc: int,
) -> StepResult:
    """Run ``argv`` confined in ``workdir``; stdout and stderr are read back up to
    ``output_bytes`` each (a program that writes that much is stopped by ``RLIMIT_FSIZE``)."""
    uid = _run_uid()
    if uid is not None:
        os.chown(workdir, uid, uid)
        limit_nproc = nproc
    else:  # not root: the cap counts every process of the worker's user too
        limit_nproc = _tasks_of(os.getuid()) + nproc
    tag = next(_uids)
    paths = {n: os.path.join(workdir, f".{n}-{tag}") for n in ("in", "out", "err")}
    with open(paths["in"], "w", encoding="utf-8") as fh:
        fh.write(stdin)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": workdir}
    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    timed_out = False
    with (
        open(paths["in"], "rb") as fin,
        open(paths["out"], "wb") as fout,
        open(paths["err"], "wb") as ferr,
    ):
        proc = subprocess.Popen(
            list(argv),
            cwd=workdir,
            stdin=fin,
            stdout=fout,
            stderr=ferr,
            env=env,
            close_fds=True,
            preexec_fn=_preexec(
                cpu=cpu, memory_mb=memory_mb, fsize=output_bytes + 1, nproc=limit_nproc, uid=uid
            ),
        )
        try:
            proc.wait(timeout=wall)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            if uid is not None:
                _kill_uid(uid)
            proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out, out_over = _read_capped(paths["out"], output_bytes + 1)
    err, err_over = _read_capped(paths["err"], output_bytes + 1)
    return StepResult(
        returncode=proc.returncode,
        stdout=out,
        stderr=err,
        timed_out=timed_out,
        output_exceeded=out_over or err_over,
        cpu_seconds=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        wall_seconds=time.monotonic() - start,
    )


@lru_cache(maxsize=1)
def probe() -> str | None:
    """None when a confined step can run here (checked once per process), else why not."""
    if os.name != "posix" or not os.path.isdir("/proc"):
        return "the sandbox needs Linux"
    workdir = tempfile.mkdtemp(prefix="h2r-probe-")
    try:
        step = run_step(
            ["/bin/sh", "-c", "cat /proc/net/dev"],
            workdir,
            cpu=5,
            wall=10,
            memory_mb=256,
            output_bytes=65536,
            nproc=8,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"no network namespace can be made here ({exc})"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if step.returncode != 0:
        return f"no network namespace can be made here ({step.stderr.strip()[:200]})"
    devices = [line.split(":")[0].strip() for line in step.stdout.splitlines()[2:] if ":" in line]
    if any(d != "lo" for d in devices):
        return f"the new network namespace still sees devices {devices}"
    return None


def require_sandbox() -> None:
    reason = probe()
    if reason is not None:
        raise SandboxUnavailable(f"refusing to run generated code unconfined: {reason}")


# --- compile and judge --------------------------------------------------------------------------


def outputs_match(expected: str, actual: str, compare: str = "tokens") -> bool:
    """``tokens`` (default): the same whitespace-separated tokens; ``lines``: the same lines
    with trailing spaces and trailing blank lines ignored; ``exact``: byte-for-byte."""
    if compare == "tokens":
        return expected.split() == actual.split()
    if compare == "lines":
        strip = [x.rstrip() for x in expected.rstrip().splitlines()]
        return strip == [x.rstrip() for x in actual.rstrip().splitlines()]
    if compare == "exact":
        return expected == actual
    raise ValueError("compare must be 'tokens', 'lines' or 'exact'")


def _failure(step: StepResult, limits: Limits) -> tuple[str, str] | None:
    if step.timed_out:
        return "time_limit", f"over the wall-clock limit of {limits.wall_seconds} s"
    rc = step.returncode
    if step.output_exceeded or rc == -signal.SIGXFSZ:
        return "output_limit", f"wrote more than {limits.output_kb} KiB"
    if rc == -signal.SIGXCPU or (
        rc == -signal.SIGKILL and step.cpu_seconds >= 0.9 * limits.cpu_seconds
    ):
        return "time_limit", f"over the CPU limit of {limits.cpu_seconds} s"
    if rc != 0 and ("bad_alloc" in step.stderr or "Cannot allocate memory" in step.stderr):
        return "memory_limit", f"over the memory limit of {limits.memory_mb} MiB"
    if rc != 0:
        how = f"signal {-rc}" if rc is not None and rc < 0 else f"exit status {rc}"
        return "runtime_error", f"{how}: {step.stderr.strip()[-300:]}".rstrip(": ")
    return None


def compile_cpp(source: str, workdir: str, limits: Limits) -> tuple[bool, str]:
    with open(os.path.join(workdir, "main.cpp"), "w", encoding="utf-8") as fh:
        fh.write(source)
    step = run_step(
        ["g++", "-std=c++17", "-O2", "-pipe", "-o", "main", "main.cpp"],
        workdir,
        cpu=limits.compile_cpu_seconds,
        wall=limits.compile_wall_seconds,
        memory_mb=limits.compile_memory_mb,
        output_bytes=256 * 1024,
        nproc=limits.compile_processes,
    )
    ok = (
        step.returncode == 0
        and not step.timed_out
        and os.path.exists(os.path.join(workdir, "main"))
    )
    return ok, ("timed out" if step.timed_out else step.stderr.strip()[-2000:])


def run_tests(
    code: str | None,
    tests: Sequence[Mapping[str, str]],
    *,
    limits: Limits | None = None,
    compare: str = "tokens",
    preamble: str = PREAMBLE,
    keep_going: bool = False,
) -> CodeResult:
    """Compile ``preamble + code`` and run it on each ``{"input", "output"}`` test: correct iff
    it compiles and every test's stdout matches (:func:`outputs_match`). Stops at the first
    failing test unless ``keep_going``."""
    limits = limits or Limits()
    outputs_match("", "", compare)  # checks the option
    if code is None or not code.strip():
        return CodeResult(False, "no_code", 0, len(tests), "no ```cpp block in the answer")
    require_sandbox()
    workdir = tempfile.mkdtemp(prefix="h2r-sandbox-")
    try:
        ok, log = compile_cpp(preamble + code, workdir, limits)
        if not ok:
            return CodeResult(False, "compile_error", 0, len(tests), log)
        results: list[dict[str, Any]] = []
        first: tuple[str, str] | None = None
        for i, test in enumerate(tests):
            step = run_step(
                ["./main"],
                workdir,
                stdin=test["input"],
                cpu=limits.cpu_seconds,
                wall=limits.wall_seconds,
                memory_mb=limits.memory_mb,
                output_bytes=limits.output_kb * 1024,
                nproc=limits.processes,
            )
            failure = _failure(step, limits)
            if failure is None and not outputs_match(test["output"], step.stdout, compare):
                failure = ("wrong_answer", f"unit test {i + 1}: output differs")
            results.append(
                {
                    "test": i + 1,
                    "reason": failure[0] if failure else "passed",
                    "cpu_seconds": round(step.cpu_seconds, 3),
                    "wall_seconds": round(step.wall_seconds, 3),
                }
            )
            if failure and first is None:
                first = failure
                if not keep_going:
                    break
        passed = sum(r["reason"] == "passed" for r in results)
        if first is None:
            return CodeResult(True, "passed", passed, len(tests), "", results)
        return CodeResult(False, first[0], passed, len(tests), first[1], results)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
