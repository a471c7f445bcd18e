"""The annotator rules, one home each (pure Python, no Django: plain counts, thresholds,
timestamps and seconds in, plain values out). Services enforce them, selectors and views show
them, templates and the item page's script receive their results; nobody recomputes them.

Minimum time per item
    :func:`seconds_left` is the one rounding: the whole seconds still to wait, rounded **up**.
    It is 0 exactly when the item may be submitted and at least 1 while it may not, so no page
    or message ever says "0 s left" while still refusing (89.2 s waited of 90 → 1 s left;
    90.0 s → 0). :func:`elapsed_seconds` is the time spent, rounded down, for the clock.

Attention checks
    :func:`attention_state`: after ``warn_after`` missed planted checks the participant is
    warned, after ``screen_after`` they are screened out (0 turns either off; screening out
    wins when both apply). :func:`attention_due` says when the next item is a planted check.

Qualification
    :func:`qualification_score` is the share of qualification items answered as expected (1.0
    when none was answered); :func:`qualification_state` says whether it passes the study's
    threshold, with a tolerance of 1e-9 for float error (2 of 3 right passes a threshold
    written as 0.6666666667). :func:`screened_out_reason` tells the two ways out apart.

Comprehension check, second attempt
    :func:`comprehension_outcome`: after a qualification attempt, a pass goes on to the items;
    a first failure goes back to the training (with the missed items explained) for one more
    try on the study's second set of qualification items, when it has one; a failure with no
    try left screens the participant out (:data:`QUALIFICATION_MAX_ATTEMPTS`).

Silent gold
    :func:`gold_due` says when the next item is a silent gold item (a known answer shown like any
    other item, scored, never blocking); :func:`item_position` is the "Item n" the page shows,
    counting gold items like regular ones so that nothing tells them apart.

Item sampling
    :data:`SAMPLING` names the strategies; :func:`seeded_rank` is an item's place in the fixed
    seeded order, :func:`seeded_ranks` the places of a study's items when some go first (the
    items a judge cannot decide); :func:`stratum_next` picks the stratum (topic, generator, or both at once)
    that keeps a participant's mix balanced.

Active time
    :func:`active_ms_after_beat`: a page's report of active time is capped at two heartbeat
    intervals and the total never exceeds the wall-clock time since the item was served.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Any

# --- minimum time per item ---------------------------------------------------------------


def waited_seconds(*, served_at: datetime, now: datetime) -> float:
    """Seconds since the item was served (negative clock skew counts as 0)."""
    return max(0.0, (now - served_at).total_seconds())


def seconds_left(*, min_seconds: int, waited: float) -> int:
    """Whole seconds before the item may be submitted, rounded up: 0 only once ``waited``
    reaches ``min_seconds``, else at least 1."""
    if waited >= min_seconds:
        return 0
    return math.ceil(min_seconds - waited)


def submission_open(*, min_seconds: int, waited: float) -> bool:
    """Whether the minimum time is over (the same test as ``seconds_left(...) == 0``)."""
    return seconds_left(min_seconds=min_seconds, waited=waited) == 0


def elapsed_seconds(*, waited: float) -> int:
    """The time spent on the item in whole seconds, rounded down (the page's clock)."""
    return max(0, math.floor(waited))


def too_early_message(*, min_seconds: int, left: int) -> str:
    return (
        f"Too early: please spend at least {min_seconds} s on each item "
        f"({left} s left). Your answers are kept."
    )


# --- attention checks ----------------------------------------------------------------------

ATTENTION_OK = "ok"
ATTENTION_WARN = "warn"
ATTENTION_SCREEN_OUT = "screen_out"


def attention_state(*, failures: int, warn_after: int, screen_after: int) -> str:
    """:data:`ATTENTION_SCREEN_OUT` once ``failures`` reaches ``screen_after``, else
    :data:`ATTENTION_WARN` once it reaches ``warn_after``, else :data:`ATTENTION_OK`
    (a threshold of 0 is off)."""
    if screen_after and failures >= screen_after:
        return ATTENTION_SCREEN_OUT
    if warn_after and failures >= warn_after:
        return ATTENTION_WARN
    return ATTENTION_OK


def attention_warning(*, failures: int, warn_after: int, screen_after: int) -> str:
    """The warning shown to a participant past a threshold; empty when none is reached."""
    if attention_state(failures=failures, warn_after=warn_after, screen_after=screen_after) == (
        ATTENTION_OK
    ):
        return ""
    text = (
        f"Heads up: you have missed {failures} attention check"
        f"{'s' if failures != 1 else ''}. Please read every item carefully."
    )
    if screen_after:
        text += f" After {screen_after} missed checks the session ends."
    return text


def attention_interval(rate: float) -> int:
    """Regular items between two planted attention items (0 = none planted)."""
    if rate <= 0:
        return 0
    return max(1, round(1 / rate))


def attention_due(*, rate: float, regular_done: int, attention_served: int) -> bool:
    """Whether the next item should be a planted attention check."""
    interval = attention_interval(rate)
    if interval == 0 or regular_done == 0:
        return False
    return attention_served < regular_done // interval


# --- qualification -------------------------------------------------------------------------

QUALIFICATION_NOT_TAKEN = "not_taken"
QUALIFICATION_PASSED = "passed"
QUALIFICATION_FAILED = "failed"
QUALIFICATION_TOLERANCE = 1e-9

SCREENED_BY_QUALIFICATION = "qualification"
SCREENED_BY_ATTENTION = "attention"


def takes_qualification(*, has_qualification_items: bool, carried_over: bool) -> bool:
    """After the training: the qualification items, unless the study has none for this attempt
    or the participant qualified in the previous round and was carried over (C.1: the rounds
    iterate the training; qualified annotators keep working without a new test)."""
    return has_qualification_items and not carried_over


def qualification_score(*, n_correct: int, n_answered: int) -> float:
    """The share of qualification items answered as expected; 1.0 when none was answered."""
    return n_correct / n_answered if n_answered else 1.0


def qualification_state(*, score: float | None, threshold: float) -> str:
    """:data:`QUALIFICATION_NOT_TAKEN` (no score yet), :data:`QUALIFICATION_PASSED` or
    :data:`QUALIFICATION_FAILED`."""
    if score is None:
        return QUALIFICATION_NOT_TAKEN
    if score + QUALIFICATION_TOLERANCE >= threshold:
        return QUALIFICATION_PASSED
    return QUALIFICATION_FAILED


def screened_out_reason(*, qualification_score: float | None, attention_failures: int) -> str:
    """Why a screened-out participant was screened out: a failed qualification (a score and
    no missed attention check, since those come only after qualifying) or missed checks."""
    if qualification_score is not None and attention_failures == 0:
        return SCREENED_BY_QUALIFICATION
    return SCREENED_BY_ATTENTION


# --- comprehension check: a second attempt after the training -------------------------------

QUALIFICATION_MAX_ATTEMPTS = 2
COMPREHENSION_WORK = "work"
COMPREHENSION_RETRAIN = "retrain"
COMPREHENSION_SCREEN_OUT = "screen_out"


def comprehension_outcome(*, passed: bool, attempt: int, has_second_set: bool) -> str:
    """What follows a finished qualification attempt: :data:`COMPREHENSION_WORK` on a pass,
    :data:`COMPREHENSION_RETRAIN` (the training again, then the second set) after a first
    failure when the study has a second set of items, else :data:`COMPREHENSION_SCREEN_OUT`."""
    if passed:
        return COMPREHENSION_WORK
    if has_second_set and attempt < QUALIFICATION_MAX_ATTEMPTS:
        return COMPREHENSION_RETRAIN
    return COMPREHENSION_SCREEN_OUT


# --- silent gold ---------------------------------------------------------------------------


def gold_due(*, rate: float, regular_done: int, gold_served: int) -> bool:
    """Whether the next item should be a silent gold item (same spacing rule as attention)."""
    return attention_due(rate=rate, regular_done=regular_done, attention_served=gold_served)


def gold_planned(*, rate: float, items_per_participant: int, n_gold_items: int) -> int:
    """How many silent gold items a participant who does every item is served: one after every
    interval of regular items, never after the last, at most the study's gold items."""
    interval = attention_interval(rate)
    if interval == 0 or items_per_participant <= 0:
        return 0
    return min((items_per_participant - 1) // interval, n_gold_items)


def item_position(*, regular_done: int, gold_served: int, current_is_gold: bool) -> int:
    """The "Item n" shown: regular and silent gold items counted alike (a gold item is counted
    in ``gold_served`` as soon as it is served)."""
    return regular_done + gold_served + (0 if current_is_gold else 1)


# --- item sampling -------------------------------------------------------------------------

SAMPLING_LEAST_ANNOTATED = "least_annotated"
SAMPLING_BY_TOPIC = "by_topic"
SAMPLING_BY_GENERATOR = "by_generator"
SAMPLING_BY_TOPIC_AND_GENERATOR = "by_topic_and_generator"
SAMPLING_SEEDED = "seeded"
SAMPLING = (
    SAMPLING_LEAST_ANNOTATED,
    SAMPLING_BY_TOPIC,
    SAMPLING_BY_GENERATOR,
    SAMPLING_BY_TOPIC_AND_GENERATOR,
    SAMPLING_SEEDED,
)
SEEDED_RANK_MAX = 2**31 - 1


def seeded_rank(*, seed: int, key: int) -> int:
    """An item's place in the fixed seeded order: a hash of (seed, generation id), so the same
    seed gives the same order on any machine, whatever order items were added in."""
    digest = hashlib.blake2b(f"{seed}:{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % SEEDED_RANK_MAX


def seeded_ranks(*, seed: int, keys: Iterable[int], first: Collection[int] = ()) -> dict[int, int]:
    """The place of every key in the fixed seeded order. Without ``first``: each key's
    :func:`seeded_rank`. With it: the keys in ``first`` come before all the others, each group
    in its seeded order (ties by key), and the place is the position 0, 1, … in that order."""
    keys = list(keys)
    if not first:
        return {k: seeded_rank(seed=seed, key=k) for k in keys}
    first = set(first)
    ordered = sorted(keys, key=lambda k: (k not in first, seeded_rank(seed=seed, key=k), k))
    return {k: place for place, k in enumerate(ordered)}


def stratum_next(*, open_strata: Iterable[tuple], seen: dict[tuple, int]) -> tuple | None:
    """Of the strata that still have items for this participant, the one that keeps their mix
    most balanced; None when none is open. A stratum is a tuple of one value per dimension
    (``(topic,)``, ``(generator,)`` or ``(topic, generator)``); ``seen``: stratum → items
    had. The pick has the fewest items seen summed over its dimensions' values (with one
    dimension: the stratum seen least), then the fewest of its own, then the smallest key, so
    with two dimensions both the topics and the generators stay balanced."""
    margins: dict[tuple[int, Any], int] = {}
    for stratum, n in seen.items():
        for dim, value in enumerate(stratum):
            margins[dim, value] = margins.get((dim, value), 0) + n

    def rank(stratum: tuple) -> tuple:
        spread = sum(margins.get((dim, value), 0) for dim, value in enumerate(stratum))
        return spread, seen.get(stratum, 0), str(stratum)

    candidates = sorted(open_strata, key=rank)
    return candidates[0] if candidates else None


# --- active time ---------------------------------------------------------------------------


def wall_ms(*, served_at: datetime, now: datetime) -> int:
    """Milliseconds since the item was served, truncated."""
    return int((now - served_at).total_seconds() * 1000)


def active_ms_after_beat(
    *, active_ms: int, delta_ms: int, wall_ms: int, heartbeat_seconds: int
) -> int:
    """The item's active time after a page reports ``delta_ms`` more: the report is capped at
    two heartbeat intervals (and at 0 below), the total at the wall-clock time."""
    delta = max(0, min(int(delta_ms or 0), heartbeat_seconds * 2_000))
    return max(0, min(active_ms + delta, wall_ms))


# --- reading checks (the paper's interface, C.1) --------------------------------------------


def l1_steps_to_read(*, click_through_l1: bool, n_l1: int) -> int:
    """How many L1 (reference) steps a participant must click through before submitting: all
    of them when the study asks for it (the default, as in the paper's Figures 7-11), else
    none. Every L2 step is always clicked through."""
    return n_l1 if click_through_l1 else 0
