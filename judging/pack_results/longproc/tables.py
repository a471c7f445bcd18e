"""LongProc's results (seed 001, notes §1.2): the score (100 × mean) per task × level (0.5K /
2K / 8K) with each level's average over the tasks available at that level (its Table 3),
termination rate and accuracy among terminated generations per task and level (Table 5), and
the level average against the output length (the score-against-length curve). Pure.

Each LongProc task is its own pack (``longproc-countdown``, ``longproc-travel`` …); an
instance's score is its pack's first metric (``correct``; ``f1`` for HTML→TSV). Its level is
the item's ``level`` field (``0.5K``, ``2K``, ``8K``; ``500``/``2000``/``8000`` are read too);
an item without one is counted in a note and left out of the level tables. Termination is
the scorer's ``terminated`` (from ``finish_reason``; unknown when the generation has none),
summarised as the pack's :func:`benchmarks.packs.longproc.termination_summary` does.

A level average is the unweighted mean of the task scores at that level (the paper: 5 tasks at
0.5K, 6 at 2K, 5 at 8K); its CI resamples instances within each task.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from benchmarks.packs.registry import get_pack
from judging.pack_results.common import (
    Bootstrap,
    Instance,
    comparison_table,
    curve,
)

TASKS = {
    "html-to-tsv": "HTML→TSV",
    "pseudocode-to-code": "Pseudocode→Code",
    "path-traversal": "Path Traversal",
    "tom-tracking": "ToM Tracking",
    "countdown": "Countdown",
    "travel": "Travel Planning",
}
LEVELS = {"0.5K": 500.0, "2K": 2000.0, "8K": 8000.0}
_LEVEL_ALIASES = {"0.5k": "0.5K", "500": "0.5K", "2k": "2K", "2000": "2K", "8k": "8K", "8000": "8K"}


def task_of(pack: str) -> str:
    return pack.removeprefix("longproc-")


def task_label(task: str) -> str:
    return TASKS.get(task, task)


def level_of(value: Any) -> str | None:
    """``0.5K`` / ``2K`` / ``8K`` from an item's ``level`` field, or None."""
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    if text in LEVELS:
        return text
    return _LEVEL_ALIASES.get(text.lower().removesuffix(".0"))


def score_of(inst: Instance) -> float | None:
    """The instance's score, 0–1: its pack's first metric (None when not a number)."""
    value = inst.metrics.get(get_pack(inst.pack).metrics[0])
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _task_order(tasks: set[str]) -> list[str]:
    return [t for t in TASKS if t in tasks] + sorted(tasks - set(TASKS))


def _task_rank(task: str) -> tuple[int, str]:
    order = list(TASKS)
    return (order.index(task) if task in order else len(order), task)


def build(instances: Sequence[Instance], boot: Bootstrap) -> dict[str, Any]:
    # cells[generator][level][task] = {item: score}
    cells: dict[str, dict[str, dict[str, dict]]] = defaultdict(lambda: defaultdict(dict))
    term: dict[tuple[str, str], dict[str, dict[str, dict]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(dict))
    )
    no_level = no_score = 0
    no_level_by_run: dict[int | None, int] = defaultdict(int)
    tabled_runs: set[int | None] = set()
    for inst in instances:
        score = score_of(inst)
        level = level_of(inst.attrs.get("level"))
        if score is None:
            no_score += 1
            continue
        if level is None:
            no_level += 1
            no_level_by_run[inst.run] += 1
            continue
        tabled_runs.add(inst.run)
        task = task_of(inst.pack)
        cells[inst.generator][level].setdefault(task, {})[inst.item] = score
        done = inst.metrics.get("terminated")
        group = term[(task, level)][inst.generator]
        group["acc"].setdefault("all", {})[inst.item] = score
        if done in (0, 1) and not isinstance(done, bool):
            group["term"].setdefault("all", {})[inst.item] = float(done)
            if done == 1:
                group["acc_term"].setdefault("all", {})[inst.item] = score
    levels = [lv for lv in LEVELS if any(lv in cells[g] for g in cells)]
    generators = sorted(cells)
    tables = []
    if levels:
        tables.append(
            comparison_table(
                table_id="levels",
                title="Average score per level (Table 3)",
                caption=(
                    "Each level's average: the unweighted mean of the task scores (100 × mean) "
                    "over the tasks with instances at that level; 95% bootstrap CI resampling "
                    "instances within each task; n = instances."
                ),
                columns=[(lv, lv) for lv in levels],
                data={g: {lv: cells[g].get(lv, {}) for lv in levels} for g in generators},
                rank_by=levels[-1],
                boot=boot,
                scale=100.0,
                digits=1,
            )
        )
    notes = []
    for lv in levels:
        tasks = _task_order({t for g in generators for t in cells[g].get(lv, {})})
        columns = [(t, task_label(t)) for t in tasks] + [("avg", "Average")]
        data = {
            g: {
                **{t: {"all": cells[g].get(lv, {}).get(t, {})} for t in tasks},
                "avg": cells[g].get(lv, {}),
            }
            for g in generators
        }
        tables.append(
            comparison_table(
                table_id=f"level-{lv}",
                title=f"Score per task at {lv}",
                caption=(
                    f"100 × mean score per task at {lv} and their average over the tasks "
                    "available; 95% bootstrap CI over instances; n = instances."
                ),
                columns=columns,
                data=data,
                rank_by="avg",
                boot=boot,
                scale=100.0,
                digits=1,
            )
        )
        notes.append(f"{lv}: average over {', '.join(task_label(t) for t in tasks)}.")
    for task, lv in sorted(term, key=lambda k: (_task_rank(k[0]), list(LEVELS).index(k[1]))):
        groups = term[(task, lv)]
        if not any(groups[g].get("term") for g in groups):
            continue
        tables.append(
            comparison_table(
                table_id=f"termination-{task}-{lv}",
                title=f"Termination, {task_label(task)} {lv} (Table 5)",
                caption=(
                    "acc: score over every generation; term: share of generations that ended "
                    "by themselves within the budget (finish_reason known); acc/term: score "
                    "among those; 100 × mean, 95% bootstrap CI; n = instances."
                ),
                columns=[("acc", "acc"), ("term", "term"), ("acc_term", "acc/term")],
                data={g: groups[g] for g in sorted(groups)},
                rank_by="acc",
                boot=boot,
                scale=100.0,
                digits=1,
            )
        )
    curves = [
        curve(
            curve_id="score-length",
            title="Average score against output length",
            x_label="output length level (tokens, log scale)",
            y_label="level average (100 × mean)",
            data={g: {LEVELS[lv]: cells[g][lv] for lv in cells[g]} for g in generators},
            boot=boot,
            x_names={v: k for k, v in LEVELS.items()},
            scale=100.0,
            log_x=True,
            digits=1,
        )
    ]
    # a run whose every scored instance has no level is in no table: the page does not list it
    # among the runs shown, and says why here
    untabled = {
        run: f"its {n} scored instance(s) have no level (0.5K, 2K or 8K), so it is in no table"
        for run, n in no_level_by_run.items()
        if run is not None and run not in tabled_runs
    }
    if no_level:
        runs = "".join(f"; run #{run}: all {no_level_by_run[run]}" for run in sorted(untabled))
        notes.append(
            f"{no_level} scored instance(s) have no level (0.5K, 2K or 8K) and are in no "
            f"table{runs}."
        )
    if no_score:
        notes.append(f"{no_score} instance(s) without a score left out.")
    return {
        "tables": tables,
        "curves": curves,
        "notes": notes,
        "headline": "levels",
        "runs_in_no_table": untabled,
    }
