"""Topic-stratified sampling with a fixed seed (How2Bench: 500 per topic). Pure Python."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Hashable, Iterable


def stratified_sample(
    items: Iterable[tuple[Hashable, str]], *, per_topic: int, seed: int
) -> dict[str, list]:
    """``items`` are ``(key, topic)``; returns topic -> up to ``per_topic`` keys, in key order.

    Deterministic for a seed whatever the input order: keys are sorted per topic before one
    ``random.Random(seed)`` draws from each topic in sorted topic order."""
    if per_topic < 1:
        raise ValueError(f"per_topic must be >= 1, got {per_topic}")
    groups: dict[str, list] = defaultdict(list)
    for key, topic in items:
        groups[topic].append(key)
    rng = random.Random(seed)
    out: dict[str, list] = {}
    for topic in sorted(groups):
        keys = sorted(groups[topic], key=lambda k: (str(type(k)), k))
        chosen = keys if len(keys) <= per_topic else rng.sample(keys, per_topic)
        out[topic] = sorted(chosen, key=lambda k: (str(type(k)), k))
    return out
