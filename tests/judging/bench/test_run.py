"""``bench run`` end to end: a suite config with ``backend: openai`` models and evaluator
against the local OpenAI-compatible server, runs worked by a real Celery worker (Redis,
PostgreSQL). Checks the output layout and fields, summary.json and by_topic.csv against numbers
worked out by hand from the scripted replies, resume (ids already in the output files are
never asked again: requests counted at the server), judge-only mode and the leaderboard."""

from __future__ import annotations

import csv
import json
import re
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command

from benchmarks.models import Dataset, GenerationRun, Generator
from judging.bench.config import load_suite_config
from judging.models import Judge, JudgeRun

# id, topic, goal, how many critical failures the scripted judge reports
ITEMS = [
    ("bench-1", "Crime & Law", "File a small claim (bench-1).", 0),
    ("bench-2", "Crime & Law", "Report a lost passport (bench-2).", 2),
    ("bench-3", "Food & Dining", "Bake soda bread (bench-3).", 1),
    ("bench-4", "Food & Dining", "Brew cold tea (bench-4).", 0),
    ("bench-5", "Underwater Basket Weaving", "Weave a reed basket (bench-5).", 0),
]
FAILURES = {ident: n for ident, _, _, n in ITEMS}


def _is_judge(req) -> bool:
    return "critical failures" in req.prompt_text


def responder(req):
    ident = re.search(r"\((bench-\d)\)", req.prompt_text.split("# Input")[-1]) or re.search(
        r"\((bench-\d)\)", req.prompt_text
    )
    ident = ident.group(1)
    if not _is_judge(req):
        return f"1. Gather what {ident} needs.\n2. Finish {ident}."
    failures = [
        {"failure": f"problem {k} of {ident}", "L1_steps": [1], "L2_steps": [k + 1]}
        for k in range(FAILURES[ident])
    ]
    return json.dumps({"reasoning": f"checked {ident}", "critical_failures": failures})


def _suite(tmp_path: Path, base_url: str) -> Path:
    inputs = tmp_path / "how2bench-mini.jsonl"
    inputs.write_text(
        "".join(
            json.dumps(
                {
                    "source_example_id": ident,
                    "topic": topic,
                    "goal": goal,
                    "steps": ["Prepare.", "Do it.", "Check."],
                    "resources": ["hands"],
                }
            )
            + "\n"
            for ident, topic, goal, _ in ITEMS
        )
    )
    path = tmp_path / "suite.yaml"
    path.write_text(
        f"""
out_root: {tmp_path / "out"}
generator_defaults:
  backend: openai
  base_url: {base_url}
models:
  - model: gen-model
    run_name: gen/model v1
    prompt_style: inst
evaluator:
  backend: openai
  base_url: {base_url}
  model: org/judge-model
inputs:
  path: {inputs}
"""
    )
    return path


def _bench(*args) -> str:
    out = StringIO()
    call_command("bench", *args, stdout=out)
    return out.getvalue()


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.worker
def test_bench_run_end_to_end_resume_judge_only_and_leaderboard(
    celery_worker_process, llm_server, tmp_path
):
    llm_server.responder = responder
    suite = _suite(tmp_path, llm_server.base_url)
    config = load_suite_config(suite)
    model = config.models[0]
    run_dir = tmp_path / "out" / f"gen-model-v1_{config.generator_id(model)}"
    judge_dir = run_dir / "judgments" / f"judge-model_{config.judge_id()}"
    assert config.run_dir_name(model) == run_dir.name

    # bench-5 is already in the generations file (an earlier, interrupted run): never asked
    run_dir.mkdir(parents=True)
    earlier = {
        "schema_version": "how2bench.generation.v1",
        "source_example_id": "bench-5",
        "topic": "Underwater Basket Weaving",
        "goal": "Weave a reed basket (bench-5).",
        "steps": ["Prepare.", "Do it.", "Check."],
        "resources": ["hands"],
        "model_completion": "1. Soak the reeds.",
        "predicted_steps": ["Soak the reeds."],
        "generator": {"backend": "openai", "provider": "openai", "model": "gen-model"},
    }
    (run_dir / "generations.jsonl").write_text(json.dumps(earlier) + "\n")

    text = _bench("run", "--config", str(suite))
    gen_requests = [r for r in llm_server.requests if not _is_judge(r)]
    judge_requests = [r for r in llm_server.requests if _is_judge(r)]
    assert len(gen_requests) == 4 and len(judge_requests) == 5
    assert "bench-5" not in " ".join(r.prompt_text for r in gen_requests)
    # the reference's defaults on the wire: temperature 0, 4096 new tokens
    for r in llm_server.requests:
        assert (r.body["temperature"], r.body["max_tokens"]) == (0.0, 4096), r.body
    assert all(r.prompt_text.endswith("Return only valid json.") for r in judge_requests)
    assert "=== how2bench results ===" in text and "60.0" in text

    # --- layout and fields ---------------------------------------------------------------
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "generation_manifest.json",
        "generations.jsonl",
        "judgments",
        "manifest.json",
    ]
    assert sorted(p.name for p in judge_dir.iterdir()) == [
        "aggregate",
        "judge_manifest.json",
        "judgments.jsonl",
    ]
    gens = _lines(run_dir / "generations.jsonl")
    assert [g["source_example_id"] for g in gens] == [f"bench-{i}" for i in (5, 1, 2, 3, 4)]
    g1 = gens[1]
    assert list(g1) == [
        "schema_version",
        "generator_id",
        "generation_prompt_sha256",
        "source_example_id",
        "topic",
        "goal",
        "steps",
        "resources",
        "model_completion",
        "predicted_steps",
        "prompt",
        "generator",
    ]
    assert g1["generator_id"] == config.generator_id(model)
    assert g1["topic"] == "Crime & Law" and g1["predicted_steps"] == [
        "Gather what bench-1 needs.",
        "Finish bench-1.",
    ]
    assert g1["model_completion"] == "1. Gather what bench-1 needs.\n2. Finish bench-1."
    assert "File a small claim (bench-1)." in g1["prompt"] and "Exactly 3 steps" in g1["prompt"]
    assert g1["generator"] == {"backend": "openai", "provider": "openai", "model": "gen-model"}
    manifest = json.loads((run_dir / "generation_manifest.json").read_text())
    assert manifest["generator_id"] == config.generator_id(model)
    assert manifest["generator"]["temperature"] == 0.0
    assert manifest["generator"]["max_new_tokens"] == 4096
    assert manifest["generation"] == {"model_type": "inst"}
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "completed"

    judgments = _lines(judge_dir / "judgments.jsonl")
    assert [j["source_example_id"] for j in judgments] == [f"bench-{i}" for i in range(1, 6)]
    by_id = {j["source_example_id"]: j for j in judgments}
    j2 = by_id["bench-2"]
    assert (j2["n_failures"], j2["has_failure"], j2["parse_failed"]) == (2, True, False)
    assert j2["critical_failures"][1] == {
        "failure": "problem 1 of bench-2",
        "L1_steps": [1],
        "L2_steps": [2],
    }
    assert j2["reasoning"] == "checked bench-2" and j2["judge_id"] == config.judge_id()
    assert j2["judge"] == {"backend": "openai", "provider": "openai", "model": "org/judge-model"}
    assert by_id["bench-5"]["predicted_steps"] == ["Soak the reeds."]  # the earlier generation
    assert by_id["bench-5"]["topic"] == "Underwater Basket Weaving"
    assert by_id["bench-1"]["has_failure"] is False
    jm = json.loads((judge_dir / "judge_manifest.json").read_text())
    assert jm["judge_id"] == config.judge_id() and jm["judge"]["model"] == "org/judge-model"

    # --- aggregates, by hand: 5 judged, 2 with failures (bench-2, bench-3), 3 failures -----
    summary = json.loads((judge_dir / "aggregate" / "summary.json").read_text())
    assert summary == {
        "how2score": 0.6,
        "how2score_percent": 60.0,
        "n_examples": 5,
        "n_with_failures": 2,
        "failure_rate": 0.4,
        "avg_failures_per_example": 0.6,
    }
    rows = list(csv.reader((judge_dir / "aggregate" / "by_topic.csv").open(newline="")))
    assert rows == [
        [
            "topic",
            "n_judged",
            "n_with_failures",
            "how2score",
            "how2score_percent",
            "failure_rate",
            "avg_failures_per_example",
        ],
        ["Crime & Law", "2", "1", "0.5", "50.0", "0.5", "1.0"],
        ["Food & Dining", "2", "1", "0.5", "50.0", "0.5", "0.5"],
        ["Underwater Basket Weaving", "1", "0", "1.0", "100.0", "0.0", "0.0"],
    ]

    # --- the runs are the console's runs ----------------------------------------------------
    generator = Generator.objects.get(name=f"bench:{run_dir.name}")
    gen_run = GenerationRun.objects.get(generator=generator)
    assert (gen_run.status, gen_run.n_done, gen_run.n_total, gen_run.backend) == (
        "done",
        5,
        5,
        "openai",
    )
    assert (gen_run.decoding["temperature"], gen_run.decoding["max_tokens"]) == (0.0, 4096)
    judge = Judge.objects.get(name=f"bench:{judge_dir.name}")
    judge_run = JudgeRun.objects.get(judge=judge)
    assert (judge_run.status, judge_run.n_done) == ("done", 5)
    assert Dataset.objects.filter(name="bench:how2bench-mini.jsonl").count() == 1

    # --- resume: everything is in the files, nothing is asked again --------------------------
    before = len(llm_server.requests)
    _bench("run", "--config", str(suite))
    assert len(llm_server.requests) == before
    assert len(_lines(run_dir / "generations.jsonl")) == 5
    assert len(_lines(judge_dir / "judgments.jsonl")) == 5
    assert GenerationRun.objects.filter(generator=generator).count() == 1  # no new run needed

    # judgments cut short (an interrupted write): the missing ids are written again, from the
    # stored judgments, without a request
    lines = (judge_dir / "judgments.jsonl").read_text().splitlines(keepends=True)
    (judge_dir / "judgments.jsonl").write_text("".join(lines[:3]) + lines[3][:20])
    _bench("run", "--config", str(suite))
    assert len(llm_server.requests) == before
    assert [j["source_example_id"] for j in _lines(judge_dir / "judgments.jsonl")] == [
        "bench-1",
        "bench-2",
        "bench-3",
        "bench-4",
        "bench-5",
    ]
    assert json.loads((judge_dir / "aggregate" / "summary.json").read_text()) == summary

    # --- judge-only (paths.generations, as the reference's judge_existing config) -----------
    rejudge = tmp_path / "rejudge.yaml"
    rejudge.write_text(
        f"""
out_root: {tmp_path / "rejudge"}
paths:
  generations: {run_dir / "generations.jsonl"}
evaluator:
  backend: openai
  base_url: {llm_server.base_url}
  model: org/judge-model
"""
    )
    _bench("judge", "--config", str(rejudge))
    assert len(llm_server.requests) == before  # same judge, same content: already judged
    redir = tmp_path / "rejudge" / "judgments" / judge_dir.name
    assert _lines(redir / "judgments.jsonl") == _lines(judge_dir / "judgments.jsonl")
    assert json.loads((redir / "aggregate" / "summary.json").read_text()) == summary

    # --- leaderboard ----------------------------------------------------------------------
    csv_path = tmp_path / "leaderboard.csv"
    _bench("leaderboard", "--generations-root", str(tmp_path / "out"), "-o", str(csv_path))
    # the reference's columns in its order, then the How2Score's 95% bootstrap CI (%)
    draws = np.random.default_rng(0).binomial(5, 3 / 5, size=1000) / 5
    low, high = np.percentile(draws, [2.5, 97.5]) * 100
    assert csv_path.read_text().splitlines() == [
        "gen_run,generator_model,judge_dir,judge_model,how2score,n_examples,ci_low,ci_high",
        f"{run_dir.name},gen-model,{judge_dir.name},org/judge-model,60.0,5,{low:.1f},{high:.1f}",
    ]
    pretty = _bench("leaderboard", "--generations-root", str(tmp_path / "out"), "--pretty")
    assert pretty.splitlines()[0].startswith("┌") and f"│ {run_dir.name} │" in pretty


@pytest.mark.worker
def test_judge_parse_failures_follow_the_reference_profile(
    celery_worker_process, llm_server, tmp_path
):
    """A fenced reply is a parse failure asked 2 more times (3 calls); ``{}`` is one not asked
    again (1 call); both are written parse-failed and left out of the score, counted."""
    ok = json.dumps({"reasoning": "fine", "critical_failures": []})
    replies = {
        "bench-1": ok,
        "bench-2": "```json\n" + ok + "\n```",
        "bench-3": "{}",
        "bench-4": json.dumps(
            {
                "reasoning": "one",
                "critical_failures": [{"failure": "", "L1_steps": ["3"], "L2_steps": [2.7]}],
            }
        ),
        "bench-5": ok,
    }

    def scripted(req):
        ident = re.findall(r"\((bench-\d)\)", req.prompt_text)[-1]
        return replies[ident] if _is_judge(req) else f"1. Do {ident}."

    llm_server.responder = scripted
    suite = _suite(tmp_path, llm_server.base_url)
    _bench("run", "--config", str(suite))
    config = load_suite_config(suite)
    judge_dir = (
        tmp_path
        / "out"
        / config.run_dir_name(config.models[0])
        / "judgments"
        / config.judge_dir_name()
    )
    calls: dict[str, int] = {}
    for r in llm_server.requests:
        if _is_judge(r):
            ident = re.findall(r"\((bench-\d)\)", r.prompt_text)[-1]
            calls[ident] = calls.get(ident, 0) + 1
    assert calls == {"bench-1": 1, "bench-2": 3, "bench-3": 1, "bench-4": 1, "bench-5": 1}
    by_id = {j["source_example_id"]: j for j in _lines(judge_dir / "judgments.jsonl")}
    assert [by_id[k]["parse_failed"] for k in sorted(by_id)] == [False, True, True, False, False]
    assert by_id["bench-2"]["has_failure"] is True and by_id["bench-2"]["n_failures"] == 0
    assert by_id["bench-4"]["critical_failures"] == [
        {"failure": "", "L1_steps": [3], "L2_steps": [2]}
    ]
    summary = json.loads((judge_dir / "aggregate" / "summary.json").read_text())
    # scored: 3 (bench-1, -4, -5); with failures: bench-4
    assert summary == {
        "how2score": 1.0 - 1 / 3,  # the reference's arithmetic: 1 - failure_rate
        "how2score_percent": 100.0 * (1.0 - 1 / 3),
        "n_examples": 3,
        "n_with_failures": 1,
        "failure_rate": 1 / 3,
        "avg_failures_per_example": 1 / 3,
        "n_parse_failed": 2,
    }
    rows = list(csv.reader((judge_dir / "aggregate" / "by_topic.csv").open(newline="")))
    assert rows[0][-1] == "n_parse_failed"
    assert rows[1] == ["Crime & Law", "1", "0", "1.0", "100.0", "0.0", "0.0", "1"]
    assert rows[2] == ["Food & Dining", "1", "1", "0.0", "0.0", "1.0", "1.0", "1"]
    assert rows[3] == ["Underwater Basket Weaving", "1", "0", "1.0", "100.0", "0.0", "0.0", ""]
