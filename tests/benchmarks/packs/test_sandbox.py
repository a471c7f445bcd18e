"""The C++ sandbox of LongProc Pseudocode→Code: real g++, real processes.

Each hostile program is scored wrong with its reason, the test process is unharmed, and the
whole judgement ends within a bound of time.
"""

from __future__ import annotations

import os
import select
import shutil
import socket
import tempfile
import time
from pathlib import Path

import pytest

from benchmarks.packs import bwrap, sandbox
from benchmarks.packs.registry import get_pack
from benchmarks.packs.sandbox import Limits, SandboxUnavailable, run_tests

# lighter than <bits/stdc++.h>: the compiler is the slow part on a shared machine
HEADERS = (
    "".join(
        f"#include <{h}>\n"
        for h in (
            "iostream",
            "vector",
            "string",
            "unistd.h",
            "sys/socket.h",
            "netinet/in.h",
            "arpa/inet.h",
        )
    )
    + "using namespace std;\n"
)
LIMITS = Limits(cpu_seconds=1, wall_seconds=3, memory_mb=256, output_kb=64, processes=4, work_mb=16)
BOUND = 120  # seconds for one compile + run on two busy cores
ADD = [{"input": "1 2\n", "output": "3\n"}, {"input": "40 2", "output": "42"}]


def judge(code: str, tests=None):
    start = time.monotonic()
    result = run_tests(
        code, tests or [{"input": "", "output": "ok\n"}], limits=LIMITS, preamble=HEADERS
    )
    elapsed = time.monotonic() - start
    assert elapsed < BOUND, f"{result.reason} took {elapsed:.0f} s"
    assert os.getpid() > 0 and os.getcwd()  # still here
    return result


def test_correct_program_passes_every_unit_test():
    result = judge("int main(){ long a, b; cin >> a >> b; cout << a + b << endl; }", ADD)
    assert (result.correct, result.reason, result.passed, result.total) == (True, "passed", 2, 2)
    assert [t["reason"] for t in result.tests] == ["passed", "passed"]


def test_many_quick_unit_tests_in_a_row_all_run():
    """Steps follow each other at once: none is refused for the last one's processes."""
    tests = [{"input": f"{i} {i}\n", "output": f"{2 * i}\n"} for i in range(25)]
    result = judge("int main(){ long a, b; cin >> a >> b; cout << a + b << endl; }", tests)
    assert (result.correct, result.reason, result.passed) == (True, "passed", 25), result.detail


def test_wrong_answer_on_the_second_test():
    code = "int main(){ long a, b; cin >> a >> b; cout << (a == 1 ? 3 : 0) << endl; }"
    result = judge(code, ADD)
    assert (result.correct, result.reason, result.passed) == (False, "wrong_answer", 1)
    assert "unit test 2" in result.detail


def test_outputs_compared_token_by_token_by_default():
    assert sandbox.outputs_match("3 4\n", "3   4")
    assert not sandbox.outputs_match("3 4\n", "34")
    assert not sandbox.outputs_match("3\n", "3 \n", "exact")
    assert sandbox.outputs_match("a\nb\n\n", "a  \nb", "lines")
    with pytest.raises(ValueError):
        sandbox.outputs_match("", "", "fuzzy")


def test_compile_error():
    result = judge("int main(){ this is not c++ }")
    assert (result.correct, result.reason) == (False, "compile_error")
    assert "error" in result.detail


def test_no_code_is_wrong_without_compiling():
    result = run_tests(None, ADD)
    assert (result.correct, result.reason) == (False, "no_code")


def test_infinite_loop_hits_the_time_limit():
    result = judge("int main(){ volatile long x = 0; while (true) x++; }")
    assert (result.correct, result.reason) == (False, "time_limit")


def test_sleeping_program_hits_the_wall_clock_limit():
    result = judge('int main(){ sleep(1000); cout << "ok" << endl; }')
    assert (result.correct, result.reason) == (False, "time_limit")
    assert result.tests[0]["wall_seconds"] < LIMITS.wall_seconds + 5


def test_fork_bomb_is_contained():
    code = "int main(){ while (true) fork(); }"
    result = judge(code)
    assert not result.correct
    assert result.reason in ("time_limit", "runtime_error")
    time.sleep(0.5)
    # nothing of the bomb is left: no process runs a binary from a sandbox folder that has been
    # removed (the bomb's; a program of another test running now keeps its folder until it ends)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                exe = os.readlink(f"/proc/{entry}/exe")
            except OSError:
                continue
            left = exe.startswith("/tmp/h2r-sandbox-") and exe.endswith("(deleted)")
            assert not left, exe


def test_unbounded_allocation_hits_the_memory_limit():
    code = "int main(){ vector<vector<long>> v; while (true) v.emplace_back(1 << 20, 7); }"
    result = judge(code)
    assert (result.correct, result.reason) == (False, "memory_limit")


def test_huge_output_hits_the_output_limit():
    result = judge('int main(){ while (true) cout << "0123456789abcdef"; }')
    assert (result.correct, result.reason) == (False, "output_limit")


def test_runtime_error():
    result = judge('int main(){ int *p = nullptr; *p = 1; cout << "ok" << endl; }')
    assert (result.correct, result.reason) == (False, "runtime_error")


def test_socket_to_a_local_listener_fails_and_the_listener_sees_nothing():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    code = (
        "int main(){ int s = socket(AF_INET, SOCK_STREAM, 0);"
        f" sockaddr_in a{{}}; a.sin_family = AF_INET; a.sin_port = htons({port});"
        ' inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);'
        " if (connect(s, (sockaddr*)&a, sizeof a) != 0) return 3;"
        ' write(s, "hello", 5); cout << "ok" << endl; }'
    )
    try:
        result = judge(code)
        readable, _, _ = select.select([listener], [], [], 0.5)
        assert readable == [], "the sandboxed program reached the listener"
    finally:
        listener.close()
    assert (result.correct, result.reason) == (False, "runtime_error")
    assert "exit status 3" in result.detail


ROOT = Path(__file__).resolve().parents[3]  # the project: pyproject.toml, var/
HEADERS_IO = HEADERS.replace(
    "#include <iostream>",
    "#include <iostream>\n#include <cstdio>\n#include <cstring>\n#include <dirent.h>",
)


def _reads(path: str, code: int) -> str:
    """A program that prints the first bytes of ``path`` (or lists it, if a folder), else says
    it could not and exits with ``code``."""
    return (
        f'int main(){{ const char* p = "{path}"; DIR* d = opendir(p);'
        " if (d) { while (dirent* e = readdir(d)) cout << e->d_name << endl; return 0; }"
        ' FILE* f = fopen(p, "r"); if (f) { char b[256] = {0}; fread(b, 1, 255, f);'
        f' cout << b; return 0; }} cerr << "cannot open " << p; return {code}; }}'
    )


@pytest.mark.parametrize(
    ("code", "detail"),
    [
        (_reads(str(ROOT / "pyproject.toml"), 4), "exit status 4: cannot open"),
        (_reads("pyproject.toml", 4), "exit status 4: cannot open"),
        (_reads("/etc/passwd", 5), "exit status 5: cannot open /etc/passwd"),
        (_reads(os.path.expanduser("~"), 6), "exit status 6: cannot open"),
        (_reads("/usr/local", 6), "exit status 6: cannot open /usr/local"),
    ],
    ids=["project-file", "relative-project-file", "host-passwd", "worker-home", "usr-local"],
)
def test_a_program_sees_nothing_of_the_host_but_the_toolchain(code, detail):
    result = run_tests(code, [{"input": "", "output": "ok\n"}], limits=LIMITS, preamble=HEADERS_IO)
    assert (result.correct, result.reason) == (False, "runtime_error"), result.detail
    assert detail in result.detail


def test_a_program_runs_with_an_empty_environment(monkeypatch):
    monkeypatch.setenv("H2R_WORKER_SECRET", "hunter2")
    code = (
        "extern char **environ;"
        " int main(){ int n = 0; for (char **e = environ; *e; ++e, ++n) cout << *e << endl;"
        ' FILE* f = fopen("/proc/1/environ", "r"); char b[4096] = {0};'
        " size_t got = f ? fread(b, 1, sizeof b, f) : 0; cout << string(b, got);"
        ' if (n || got) return 0; cerr << "empty environment"; return 7; }'
    )
    result = run_tests(code, [{"input": "", "output": "ok\n"}], limits=LIMITS, preamble=HEADERS_IO)
    assert (result.correct, result.reason) == (False, "runtime_error"), result.detail
    assert "exit status 7: empty environment" in result.detail


def test_a_program_cannot_write_into_the_projects_var_folder():
    (ROOT / "var").mkdir(exist_ok=True)
    target = ROOT / "var" / "written-by-a-generated-program"
    code = (
        f'int main(){{ FILE* f = fopen("{target}", "w");'
        ' if (!f) { cerr << "cannot write"; return 8; } fputs("pwned", f); fclose(f); }'
    )
    try:
        result = run_tests(code, [{"input": "", "output": ""}], limits=LIMITS, preamble=HEADERS_IO)
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)
    assert (result.correct, result.reason) == (False, "runtime_error"), result.detail
    assert "exit status 8: cannot write" in result.detail


def test_taking_4_gb_hits_the_memory_limit():
    code = "int main(){ size_t n = 4UL << 30; char* p = new char[n]; memset(p, 1, n); cout << p[n - 1]; }"
    result = run_tests(code, [{"input": "", "output": "ok\n"}], limits=LIMITS, preamble=HEADERS_IO)
    assert (result.correct, result.reason) == (False, "memory_limit"), result.detail
    assert "256 MiB" in result.detail


def test_writing_1_gb_to_a_file_hits_the_output_limit():
    code = (
        'int main(){ static char b[1 << 20]; FILE* f = fopen("big", "w");'
        " for (int i = 0; i < 1024; i++) fwrite(b, 1, sizeof b, f); fclose(f); }"
    )
    result = run_tests(code, [{"input": "", "output": ""}], limits=LIMITS, preamble=HEADERS_IO)
    assert (result.correct, result.reason) == (False, "output_limit"), result.detail


def test_writing_1_gb_in_small_files_fills_only_the_working_tmpfs():
    code = (
        "int main(){ static char b[32 << 10]; for (int i = 0; i < 32768; i++) {"
        ' FILE* f = fopen(to_string(i).c_str(), "w"); size_t w = f ? fwrite(b, 1, sizeof b, f) : 0;'
        " if (!f || w != sizeof b || fclose(f) != 0) {"
        ' cerr << "no space left after " << i << " files"; return 9; } } }'
    )
    result = run_tests(code, [{"input": "", "output": ""}], limits=LIMITS, preamble=HEADERS_IO)
    assert (result.correct, result.reason) == (False, "runtime_error"), result.detail
    assert "exit status 9: no space left after" in result.detail
    files = int(result.detail.rsplit("after ", 1)[1].split()[0])
    assert files * 32 <= LIMITS.work_mb * 1024


def test_stderr_is_stored_escaped_and_bounded():
    code = (
        'int main(){ cerr << string("\\0\\x1b[31m<b>", 8) << string(20000, \'x\') << "end";'
        " return 1; }"
    )
    result = run_tests(code, [{"input": "", "output": ""}], limits=LIMITS, preamble=HEADERS_IO)
    assert result.reason == "runtime_error"
    assert "\x00" not in result.detail and "\x1b" not in result.detail
    assert len(result.detail) < bwrap.DETAIL_CHARS + 40
    assert result.detail.endswith("xxend")
    assert bwrap.printable("a\x00b\x1b\n\tc", 100) == "a\\x00b\\x1b\n\tc"
    assert bwrap.printable("0123456789", 4) == "…6789"


@pytest.fixture
def tools_folder():
    """Under the system's temporary folder, readable by all: the step's own uid runs what is
    in it."""
    folder = Path(tempfile.mkdtemp(prefix="h2r-tools-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def _fake_tools(folder, *, bwrap_fails: bool):
    """A tool folder where bwrap is missing, or where it fails as it does when the kernel lets
    nobody make namespaces (the real prlimit and setpriv beside it)."""
    for name in ("prlimit", "setpriv"):
        (folder / name).symlink_to(f"/usr/bin/{name}")
    if bwrap_fails:
        script = folder / "bwrap"
        script.write_text(
            "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because"
            " the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
        )
        script.chmod(0o755)
    return str(folder)


@pytest.mark.parametrize(
    ("bwrap_fails", "reason"),
    [(False, "bwrap is not installed (Debian's bubblewrap package)"),
     (True, "bubblewrap cannot make its namespaces here (bwrap: No permissions")],
)  # fmt: skip
def test_refuses_to_run_without_a_working_bubblewrap(
    tools_folder, monkeypatch, bwrap_fails, reason
):
    monkeypatch.setattr(bwrap, "TOOL_PATH", _fake_tools(tools_folder, bwrap_fails=bwrap_fails))
    bwrap.probe.cache_clear()
    try:
        assert reason in bwrap.probe()
        with pytest.raises(SandboxUnavailable, match="refusing to run generated code unconfined"):
            run_tests("int main(){}", ADD)
    finally:
        monkeypatch.undo()
        bwrap.probe.cache_clear()
    assert bwrap.probe() is None


def test_limits_options_are_checked():
    assert Limits.from_options({"cpu_seconds": 3}).cpu_seconds == 3
    for bad in ({"cpu": 1}, {"memory_mb": 0}, {"wall_seconds": True}):
        with pytest.raises(ValueError):
            Limits.from_options(bad)


def test_the_pack_refuses_bad_options_before_any_code_runs(monkeypatch):
    def must_not_run(*args, **kwargs):
        raise AssertionError("the sandbox ran")

    monkeypatch.setattr("benchmarks.packs.longproc_code.run_tests", must_not_run)
    pack = get_pack("longproc-pseudocode-to-code")
    record = {"id": "spoc-1", "tests": ADD, "prediction": "```cpp\nint main(){}\n```"}
    with pytest.raises(ValueError, match="fallback must be 'none' or 'whole'"):
        pack.score_with(record, {"fallback": "all"})
    for reasons in ("stop", ["stop", 1]):
        with pytest.raises(ValueError, match="terminated_reasons must be a list"):
            pack.score_with(record, {"terminated_reasons": reasons})


def test_pack_scores_the_cpp_block_of_an_answer():
    pack = get_pack("longproc-pseudocode-to-code")
    assert pack.sandboxed
    raw = (
        "<think>translate line by line</think>\n```cpp\nint main(){ string s; cin >> s;"
        " reverse(s.begin(), s.end()); cout << s << endl; }\n```"
    )
    record = {
        "id": "spoc-1",
        "tests": [{"input": "abc\n", "output": "cba\n"}, {"input": "xy", "output": "yx"}],
        "prediction": raw,
        "finish_reason": "stop",
    }
    scored = pack.score_with(record)
    assert scored.metrics == {"correct": 1, "tests_passed": 1.0, "terminated": 1}
    assert scored.breakdown["reason"] == "passed" and scored.breakdown["extracted"]
    wrong = pack.score_with({**record, "prediction": "no code here", "finish_reason": "length"})
    assert wrong.metrics == {"correct": 0, "tests_passed": 0.0, "terminated": 0}
    assert wrong.breakdown["reason"] == "no_code"
    summary = pack.summary([scored.metrics, wrong.metrics])
    assert summary["correct"] == 0.5 and summary["term"] == 0.5 and summary["acc_term"] == 1.0


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_sandbox_queue_worker_scores_a_pseudocode_run(tmp_path, settings):
    """A real worker listening only on the sandbox queue compiles and runs the programs."""
    import uuid

    from django.db import transaction

    from benchmarks.models import Generation, ScoringRun
    from benchmarks.services.scoring_execution import ScoringRunExecutor
    from benchmarks.services.scoring_runs import scoring_run_create
    from config.celery import app
    from tests.support.worker import running_worker, wait_for

    ds, gen = _import_spoc(
        tmp_path,
        {
            "ok": "```cpp\nint main(){ long a, b; cin >> a >> b; cout << a + b << endl; }\n```",
            "loop": "```cpp\nint main(){ while (true) {} }\n```",
        },
    )
    queue = f"sandbox-{uuid.uuid4().hex[:8]}"
    settings.CELERY_SANDBOX_QUEUE = queue
    with running_worker(tmp_path, queue=queue, concurrency=1) as worker:
        app.conf.task_default_queue = f"nobody-{uuid.uuid4().hex[:8]}"  # only routing reaches it
        with transaction.atomic():
            run = scoring_run_create(
                generator=gen, dataset=ds, pack="longproc-pseudocode-to-code", chunk_size=1
            )
        assert ScoringRunExecutor().queue(run) == queue
        wait_for(
            lambda: ScoringRun.objects.get(pk=run.pk).status == "done",
            timeout=240,
            message=f"run done; log:\n{worker.log()[-2000:]}",
        )
    run.refresh_from_db()
    assert (run.n_total, run.n_done, run.n_failed) == (2, 2, 0)
    assert run.summary["correct"] == pytest.approx(0.5)
    scores = {
        g.procedure.source_example_id: g.pack_scores["longproc-pseudocode-to-code"]
        for g in Generation.objects.select_related("procedure")
    }
    assert scores["ok"]["metrics"]["correct"] == 1
    assert scores["loop"]["breakdown"]["reason"] == "time_limit"


def test_a_solve_study_does_not_run_code_in_a_request():
    from annotation.form_types.solve import pack_or_error, score_answer

    pack, error = pack_or_error("longproc-pseudocode-to-code")
    assert pack is None and "runs code" in error
    out = score_answer(
        pack_name="longproc-pseudocode-to-code",
        record={"id": "x", "tests": ADD},
        answer_field="prediction",
        answer="```cpp\nint main(){}\n```",
    )
    assert "runs code" in out["score_error"] and "metrics" not in out


def _import_spoc(tmp_path, programs):
    import io
    import json

    from django.core.management import call_command

    from benchmarks.models import Dataset, Generator

    tests = [{"input": "2 3\n", "output": "5\n"}, {"input": "10 -4\n", "output": "6\n"}]
    path = tmp_path / "spoc.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": key, "tests": tests, "finish_reason": "stop", "prediction": code})
            + "\n"
            for key, code in programs.items()
        )
    )
    call_command(
        "import_pack", "longproc-pseudocode-to-code", str(path), "--dataset", "spoc",
        "--generator", "m", stdout=io.StringIO(),
    )  # fmt: skip
    return Dataset.objects.get(name="spoc"), Generator.objects.get(name="m")


@pytest.mark.django_db
def test_a_scoring_run_fails_with_the_reason_when_bubblewrap_is_missing(
    tmp_path, tools_folder, monkeypatch
):
    from benchmarks.services.scoring_runs import scoring_run_create
    from core.runs import engine

    ds, gen = _import_spoc(tmp_path, {"ok": "```cpp\nint main(){ cout << 5; }\n```"})

    monkeypatch.setattr(bwrap, "TOOL_PATH", _fake_tools(tools_folder, bwrap_fails=False))
    bwrap.probe.cache_clear()
    try:
        run = scoring_run_create(
            generator=gen, dataset=ds, pack="longproc-pseudocode-to-code", start=False
        )
        run = engine.execute_inline(run)
    finally:
        monkeypatch.undo()
        bwrap.probe.cache_clear()
    assert run.status == "failed"
    assert "refusing to run generated code unconfined" in run.error
    assert "bwrap is not installed" in run.error
    assert run.n_done == 0


def test_a_step_bubblewrap_cannot_start_is_the_sandboxs_failure_not_the_programs(
    tools_folder, monkeypatch
):
    # a program that only says what bubblewrap would is judged as a program
    result = judge('int main(){ cerr << "bwrap: Can\'t fork for pid 1"; return 1; }')
    assert (result.correct, result.reason) == (False, "runtime_error")
    assert bwrap.probe() is None  # checked once, before bubblewrap started failing
    monkeypatch.setattr(bwrap, "TOOL_PATH", _fake_tools(tools_folder, bwrap_fails=True))
    with pytest.raises(SandboxUnavailable, match=r"could not start a step \(bwrap: No perm"):
        run_tests("int main(){}", ADD, limits=LIMITS, preamble=HEADERS)
