"""The six stages of How2Mine (seed 000 §3.2) and their prompt files. Pure Python, no Django."""

from __future__ import annotations

from functools import cache
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"

# (number, key, label, prompt file or None for the non-LLM heuristics filter)
STAGES: tuple[tuple[int, str, str, str | None], ...] = (
    (1, "procedures", "Procedure extraction", "extract_procedures.txt"),
    (2, "prefilter", "Heuristics filter", None),
    (3, "filter", "LLM filter", "filter.txt"),
    (4, "postprocess", "Goal/steps rewrite", "postprocess.txt"),
    (5, "resources", "Resource extraction", "extract_resources.txt"),
    (6, "final_filter", "Final validation", "final_filter.txt"),
)
STAGE_SHORT = {
    "procedures": "extraction",
    "prefilter": "heuristics",
    "filter": "LLM filter",
    "postprocess": "rewrite",
    "resources": "resources",
    "final_filter": "final check",
}
STAGE_KEYS = tuple(s[1] for s in STAGES)
STAGE_NUMBERS = {s[1]: s[0] for s in STAGES}
STAGE_LABELS = {s[1]: s[2] for s in STAGES}
LLM_STAGES = tuple(s[1] for s in STAGES if s[3])
ALL_STAGES = tuple(s[0] for s in STAGES)


def parse_stages(text: str | list[int] | tuple[int, ...] | None) -> list[int]:
    """``"2,3"`` or ``[2, 3]`` -> ``[2, 3]``; empty means all six. Raises ValueError naming the bad part."""
    if text is None or text == "" or text == []:
        return list(ALL_STAGES)
    parts = text.split(",") if isinstance(text, str) else list(text)
    out: set[int] = set()
    for part in parts:
        try:
            n = int(str(part).strip())
        except ValueError:
            raise ValueError(f"stages: {part!r} is not a stage number (1-6)") from None
        if n not in ALL_STAGES:
            raise ValueError(f"stages: {n} is not a stage number (1-6)")
        out.add(n)
    return sorted(out)


@cache
def prompt_template(key: str) -> str:
    for _, k, _, filename in STAGES:
        if k == key and filename:
            return (PROMPTS_DIR / filename).read_text(encoding="utf-8")
    raise KeyError(f"stage {key!r} has no prompt")


def steps_text(steps: list[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))


def resources_text(resources: list[str]) -> str:
    return "\n".join(f"- {r}" for r in resources)


def render_prompt(
    key: str,
    *,
    document: str = "",
    goal: str = "",
    steps: list[str] | None = None,
    resources: list[str] | None = None,
) -> str:
    return prompt_template(key).format(
        document=document,
        goal=goal,
        steps=steps_text(steps or []),
        resources=resources_text(resources or []),
    )
