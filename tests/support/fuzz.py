"""A bounded schemathesis run over the whole API: every operation of the OpenAPI
schema the app generates, fuzzed with each role's token against a running server, checked for
``not_a_server_error`` and ``status_code_conformance``. Used by tests/core/test_api_fuzz.py (the
CI-sized run) and scripts/reliability_table.py (the README figures).

Failures are collected, not raised per case (no shrinking: the run stays bounded); each is
reported with its operation, role, status and a curl line to reproduce it."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import schemathesis
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hsettings
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import status_code_conformance

CHECKS = [not_a_server_error, status_code_conformance]


@dataclass
class FuzzReport:
    operations: int = 0
    cases: int = 0
    statuses: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)


def api_schema_dict() -> dict:
    """The OpenAPI document exactly as /api/schema/ serves it (drf-spectacular)."""
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def run_fuzz(
    *,
    base_url: str,
    tokens: dict[str, str],
    max_examples: int = 10,
    seed: int = 19,
    time_budget_s: float = 600,
) -> FuzzReport:
    schema = schemathesis.openapi.from_dict(api_schema_dict())
    report = FuzzReport()
    started = time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()
        report.operations += 1
        if time.monotonic() - started > time_budget_s:
            report.failures.append(f"time budget spent before {operation.label}")
            break
        for role, token in tokens.items():
            _fuzz_operation(operation, role, token, base_url, max_examples, seed, report)
    report.seconds = time.monotonic() - started
    return report


def _fuzz_operation(operation, role, token, base_url, max_examples, seed, report) -> None:
    headers = {"Authorization": f"Token {token}"}

    @hsettings(
        max_examples=max_examples,
        deadline=None,
        derandomize=False,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(case=operation.as_strategy())
    def one(case):
        report.cases += 1
        response = case.call(base_url=base_url, headers=headers, timeout=30)
        report.statuses[response.status_code] += 1
        try:
            case.validate_response(response, checks=CHECKS)
        except FailureGroup as exc:  # keep it and go on (bounded: no shrinking)
            titles = "; ".join(sorted({str(f).strip().splitlines()[0] for f in exc.exceptions}))
            report.failures.append(
                f"{operation.label} [{role}] → {response.status_code}: {titles} :: "
                f"{case.as_curl_command()}"
            )

    import random

    random.seed(seed)
    one()
