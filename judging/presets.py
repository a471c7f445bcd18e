"""Judge presets: ready-made judge configurations, selectable in the console
(Judging › Judges › *Add How2Judge (preset)*, i.e. ``/admin/judging/judge/add/?preset=how2judge``).

**How2Judge** is the paper's distilled judge (seed 000 §4.4, C.2: Qwen 3 8B fine-tuned on 73K
GPT 5 judgments; 80.5% agreement with the human majority), as the reference implementation
runs it by default (``how2everything/bench/config.py``: the evaluator when none is configured):
vLLM offline, prompt H.3 (``judge_h3``, with ``Return only valid json.`` appended), the raw prompt
through ``LLM.generate`` (``vllm.mode`` unset → ``generate``: our ``completions`` endpoint),
temperature 0, ``max_new_tokens`` 4096, ``chat_template_kwargs: {enable_thinking: false}``
(used if the endpoint is switched to chat), guided JSON on the H.3 schema
(``require_guided_json``), vLLM's engine defaults. The weights come from the user's disk: the
model is the directory ``settings.HOW2JUDGE_MODEL_DIR`` (env ``HOW2JUDGE_MODEL_DIR``, default
``var/models/how2judge``), e.g. a copy of ``how2everything/how2judge`` made beforehand with
``huggingface-cli download how2everything/how2judge --local-dir …``; nothing is fetched at run
time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

HOW2JUDGE_HUB_ID = "how2everything/how2judge"
HOW2JUDGE_BASE_MODEL = "Qwen/Qwen3-8B"


@dataclass(frozen=True)
class Preset:
    key: str
    label: str
    description: str
    fields: dict[str, Any] = field(default_factory=dict)


def how2judge_fields(model_dir: str | None = None) -> dict[str, Any]:
    return {
        "name": "how2judge",
        "backend": "vllm",
        "model": model_dir or settings.HOW2JUDGE_MODEL_DIR,
        "endpoint": "completions",
        "prompt_template": "judge_h3",
        "structured_output": True,
        "decoding": {
            "temperature": 0.0,
            "max_tokens": 4096,
            "chat_template_kwargs": {"enable_thinking": False},
        },
        "concurrency": 1,
        "expected_output_tokens": 400,
    }


def presets() -> dict[str, Preset]:
    return {
        "how2judge": Preset(
            key="how2judge",
            label="How2Judge (preset)",
            description=(
                f"the paper's distilled 8B judge ({HOW2JUDGE_HUB_ID}, from {HOW2JUDGE_BASE_MODEL}) "
                f"on vLLM offline, weights from {settings.HOW2JUDGE_MODEL_DIR}"
            ),
            fields=how2judge_fields(),
        )
    }


def preset_fields(key: str) -> dict[str, Any]:
    """The judge fields of preset ``key``; ``ValueError`` naming the known ones otherwise."""
    known = presets()
    if key not in known:
        raise ValueError(f"unknown judge preset {key!r}; known: {', '.join(sorted(known))}")
    return dict(known[key].fields)
