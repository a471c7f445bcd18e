"""Checkpoint metadata of a generator (seed 000 Figure 1b, D.3, D.4): which training series a
model belongs to and how far it was trained. Pure: no Django.

``{"family": str, "size": str, "stage": str, "step": int, "flops": float}`` — ``family`` and one
of ``step`` / ``flops`` are required; ``size`` and ``stage`` are labels. An empty dict means the
generator is not part of a checkpoint series.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

CHECKPOINT_KEYS = ("family", "size", "stage", "step", "flops")


class CheckpointError(ValueError):
    """Bad checkpoint metadata or a bad user-supplied column; the message names the field or
    the line."""


def checkpoint_clean(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validated checkpoint metadata (empty dict = not a checkpoint). Errors name the key."""
    if not raw:
        return {}
    if not isinstance(raw, Mapping):
        raise CheckpointError("checkpoint: must be an object")
    unknown = sorted(set(raw) - set(CHECKPOINT_KEYS))
    if unknown:
        raise CheckpointError(
            f"checkpoint: unknown key(s) {', '.join(unknown)} (expected {', '.join(CHECKPOINT_KEYS)})"
        )
    out: dict[str, Any] = {}
    for key in ("family", "size", "stage"):
        value = raw.get(key)
        if value in (None, ""):
            continue
        if not isinstance(value, str):
            raise CheckpointError(f"checkpoint.{key}: must be text")
        out[key] = value.strip()
    if "step" in raw and raw["step"] not in (None, ""):
        step = raw["step"]
        if isinstance(step, bool) or not isinstance(step, int | str) or not str(step).isdigit():
            raise CheckpointError(f"checkpoint.step: must be a whole number ≥ 0, got {step!r}")
        out["step"] = int(step)
    if "flops" in raw and raw["flops"] not in (None, ""):
        try:
            flops = float(raw["flops"])
        except (TypeError, ValueError):
            flops = math.nan
        if isinstance(raw["flops"], bool) or not math.isfinite(flops) or flops < 0:
            raise CheckpointError(f"checkpoint.flops: must be a number ≥ 0, got {raw['flops']!r}")
        out["flops"] = flops
    if not out.get("family"):
        raise CheckpointError("checkpoint.family: required (the series this checkpoint is in)")
    if "step" not in out and "flops" not in out:
        raise CheckpointError("checkpoint: give step or flops (the training progress)")
    return out


def checkpoint_validator(value: Any) -> None:
    """Model-field validator (console, forms): :func:`checkpoint_clean` as a Django
    ``ValidationError`` naming the key."""
    from django.core.exceptions import ValidationError

    try:
        checkpoint_clean(value)
    except CheckpointError as exc:
        raise ValidationError(str(exc)) from exc
