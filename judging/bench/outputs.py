"""What ``bench`` writes, in the reference's formats and field order: generation and judgment
records, manifests, the aggregates (``summary.json``, ``by_topic.csv``), the leaderboard CSV
and the terminal tables. Pure: no Django."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from judging.aggregate import how2score
from judging.bench.layout import iter_jsonl, write_json
from judging.stats.bootstrap import bootstrap_proportion_ci

SCHEMA_VERSION_GENERATION = "how2bench.generation.v1"
SCHEMA_VERSION_JUDGMENT = "how2bench.judgment.v1"
BY_TOPIC_COLUMNS = [
    "topic",
    "n_judged",
    "n_with_failures",
    "how2score",
    "how2score_percent",
    "failure_rate",
    "avg_failures_per_example",
]
LEADERBOARD_COLUMNS = [
    "gen_run",
    "generator_model",
    "judge_dir",
    "judge_model",
    "how2score",
    "n_examples",
]
RESULT_COLUMNS = ["run_name", "generator_model", "prompt_style", "how2score", "n_examples"]
# appended after the reference's columns: the How2Score's 95% percentile bootstrap CI (%)
CI_COLUMNS = ["ci_low", "ci_high"]


# --- records --------------------------------------------------------------------------------
def generation_record(
    *,
    generator_id: str,
    prompt_sha256: str,
    example: Any,
    model_completion: str,
    predicted_steps: list[str],
    prompt: str,
    generator: dict[str, str],
) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION_GENERATION,
        "generator_id": generator_id,
        "generation_prompt_sha256": prompt_sha256,
        "source_example_id": example.source_example_id,
        "topic": example.topic,
        "goal": example.goal,
        "steps": list(example.steps),
        "resources": list(example.resources),
        "model_completion": model_completion,
        "predicted_steps": list(predicted_steps),
        "prompt": prompt,
        "generator": dict(generator),
    }


def clean_list(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [str(s).strip() for s in value if str(s).strip()]


def judge_input(rec: dict[str, Any]) -> dict[str, Any] | None:
    """What the reference's judge takes from one generation record (None: not judged, no goal
    or no reference steps)."""
    goal = rec.get("goal", "")
    goal = (goal if isinstance(goal, str) else str(goal)).strip()
    steps = clean_list(rec.get("steps"))
    if not goal or not steps:
        return None
    topic = rec.get("topic", "")
    return {
        "source_example_id": str(rec.get("source_example_id", "")).strip(),
        "topic": topic if isinstance(topic, str) else "",
        "goal": goal,
        "steps": steps,
        "resources": clean_list(rec.get("resources")),
        "predicted_steps": clean_list(rec.get("predicted_steps")),
    }


def normalise_failures(value: Any) -> list[dict[str, Any]]:
    out = []
    for item in value if isinstance(value, list) else []:
        if not isinstance(item, dict):
            continue
        failure = item.get("failure", "")
        out.append(
            {
                "failure": failure if isinstance(failure, str) else str(failure),
                "L1_steps": [int(x) for x in item.get("L1_steps") or []],
                "L2_steps": [int(x) for x in item.get("L2_steps") or []],
            }
        )
    return out


def judgment_record(
    *,
    judge_id: str,
    prompt_sha256: str,
    item: dict[str, Any],
    judge: dict[str, str],
    parse_failed: bool,
    reasoning: str,
    critical_failures: Any,
) -> dict[str, Any]:
    """A ``how2bench.judgment.v1`` record; a parse failure has no reasoning and no failures,
    ``has_failure`` true (as the reference writes it)."""
    failures = [] if parse_failed else normalise_failures(critical_failures)
    return {
        "schema_version": SCHEMA_VERSION_JUDGMENT,
        "judge_id": judge_id,
        "judge_prompt_sha256": prompt_sha256,
        "source_example_id": item["source_example_id"],
        "topic": item["topic"],
        "goal": item["goal"],
        "steps": item["steps"],
        "resources": item["resources"],
        "predicted_steps": item["predicted_steps"],
        "judge": dict(judge),
        "reasoning": "" if parse_failed else (reasoning or ""),
        "critical_failures": failures,
        "has_failure": bool(failures) or parse_failed,
        "n_failures": len(failures),
        "parse_failed": parse_failed,
    }


# --- manifests ------------------------------------------------------------------------------
def git_sha() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def llm_manifest(llm: Any, *, generator: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "backend": llm.backend,
        "provider": llm.provider,
        "model": llm.model,
        "temperature": llm.temperature,
        "max_new_tokens": llm.max_new_tokens,
    }
    if generator:
        out["max_requests_per_minute"] = llm.max_requests_per_minute
        out["max_tokens_per_minute"] = llm.max_tokens_per_minute
    out["reasoning_effort"] = llm.reasoning_effort
    out["vllm_overrides"] = llm.vllm or {}
    if llm.backend != "vllm":
        out["base_url"] = llm.base_url
        out["api_key_env"] = llm.api_key_env  # the variable's name, never the key
    return out


def write_pipeline_manifest(path: Path, *, status: str, config: dict[str, Any]) -> None:
    write_json(
        path,
        {"status": status, "timestamp_unix": time.time(), "git_sha": git_sha(), "config": config},
    )


# --- aggregates -----------------------------------------------------------------------------
def aggregate(records: Iterable[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The reference's summary and by-topic rows: parse failures are left out of the score and
    counted (``n_parse_failed`` appears only when there are some)."""
    summary, rows = how2score(
        {k: r.get(k) for k in ("topic", "has_failure", "n_failures", "parse_failed")}
        for r in records
    )
    summary.pop("avg_generated_tokens", None)
    if not summary.get("n_parse_failed"):
        summary.pop("n_parse_failed", None)
    for row in rows:
        if not row.get("n_parse_failed"):
            row.pop("n_parse_failed", None)
    return summary, rows


def by_topic_csv(rows: list[dict[str, Any]]) -> str:
    columns = list(BY_TOPIC_COLUMNS)
    if any("n_parse_failed" in r for r in rows):
        columns.append("n_parse_failed")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def write_aggregates(*, judgments: Path, summary_path: Path, by_topic_path: Path) -> dict:
    summary, rows = aggregate(iter_jsonl(judgments))
    write_json(summary_path, summary)
    by_topic_path.write_text(by_topic_csv(rows), encoding="utf-8", newline="")
    return summary


# --- leaderboard ----------------------------------------------------------------------------
def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _judge_matches(name: str, judge: str | None) -> bool:
    j = (judge or "").strip()
    return not j or name == j or name.endswith(f"_{j}") or j in name


def leaderboard_rows(root: Path, *, judge: str | None = None) -> list[dict[str, Any]]:
    """One row per (generation run, judge) under ``root`` (the reference's ``--generations-root``)."""
    if not root.is_dir():
        raise FileNotFoundError(f"--generations-root {root}: not a directory")
    rows = []
    for run_dir in sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name):
        model = ""
        for rec in iter_jsonl(run_dir / "generations.jsonl"):
            info = rec.get("generator")
            if isinstance(info, dict) and isinstance(info.get("model"), str):
                model = info["model"].strip()
            break
        judgments_root = run_dir / "judgments"
        if not judgments_root.is_dir():
            continue
        for jdir in sorted(judgments_root.iterdir(), key=lambda p: p.name):
            if not jdir.is_dir() or not _judge_matches(jdir.name, judge):
                continue
            summary = _read_json(jdir / "aggregate" / "summary.json")
            if summary is None and (jdir / "judgments.jsonl").exists():
                summary, _ = aggregate(iter_jsonl(jdir / "judgments.jsonl"))
            if summary is None:
                continue
            manifest = _read_json(jdir / "judge_manifest.json") or {}
            info = manifest.get("judge") if isinstance(manifest.get("judge"), dict) else {}
            try:
                score = float(
                    summary.get("how2score_percent", 100.0 * float(summary.get("how2score", 0)))
                )
            except (TypeError, ValueError):
                score = 0.0
            n = int(summary.get("n_examples") or 0)
            rows.append(
                {
                    "gen_run": run_dir.name,
                    "generator_model": model,
                    "judge_dir": jdir.name,
                    "judge_model": str(info.get("model") or ""),
                    "how2score": f"{max(0.0, min(100.0, score)):.1f}",
                    "n_examples": n,
                    "n_parse_failed": int(summary.get("n_parse_failed") or 0),
                    **how2score_ci(summary, n=n, score=score),
                }
            )
    return rows


def how2score_ci(summary: dict[str, Any], *, n: int, score: float) -> dict[str, str]:
    """``ci_low``/``ci_high`` (percent, one decimal) of the How2Score: a 95% percentile
    bootstrap over the scored examples (1,000 resamples, seed 0), from the summary's
    ``n_with_failures`` (else the count its score implies); empty without scored examples."""
    if n <= 0:
        return {"ci_low": "", "ci_high": ""}
    try:
        failures = int(summary["n_with_failures"])
    except (KeyError, TypeError, ValueError):
        failures = round((1 - max(0.0, min(100.0, score)) / 100) * n)
    ci = bootstrap_proportion_ci(n - max(0, min(n, failures)), n)
    return {"ci_low": f"{100 * ci.low:.1f}", "ci_high": f"{100 * ci.high:.1f}"}


def leaderboard_columns(rows: list[dict[str, Any]]) -> list[str]:
    extra = ["n_parse_failed"] if any(r["n_parse_failed"] for r in rows) else []
    return LEADERBOARD_COLUMNS + extra + CI_COLUMNS


def leaderboard_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=leaderboard_columns(rows), extrasaction="ignore", lineterminator="\r\n"
    )
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def box_table(rows: list[dict[str, Any]], columns: list[str], numeric: set[str]) -> str:
    """A box-drawn table, numbers right-aligned (the reference's terminal tables)."""
    cells = [{c: str(r.get(c, "")) for c in columns} for r in rows]
    widths = {c: max([len(c)] + [len(r[c]) for r in cells]) for c in columns}

    def border(left: str, mid: str, right: str) -> str:
        return left + mid.join("─" * (widths[c] + 2) for c in columns) + right

    def line(r: dict[str, str]) -> str:
        parts = [
            f"{r[c]:>{widths[c]}}" if c in numeric else f"{r[c]:<{widths[c]}}" for c in columns
        ]
        return "│ " + " │ ".join(parts) + " │"

    out = [border("┌", "┬", "┐"), line({c: c for c in columns}), border("├", "┼", "┤")]
    out += [line(r) for r in cells]
    out.append(border("└", "┴", "┘"))
    return "\n".join(out)


def results_table(results: list[dict[str, Any]]) -> str:
    rows = [
        {
            **r,
            "how2score": f"{float(r.get('how2score', 0.0)):.1f}",
            "n_examples": int(r.get("n_examples", 0)),
        }
        for r in results
    ]
    return box_table(rows, RESULT_COLUMNS, {"how2score", "n_examples"})
