"""LongProc Pseudocode→Code (notes §1.2): the generated C++ is run for real.

A record is ``{"id", "tests": [{"input", "output"}, …], "prediction": raw, "finish_reason"?}``
(the SPoC program's unit tests, stdin → expected stdout). The answer is the last closed
```` ```cpp ```` block of the raw text (``<think>`` kept, as the paper); the standard headers are
prepended (the LongProc prompt says they are already included). The program is **correct iff it
compiles and passes every unit test**, in :mod:`benchmarks.packs.sandbox` (a process per step,
an empty directory, no network, CPU / memory / output / process limits, a wall-clock timeout).
The breakdown names why a wrong program is wrong (``reason``: compile_error, time_limit,
memory_limit, output_limit, runtime_error, wrong_answer, no_code).

The pack is ``sandboxed``: scoring runs with it go to the ``sandbox`` Celery queue
(``CELERY_SANDBOX_QUEUE``), so operators can run them on machines of their own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.packs.longproc import (
    TERMINATED_REASONS,
    add_terminated,
    answer_or_whole,
    check_terminated_reasons,
    summary_with_termination,
)
from benchmarks.packs.longproc_answers import extract_fenced
from benchmarks.packs.registry import (
    PackScorer,
    RecordError,
    Scored,
    register,
    require_field,
)
from benchmarks.packs.sandbox import PREAMBLE, Limits, run_tests

MAX_TESTS = 200
MAX_TEST_CHARS = 1_000_000


def _tests(record: Mapping[str, Any]) -> list[dict[str, str]]:
    tests = require_field(record, "tests", list, 'an array of {"input", "output"} objects')
    if not tests or len(tests) > MAX_TESTS:
        raise RecordError(f"must hold 1 to {MAX_TESTS} unit tests", field="tests")
    out = []
    for test in tests:
        if not (
            isinstance(test, dict)
            and isinstance(test.get("input"), str)
            and isinstance(test.get("output"), str)
        ):
            raise RecordError('every unit test must be {"input": str, "output": str}', "tests")
        if len(test["input"]) + len(test["output"]) > MAX_TEST_CHARS:
            raise RecordError(f"a unit test is over {MAX_TEST_CHARS} characters", "tests")
        out.append({"input": test["input"], "output": test["output"]})
    return out


def score_pseudocode(
    record: Mapping[str, Any],
    *,
    occurrence: str = "last",
    think: str = "keep",
    fallback: str = "none",
    compare: str = "tokens",
    preamble: str = PREAMBLE,
    limits: Mapping[str, Any] | None = None,
    terminated_reasons: Sequence[str] = TERMINATED_REASONS,
) -> Scored:
    """→ ``correct`` (1 iff it compiles and passes every unit test) and ``tests_passed`` (the
    share of unit tests passed before the first failure, out of all)."""
    if not isinstance(preamble, str):
        raise ValueError("preamble must be a string")
    box_limits = Limits.from_options(limits)
    tests = _tests(record)
    check_terminated_reasons(terminated_reasons)  # before the sandbox runs
    raw = require_field(record, "prediction", str, "a string")
    code = answer_or_whole(
        extract_fenced(raw, "cpp", occurrence=occurrence, think=think), raw, fallback
    )
    result = run_tests(code, tests, limits=box_limits, compare=compare, preamble=preamble)
    metrics: dict[str, Any] = {
        "correct": int(result.correct),
        "tests_passed": result.passed / result.total if result.total else 0.0,
    }
    add_terminated(metrics, record, terminated_reasons)
    breakdown = {"extracted": code is not None, **result.as_dict()}
    breakdown.pop("correct")
    return Scored(metrics, breakdown)


register(
    PackScorer(
        name="longproc-pseudocode-to-code",
        metrics=("correct", "tests_passed", "terminated"),
        score=score_pseudocode,
        description=(
            'LongProc pseudocode-to-code: in {"id", "tests": [{"input", "output"}], '
            '"prediction"}; compiles the ```cpp block and runs every unit test in the sandbox'
        ),
        summarize=summary_with_termination(("correct", "tests_passed")),
        options={
            "occurrence": "last",
            "think": "keep",
            "fallback": "none",
            "compare": "tokens",
            "preamble": PREAMBLE,
            "limits": {},
            "terminated_reasons": list(TERMINATED_REASONS),
        },
        sandboxed=True,
    )
)
