"""One confined step under bubblewrap (the sandbox of :mod:`benchmarks.packs.sandbox`). Pure.

A step is ``prlimit … -- [setpriv …] -- bwrap … -- env -i … program``: limits set before
bubblewrap starts (no ``preexec_fn`` in a worker that has threads), the toolchain read-only, a
fresh tmpfs as the working directory, every namespace of its own, an empty environment. Where the
tools are missing or cannot confine, :func:`probe` says why and :func:`require_sandbox` raises.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

# What a step sees of the host, read-only (those that exist here).
TOOLCHAIN = ("/usr/bin", "/usr/lib", "/usr/lib64", "/usr/libexec", "/usr/include")
# Where the worker looks for bwrap, prlimit and setpriv (a module value, so it can be changed).
TOOL_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
DETAIL_CHARS = 300  # of a program's stderr kept in a result


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot confine here: the sandbox refuses to run code."""


class StepNotStarted(SandboxUnavailable):
    """bubblewrap failed before the program ran (it never reported the program's pid)."""

    def __init__(self, why: str) -> None:
        super().__init__(f"bubblewrap could not start a step ({why})")
        self.why = why


@dataclass
class StepResult:
    returncode: int | None  # negative: the signal that ended the program
    stdout: str
    stderr: str
    timed_out: bool
    output_exceeded: bool
    cpu_seconds: float
    wall_seconds: float


@dataclass(frozen=True)
class Mount:
    """A host path a step sees at ``inside`` (read-only unless ``writable``)."""

    host: str
    inside: str
    writable: bool = False


def printable(text: str, limit: int) -> str:
    """``text`` safe to store and show: control characters (NUL included, newline and tab
    kept) written as ``\\xNN``, at most ``limit`` characters kept from its end (``…`` marks
    the cut)."""
    cut = len(text) > limit
    text = text[-limit:]
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\n\t" or ch.isprintable():
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    escaped = "".join(out)
    if len(escaped) > limit:
        escaped, cut = escaped[-limit:], True
    return ("…" + escaped) if cut else escaped


_uids = itertools.count()
_tags = itertools.count()
# bubblewrap's own processes in a step: the monitor outside and the reaper (PID 1) inside.
BWRAP_PROCESSES = 2


def _tool(name: str) -> str | None:
    return shutil.which(name, path=TOOL_PATH)


def run_uid() -> int | None:
    """A uid of its own for one step when the worker is root (no passwd entry needed): one of
    1000 per worker process, in turn, so a uid comes back only long after its step ended."""
    if os.geteuid() != 0:
        return None
    return 1_500_000 + (os.getpid() % 20_000) * 1000 + next(_uids) % 1000


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


def confined_argv(
    argv: Sequence[str],
    *,
    mounts: Sequence[Mount] = (),
    env: Mapping[str, str] | None = None,
    cpu: int,
    memory_mb: int,
    fsize: int,
    nproc: int,
    work_mb: int,
    uid: int | None,
    status_fd: int | None = None,
) -> list[str]:
    """The command line of one confined step: ``prlimit`` [``setpriv``] ``bwrap`` ``argv``."""
    bwrap, prlimit = _tool("bwrap"), _tool("prlimit")
    setpriv = _tool("setpriv") if uid is not None else "-"
    missing = [
        n for n, p in (("bwrap", bwrap), ("prlimit", prlimit), ("setpriv", setpriv)) if not p
    ]
    if missing:
        raise SandboxUnavailable(f"{', '.join(missing)} not installed")
    memory = memory_mb * 1024 * 1024
    cmd = [
        prlimit,
        f"--cpu={cpu}:{cpu + 1}",
        f"--as={memory}",
        f"--fsize={fsize}",
        f"--nproc={nproc + BWRAP_PROCESSES}",
        "--core=0",
        "--",
    ]
    if uid is not None:
        cmd += [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    cmd += [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if status_fd is not None:  # bubblewrap writes {"child-pid": …} there once the step started
        cmd += ["--json-status-fd", str(status_fd)]
    bound = [path for path in TOOLCHAIN if os.path.isdir(path)]
    for path in bound:
        cmd += ["--ro-bind", path, path]
    for path in bound:  # /bin → usr/bin as on a merged-/usr system
        cmd += ["--symlink", path.lstrip("/"), "/" + path.rsplit("/", 1)[1]]
    size = str(work_mb * 1024 * 1024)
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    cmd += ["--size", size, "--tmpfs", "/work", "--size", size, "--tmpfs", "/tmp"]
    for mount in mounts:
        cmd += ["--bind" if mount.writable else "--ro-bind", mount.host, mount.inside]
    # bubblewrap sets PWD after --clearenv; env -i leaves the program nothing but ``env``
    cmd += ["--chdir", "/work", "--clearenv", "--", "/usr/bin/env", "-i"]
    return [*cmd, *(f"{key}={value}" for key, value in (env or {}).items()), *argv]


def _read_capped(path: str, cap: int) -> tuple[str, bool]:
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            data = fh.read(cap)
    except OSError:
        return "", False
    return data.decode("utf-8", errors="replace"), size >= cap


def _exit_code(status: int) -> int:
    """bubblewrap exits 128 + N when the program died of signal N: reported as -N."""
    code = os.waitstatus_to_exitcode(status)
    if 128 < code < 128 + signal.NSIG:
        return 128 - code
    return code


def run_step(
    argv: Sequence[str],
    iodir: str,
    *,
    mounts: Sequence[Mount] = (),
    env: Mapping[str, str] | None = None,
    stdin: str = "",
    cpu: int,
    wall: float,
    memory_mb: int,
    output_bytes: int,
    nproc: int,
    work_mb: int = 64,
    uid: int | None = None,
) -> StepResult:
    """Run ``argv`` confined (:func:`confined_argv`); its stdin, stdout and stderr are files in
    ``iodir``, which the step cannot see. stdout and stderr are read back up to
    ``output_bytes`` each (a program that writes more is stopped by ``RLIMIT_FSIZE``)."""
    limit_nproc = nproc if uid is not None else _tasks_of(os.getuid()) + nproc
    tag = next(_tags)
    paths = {n: os.path.join(iodir, f".{n}-{tag}") for n in ("in", "out", "err", "status")}
    with open(paths["in"], "w", encoding="utf-8") as fh:
        fh.write(stdin)
    start = time.monotonic()
    timed_out = False
    pid, status, usage = 0, None, None
    with (
        open(paths["in"], "rb") as fin,
        open(paths["out"], "wb") as fout,
        open(paths["err"], "wb") as ferr,
        open(paths["status"], "wb") as fstatus,
    ):
        cmd = confined_argv(
            argv,
            mounts=mounts,
            env=env,
            cpu=cpu,
            memory_mb=memory_mb,
            fsize=output_bytes + 1,
            nproc=limit_nproc,
            work_mb=work_mb,
            uid=uid,
            status_fd=fstatus.fileno(),
        )
        proc = subprocess.Popen(
            cmd, stdin=fin, stdout=fout, stderr=ferr, env={}, close_fds=True,
            pass_fds=(fstatus.fileno(),), start_new_session=True,
        )  # fmt: skip
        try:
            pause = 0.005
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() - start >= wall:
                    timed_out = True
                    break
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
        finally:
            if not pid:  # the whole PID namespace dies with bubblewrap's monitor
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = _exit_code(status)
    out, out_over = _read_capped(paths["out"], output_bytes + 1)
    err, err_over = _read_capped(paths["err"], output_bytes + 1)
    started, _ = _read_capped(paths["status"], 4096)
    if '"child-pid"' not in started and not timed_out:
        # bubblewrap failed before the program ran: the sandbox's failure, not the program's
        raise StepNotStarted(printable(err.strip(), DETAIL_CHARS) or "no message")
    return StepResult(
        returncode=proc.returncode,
        stdout=out,
        stderr=err,
        timed_out=timed_out,
        output_exceeded=out_over or err_over,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        wall_seconds=time.monotonic() - start,
    )


# What the root of a step holds: the toolchain's folders, their /bin-style links, and the rest.
_EXPECTED_ROOT = {"dev", "proc", "tmp", "usr", "work"}


@lru_cache(maxsize=1)
def probe() -> str | None:
    """None when a confined step can run here (checked once per process), else why not."""
    if os.name != "posix" or not os.path.isdir("/proc"):
        return "the sandbox needs Linux"
    for name, package in (("bwrap", "bubblewrap"), ("prlimit", "util-linux")) + (
        (("setpriv", "util-linux"),) if os.geteuid() == 0 else ()
    ):
        if _tool(name) is None:
            return f"{name} is not installed (Debian's {package} package) in {TOOL_PATH}"
    if not os.access("/usr/bin/g++", os.X_OK):
        return "g++ is not installed in /usr/bin (Debian's g++ package)"
    iodir = tempfile.mkdtemp(prefix="h2r-probe-")
    uid = run_uid()
    try:
        if uid is not None:
            os.chown(iodir, uid, uid)
        step = run_step(
            ["/bin/sh", "-c", "cat /proc/net/dev && echo --- && ls -a /"],
            iodir,
            cpu=5,
            wall=20,
            memory_mb=256,
            output_bytes=65536,
            nproc=8,
            uid=uid,
        )
    except StepNotStarted as exc:
        return f"bubblewrap cannot make its namespaces here ({exc.why})"
    except (OSError, subprocess.SubprocessError, SandboxUnavailable) as exc:
        return f"bubblewrap cannot start here ({exc})"
    finally:
        shutil.rmtree(iodir, ignore_errors=True)
    if step.returncode != 0 or step.timed_out:
        why = printable(step.stderr.strip(), DETAIL_CHARS) or f"exit status {step.returncode}"
        return f"bubblewrap cannot make its namespaces here ({why})"
    net, _, root = step.stdout.partition("---\n")
    devices = [line.split(":")[0].strip() for line in net.splitlines()[2:] if ":" in line]
    if any(d != "lo" for d in devices):
        return f"the new network namespace still sees devices {devices}"
    links = {path.rsplit("/", 1)[1] for path in TOOLCHAIN if os.path.isdir(path)}
    extra = set(root.split()) - {".", ".."} - _EXPECTED_ROOT - links
    if extra:
        return f"the sandbox's root shows more than the toolchain: {sorted(extra)}"
    return None


def require_sandbox() -> None:
    reason = probe()
    if reason is not None:
        raise SandboxUnavailable(f"refusing to run generated code unconfined: {reason}")
