"""The reference's output formats, checked against numbers worked out by hand: summary.json
and by_topic.csv (parse failures left out of the score and counted), judgment records, the
leaderboard CSV."""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from judging.bench import outputs


def _rec(topic, n_failures, parse_failed=False):
    return {
        "topic": topic,
        "n_failures": n_failures,
        "has_failure": n_failures > 0 or parse_failed,
        "parse_failed": parse_failed,
    }


RECORDS = [
    _rec("Health", 0),
    _rec("Health", 2),
    _rec("Health", 0, parse_failed=True),
    _rec("Food & Dining", 1),
    _rec("Food & Dining", 0),
    _rec("Food & Dining", 0),
    _rec("Food & Dining", 3),
]


def test_summary_leaves_parse_failures_out_and_counts_them():
    summary, _ = outputs.aggregate(RECORDS)
    # scored: 6 (7 minus one parse failure); with failures: 3; failures: 2 + 1 + 3 = 6
    assert summary == {
        "how2score": 0.5,
        "how2score_percent": 50.0,
        "n_examples": 6,
        "n_with_failures": 3,
        "failure_rate": 0.5,
        "avg_failures_per_example": 1.0,
        "n_parse_failed": 1,
    }
    assert list(summary) == [
        "how2score",
        "how2score_percent",
        "n_examples",
        "n_with_failures",
        "failure_rate",
        "avg_failures_per_example",
        "n_parse_failed",
    ]
    clean, _ = outputs.aggregate([r for r in RECORDS if not r["parse_failed"]])
    assert "n_parse_failed" not in clean


def test_by_topic_csv_columns_and_numbers():
    _, rows = outputs.aggregate(RECORDS)
    text = outputs.by_topic_csv(rows)
    assert text.startswith(
        "topic,n_judged,n_with_failures,how2score,how2score_percent,failure_rate,"
        "avg_failures_per_example,n_parse_failed\r\n"
    )
    got = list(csv.DictReader(io.StringIO(text)))
    assert [r["topic"] for r in got] == ["Food & Dining", "Health"]  # sorted by the topic text
    food, health = got
    assert (food["n_judged"], food["n_with_failures"], food["how2score"]) == ("4", "2", "0.5")
    assert (food["how2score_percent"], food["failure_rate"]) == ("50.0", "0.5")
    assert food["avg_failures_per_example"] == "1.0" and food["n_parse_failed"] == ""
    assert (health["n_judged"], health["n_with_failures"], health["how2score"]) == ("2", "1", "0.5")
    assert health["avg_failures_per_example"] == "1.0" and health["n_parse_failed"] == "1"
    no_pf = outputs.by_topic_csv(outputs.aggregate(RECORDS[:2])[1])
    assert no_pf.splitlines()[0].endswith("avg_failures_per_example")
    assert no_pf.splitlines()[1] == "Health,2,1,0.5,50.0,0.5,1.0"


def test_judgment_record_fields_and_parse_failure():
    item = {
        "source_example_id": "x",
        "topic": "Health",
        "goal": "g",
        "steps": ["a"],
        "resources": [],
        "predicted_steps": ["b"],
    }
    judge = {"backend": "openai", "provider": "openai", "model": "m"}
    ok = outputs.judgment_record(
        judge_id="j",
        prompt_sha256="s",
        item=item,
        judge=judge,
        parse_failed=False,
        reasoning="r",
        critical_failures=[{"failure": "f", "L1_steps": [1], "L2_steps": ["2"]}, "junk"],
    )
    assert list(ok) == [
        "schema_version",
        "judge_id",
        "judge_prompt_sha256",
        "source_example_id",
        "topic",
        "goal",
        "steps",
        "resources",
        "predicted_steps",
        "judge",
        "reasoning",
        "critical_failures",
        "has_failure",
        "n_failures",
        "parse_failed",
    ]
    assert ok["critical_failures"] == [{"failure": "f", "L1_steps": [1], "L2_steps": [2]}]
    assert (ok["has_failure"], ok["n_failures"], ok["schema_version"]) == (
        True,
        1,
        "how2bench.judgment.v1",
    )
    failed = outputs.judgment_record(
        judge_id="j",
        prompt_sha256="s",
        item=item,
        judge=judge,
        parse_failed=True,
        reasoning="half an answer",
        critical_failures=[{"failure": "f"}],
    )
    assert (failed["reasoning"], failed["critical_failures"]) == ("", [])
    assert (failed["has_failure"], failed["n_failures"], failed["parse_failed"]) == (True, 0, True)


def test_leaderboard_rows_from_an_output_tree(tmp_path):
    for run, model, score, n, pf in (
        ("b-run_123", "m-b", 60.0, 5, 0),
        ("a-run_456", "m-a", 100.4, 3, 2),
    ):
        run_dir = tmp_path / run
        jdir = run_dir / "judgments" / "judge_abc"
        (jdir / "aggregate").mkdir(parents=True)
        (run_dir / "generations.jsonl").write_text(
            json.dumps({"generator": {"model": model}}) + "\n"
        )
        summary = {"how2score_percent": score, "n_examples": n}
        if pf:
            summary["n_parse_failed"] = pf
        (jdir / "aggregate" / "summary.json").write_text(json.dumps(summary))
        (jdir / "judge_manifest.json").write_text(json.dumps({"judge": {"model": "jm"}}))
    (tmp_path / "no-judgments").mkdir()
    rows = outputs.leaderboard_rows(tmp_path)
    text = outputs.leaderboard_csv(rows)
    # the reference's columns, in its order, then the How2Score's 95% bootstrap CI (%)
    draws = np.random.default_rng(0).binomial(5, 3 / 5, size=1000) / 5
    low, high = np.percentile(draws, [2.5, 97.5]) * 100
    assert text.splitlines() == [
        "gen_run,generator_model,judge_dir,judge_model,how2score,n_examples,n_parse_failed,"
        "ci_low,ci_high",
        "a-run_456,m-a,judge_abc,jm,100.0,3,2,100.0,100.0",  # clamped to 100
        f"b-run_123,m-b,judge_abc,jm,60.0,5,0,{low:.1f},{high:.1f}",
    ]
    assert low < 60.0 < high
    assert outputs.leaderboard_rows(tmp_path, judge="other") == []
    assert len(outputs.leaderboard_rows(tmp_path, judge="abc")) == 2
