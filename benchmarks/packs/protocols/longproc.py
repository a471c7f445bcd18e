"""LongProc's generation protocol (seed 001, notes §1.1–1.2): the task prompts of Appendix H,
greedy decoding, a budget of the item's level plus a buffer (16K for reasoning models), the
answer extracted by the task's tags with the thinking kept, the finish reason recorded. Pure.

Prompts (``benchmarks/prompts/longproc_*.txt``): HTML→TSV, Pseudocode→Code, Path Traversal,
Countdown and Travel Planning are Prompts H.1–H.5 of the paper (H.2's ```` ```cpp ```` markers
as the prompt means them; the printed text lost the backticks). The paper prints no prompt for ToM
Tracking (Appendix H has none; only the data point of Example F.4): ``longproc_tom_tracking.txt``
is written for this app from F.4's task text and target output format.

The item fields each prompt reads (besides the scorer's own fields):

- ``html-to-tsv``: ``html``, ``task_topic``, ``target_information`` (the properties, and the
  "Only extract the rows where …" condition of the Filtering setting), ``tsv_header``;
- ``pseudocode-to-code``: ``pseudocode`` (the SPoC program's lines, a string or an array of
  lines); the answer is the last ```` ```cpp ```` block, which its scorer compiles and tests;
- ``path-traversal``: ``context`` (the "X is a lively city…" lines), ``src_city``, ``dst_city``;
- ``tom-tracking``: ``story``, ``question``, ``few_shot`` (optional);
- ``countdown``: ``numbers``, ``target``, ``few_shot`` (the examples with their search
  procedure; the item's, else the run option ``few_shot``);
- ``travel-planning``: ``problem`` (the constraints in English), or the scorer's structured
  ``total_days`` / ``cities`` / ``flights`` written out in Natural Plan's wording
  (:func:`travel_problem_text`, which the scorer's own parser reads back); ``few_shot``.

An item holding ``prompt`` (already rendered, e.g. from the benchmark's release) is sent as is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.packs.longproc_answers import extract_fenced, extract_tagged, extract_tom_trace
from benchmarks.packs.longproc_validators import cities_from
from benchmarks.packs.protocols.base import (
    Protocol,
    ProtocolAnswer,
    ProtocolError,
    ProtocolRequest,
    item_text,
    prompt_text,
)
from core.templating import fill_template

# task → (scorer pack, prompt file)
TASKS: dict[str, tuple[str, str]] = {
    "html-to-tsv": ("longproc-html-to-tsv", "longproc_html_to_tsv.txt"),
    "pseudocode-to-code": ("longproc-pseudocode-to-code", "longproc_pseudocode_to_code.txt"),
    "path-traversal": ("longproc-path-traversal", "longproc_path_traversal.txt"),
    "tom-tracking": ("longproc-tom-tracking", "longproc_tom_tracking.txt"),
    "countdown": ("longproc-countdown", "longproc_countdown.txt"),
    "travel": ("longproc-travel", "longproc_travel_planning.txt"),
}
LEVELS = {"0.5k": 500, "2k": 2000, "8k": 8000}
DEFAULT_BUFFER = 1000  # "level + a 0.5–1K buffer" (notes §1.2): the top of the range
REASONING_BUDGET = 16384  # "reasoning models get 16K"
NO_EXAMPLES = "(no examples given)"


def level_tokens(level: Any) -> int:
    """A level's output length in tokens: ``0.5k`` / ``2k`` / ``8k`` (any case, ``K``), or
    a positive integer of tokens."""
    if isinstance(level, int) and not isinstance(level, bool) and level > 0:
        return level
    if isinstance(level, str):
        key = level.strip().lower().removesuffix(" tokens")
        if key in LEVELS:
            return LEVELS[key]
        if key.isdigit() and int(key) > 0:
            return int(key)
    raise ProtocolError(
        f"must be one of {', '.join(LEVELS)} or a positive number of tokens, got {level!r}",
        field="level",
    )


def longproc_budget(level: Any, *, buffer: int = DEFAULT_BUFFER, reasoning: bool = False) -> int:
    """max_tokens for an item of ``level``: level + buffer (instruct models), or 16K for
    reasoning models whatever the level (§4: they need room for their thinking)."""
    if reasoning:
        return REASONING_BUDGET
    return level_tokens(level) + buffer


def travel_problem_text(total_days: int, cities: Sequence[Mapping[str, Any]], flights) -> str:
    """The structured travel constraints in Natural Plan's English (F.6), which
    :func:`benchmarks.packs.longproc_validators.parse_travel_problem` reads back."""
    parsed = cities_from(list(cities))
    lines = [
        f"You plan to visit {len(parsed)} European cities for {total_days} days in total. "
        "You only take direct flights to commute between cities."
    ]
    for city in parsed:
        lines.append(f"You want to spend {city.days} days in {city.name}.")
        if city.fixed:
            lines.append(
                f"You have a fixed schedule in {city.name} between day {city.fixed[0]} "
                f"and day {city.fixed[1]}."
            )
    pairs = ", ".join(f"from {a} to {b}" for a, b in flights)
    return (
        " ".join(lines)
        + f"\n\nHere are the cities that have direct flights:\n{pairs}.\n\n"
        + f"Find a trip plan of visiting the cities for {total_days} days by taking direct "
        "flights to commute between them."
    )


def _few_shot(item: Mapping[str, Any], default: str | None) -> str:
    value = item.get("few_shot")
    if isinstance(value, list):
        value = "\n\n".join(str(v) for v in value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return (default or "").strip() or NO_EXAMPLES


def longproc_prompt(
    record: Mapping[str, Any], task: str, level: Any = None, *, few_shot: str | None = None
) -> str:
    """The Appendix H prompt of ``task`` for one item (``record``: the item's fields, module
    docstring). ``level`` is checked (it sets the budget, not the text); ``few_shot`` is the
    examples used when the item has none. Pure: the LongProc segment analysis reuses it."""
    if task not in TASKS:
        raise ProtocolError(f"unknown LongProc task {task!r}; use one of {', '.join(TASKS)}")
    if level is not None:
        level_tokens(level)
    if isinstance(record.get("prompt"), str) and record["prompt"].strip():
        return record["prompt"]
    template = prompt_text(TASKS[task][1])
    if task == "html-to-tsv":
        values = {
            k: item_text(record, k)
            for k in ("html", "task_topic", "target_information", "tsv_header")
        }
    elif task == "pseudocode-to-code":
        lines = record.get("pseudocode")
        if isinstance(lines, list) and lines and all(isinstance(x, str) for x in lines):
            record = {**record, "pseudocode": "\n".join(lines)}
        values = {"pseudocode": item_text(record, "pseudocode")}
    elif task == "path-traversal":
        values = {k: item_text(record, k) for k in ("context", "src_city", "dst_city")}
    elif task == "tom-tracking":
        values = {
            "story": item_text(record, "story"),
            "question": item_text(record, "question"),
            "few_shot": _few_shot(record, few_shot),
        }
    elif task == "countdown":
        numbers, target = record.get("numbers"), record.get("target")
        if not isinstance(numbers, list) or not numbers:
            raise ProtocolError("must be a non-empty array of integers", field="numbers")
        if isinstance(target, bool) or not isinstance(target, int):
            raise ProtocolError("must be an integer", field="target")
        values = {
            "numbers": ", ".join(str(n) for n in numbers),
            "target": str(target),
            "few_shot": _few_shot(record, few_shot),
        }
    else:  # travel
        problem = item_text(record, "problem", required=False)
        if problem is None:
            try:
                problem = travel_problem_text(
                    record.get("total_days"),
                    record.get("cities") or [],
                    record.get("flights") or [],
                )
            except (ValueError, TypeError) as exc:
                raise ProtocolError(
                    f"no 'problem' text and the structured constraints cannot be written: {exc}",
                    field="problem",
                ) from None
        values = {"problem": problem, "few_shot": _few_shot(record, few_shot)}
    return fill_template(template, values)


def longproc_answer(task: str, raw: str) -> str | None:
    """The tagged answer of a reply, as the task's scorer extracts it (the last block; the
    ``<think>`` content kept, as the paper)."""
    if task == "html-to-tsv":
        return extract_fenced(raw, "tsv")
    if task == "pseudocode-to-code":
        return extract_fenced(raw, "cpp")
    if task == "path-traversal":
        return extract_tagged(raw, "Route")
    if task == "tom-tracking":
        return extract_tom_trace(raw)
    if task == "countdown":
        return extract_tagged(raw, "Solution")
    return extract_tagged(raw, "Plan")


_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.I)


class LongProcProtocol(Protocol):
    defaults = {"level": None, "buffer": DEFAULT_BUFFER, "reasoning": False, "few_shot": None}
    option_types = {
        "level": (str, int, type(None)),
        "buffer": (int,),
        "reasoning": (bool,),
        "few_shot": (str, type(None)),
    }

    def __init__(self, task: str) -> None:
        self.task = task
        self.pack, prompt_file = TASKS[task]
        self.name = self.pack
        self.label = f"LongProc {task} (App. H prompt, tags, level + buffer)"
        self.prompt_files = (prompt_file,)

    def options(self, options: Any) -> dict[str, Any]:
        out = super().options(options)
        if out["level"] is not None:
            try:
                level_tokens(out["level"])
            except ProtocolError as exc:
                raise ProtocolError(f"level {exc.message}", field="protocol_options") from None
        if out["buffer"] < 0:
            raise ProtocolError("buffer must be 0 or more tokens", field="protocol_options")
        return out

    def level_of(self, item: Mapping[str, Any], options: Mapping[str, Any]) -> Any:
        level = item.get("level", options.get("level"))
        if level is None:
            raise ProtocolError(
                "is required (0.5k, 2k or 8k) on the item or as the run option 'level'",
                field="level",
            )
        return level

    def request(self, item: Mapping[str, Any], options: Mapping[str, Any]) -> ProtocolRequest:
        level = self.level_of(item, options)
        prompt = longproc_prompt(item, self.task, level, few_shot=options.get("few_shot"))
        budget = longproc_budget(
            level, buffer=int(options["buffer"]), reasoning=bool(options["reasoning"])
        )
        return ProtocolRequest(
            messages=[{"role": "user", "content": prompt}], max_tokens=budget, temperature=0.0
        )

    def answer(
        self, raw: str, item: Mapping[str, Any], options: Mapping[str, Any]
    ) -> ProtocolAnswer:
        extracted = longproc_answer(self.task, raw)
        shown = extracted if extracted is not None else raw
        steps = [line.strip() for line in shown.splitlines() if line.strip()][:200]
        level = item.get("level", options.get("level"))
        return ProtocolAnswer(
            extracted=extracted,
            steps=steps,
            payload={
                "protocol": {
                    "name": self.name,
                    "extracted": extracted,
                    "thinking": bool(_THINK_OPEN.search(raw or "")),
                    "level": level,
                }
            },
        )
