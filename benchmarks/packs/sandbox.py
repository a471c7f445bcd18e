"""Compile and run untrusted C++ (LongProc Pseudocode→Code). Pure: no Django.

Every step (the compiler, then each run of the program on one unit test) is a separate
process started as ``prlimit … -- bwrap … -- program`` (bubblewrap, Debian's ``bubblewrap``;
:mod:`benchmarks.packs.bwrap`):

- **nothing of the host but the toolchain**: the root is empty except ``/usr/bin``,
  ``/usr/lib``, ``/usr/lib64``, ``/usr/libexec`` and ``/usr/include`` mounted read-only
  (:data:`~benchmarks.packs.bwrap.TOOLCHAIN`), a fresh ``/proc`` and a minimal ``/dev``. No ``/etc``, no ``/home``, no
  ``/usr/local``, not the project, its ``var/`` or the worker's home;
- **a fresh tmpfs as the working directory** (``/work``, :attr:`Limits.work_mb` in size): the
  compiler sees its source read-only there and writes the binary to an empty folder, the only
  host path a step can write to; a test run sees only the binary, read-only;
- **an empty environment** (``--clearenv``, then ``env -i``; the compiler alone gets
  ``PATH=/usr/bin:/bin``);
- **its own namespaces**: user, PID (a process of the program sees only its own; when the step
  ends, the whole namespace is killed), network (only a loopback device that is down: no
  address, not even 127.0.0.1, can be reached), IPC, UTS, cgroup; a new session; no
  capabilities. A worker that is root first drops to a uid of the step's own (``setpriv``), so
  the process limit counts only the step's processes;
- **limits** (``prlimit``, set before bubblewrap starts, so no ``preexec_fn`` runs in a worker
  that has threads): CPU seconds, address space, file size (stdout and stderr go to files the
  worker opened, so the output cap is ``RLIMIT_FSIZE``; at most that much is read back),
  processes, no core files; and a **wall-clock timeout** that kills the step.

Where ``bwrap`` (or ``prlimit``) is missing or cannot make its namespaces, :func:`probe` says
why and :func:`run_tests` raises :class:`SandboxUnavailable`: nothing runs with less
confinement. A program that breaks a limit is *wrong* with a reason (:data:`REASONS`), never an
exception of the caller; what it wrote to stderr is kept escaped
(:func:`~benchmarks.packs.bwrap.printable`) and cut.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.packs.bwrap import (
    DETAIL_CHARS,
    Mount,
    SandboxUnavailable,
    StepResult,
    printable,
    probe,
    require_sandbox,
    run_step,
    run_uid,
)

__all__ = ["SandboxUnavailable", "probe", "run_tests"]

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

COMPILE_LOG_CHARS = 2000


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 2  # per unit test
    wall_seconds: float = 5.0  # per unit test
    memory_mb: int = 512  # address space
    output_kb: int = 1024  # stdout (and stderr) each, and any one file
    processes: int = 4  # threads count too
    work_mb: int = 64  # the tmpfs working directory
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
        return "output_limit", f"wrote more than {limits.output_kb} KiB (to stdout or a file)"
    if rc == -signal.SIGXCPU or (
        rc == -signal.SIGKILL and step.cpu_seconds >= 0.9 * limits.cpu_seconds
    ):
        return "time_limit", f"over the CPU limit of {limits.cpu_seconds} s"
    if rc != 0 and ("bad_alloc" in step.stderr or "Cannot allocate memory" in step.stderr):
        return "memory_limit", f"over the memory limit of {limits.memory_mb} MiB"
    if rc != 0:
        how = f"signal {-rc}" if rc is not None and rc < 0 else f"exit status {rc}"
        tail = printable(step.stderr.strip(), DETAIL_CHARS)
        return "runtime_error", f"{how}: {tail}".rstrip(": ")
    return None


def compile_cpp(source: str, workdir: str, limits: Limits, uid: int | None) -> tuple[bool, str]:
    """``main.cpp`` compiled in a fresh tmpfs; the binary is written to ``workdir/out``, the one
    host folder the compiler can write to."""
    src, out = os.path.join(workdir, "main.cpp"), os.path.join(workdir, "out")
    with open(src, "w", encoding="utf-8") as fh:
        fh.write(source)
    os.mkdir(out, 0o700)
    if uid is not None:
        for path in (workdir, src, out):
            os.chown(path, uid, uid)
    step = run_step(
        ["/usr/bin/g++", "-std=c++17", "-O2", "-pipe", "-o", "/out/main", "main.cpp"],
        workdir,
        mounts=[Mount(src, "/work/main.cpp"), Mount(out, "/out", writable=True)],
        env={"PATH": "/usr/bin:/bin"},
        cpu=limits.compile_cpu_seconds,
        wall=limits.compile_wall_seconds,
        memory_mb=limits.compile_memory_mb,
        output_bytes=256 * 1024,
        nproc=limits.compile_processes,
        work_mb=max(limits.work_mb, 256),
        uid=uid,
    )
    if uid is not None:  # each test run has a uid of its own: it may pass, not list
        os.chmod(workdir, 0o711)
        os.chmod(out, 0o711)
    ok = step.returncode == 0 and not step.timed_out and os.path.isfile(os.path.join(out, "main"))
    log = "timed out" if step.timed_out else printable(step.stderr.strip(), COMPILE_LOG_CHARS)
    return ok, log


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
        ok, log = compile_cpp(preamble + code, workdir, limits, run_uid())
        if not ok:
            return CodeResult(False, "compile_error", 0, len(tests), log)
        binary = Mount(os.path.join(workdir, "out", "main"), "/work/main")
        results: list[dict[str, Any]] = []
        first: tuple[str, str] | None = None
        for i, test in enumerate(tests):
            step = run_step(
                ["/work/main"],
                workdir,
                mounts=[binary],
                stdin=test["input"],
                cpu=limits.cpu_seconds,
                wall=limits.wall_seconds,
                memory_mb=limits.memory_mb,
                output_bytes=limits.output_kb * 1024,
                nproc=limits.processes,
                work_mb=limits.work_mb,
                # a fresh uid per step: the last step's processes, torn down with its PID
                # namespace, may still count against the process cap for a moment
                uid=run_uid(),
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
