"""Fixtures for generation-run tests: a small dataset, a generator, and a responder for the
local OpenAI-compatible test server that answers the H.2 prompt with numbered steps."""

from __future__ import annotations

import re

import pytest

from core.runs import engine
from tests.support.llm_fixtures import llm_server  # noqa: F401

_N = re.compile(r"(?:Exactly )?(\d+) steps to achieve the goal using the given resources:\n$")
_GOAL = re.compile(
    r"Goal:\n(.*)\n\nResources:\n[^\n]*\n\n(?:Exactly )?\d+ steps to achieve the goal using the given resources:\n$"
)


def prompt_n_and_goal(prompt: str) -> tuple[int, str]:
    return int(_N.search(prompt).group(1)), _GOAL.search(prompt).group(1)


def steps_responder(req) -> dict:
    """Answer with exactly n numbered steps naming the goal; base prompts get a runaway
    continuation after a blank line (the server ignores ``stop``, as some do)."""
    n, goal = prompt_n_and_goal(req.prompt_text if req.kind == "completions" else req.last_message)
    body = "\n".join(f"{i}. Do part {i} of {goal}." for i in range(1, n + 1))
    if req.kind == "completions":
        body += "\n\nGoal:\nSomething else\n\nResources:\n[]\n\nExactly 2 steps:\n1. x\n2. y"
    else:
        body = "Here are the steps:\n" + body
    return {"text": body, "prompt_tokens": 100, "completion_tokens": 10 * n}


def drive(run):
    """Work the run's chunks in-process (on_commit callbacks do not fire inside a test
    transaction, so nothing reaches Celery)."""
    return engine.execute_inline(run)


@pytest.fixture
def small_dataset(db):
    from benchmarks.models import Dataset, Procedure, Topic

    dataset = Dataset.objects.create(name="gen-test", version="v1")
    topics = list(Topic.objects.order_by("position")[:2])
    procedures = []
    for i in range(5):
        procedures.append(
            Procedure.objects.create(
                dataset=dataset,
                source_example_id=f"ex-{i}",
                topic=topics[i % 2],
                goal=f"Goal number {i}",
                resources=["kettle", f"item {i}"],
                steps=[f"Reference step {j} for {i}." for j in range(1, 3 + (i % 2) + 1)],
            )
        )
    return dataset, topics, procedures


@pytest.fixture
def generator(db):
    from benchmarks.models import Generator

    return Generator.objects.create(name="test-gen")
