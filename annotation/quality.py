"""Participant quality (pure functions): per participant, items done, active time per item,
attention checks, agreement with the majority of the other annotators and with known answers,
drift over the session, and a suggested action with its reasons.

Definitions (one home for each):
- *agreement with the majority*: over the participant's regular items that at least one other
  participant labelled and whose other labels are not tied, the share where the participant's
  "has failure" equals the majority of the others' labels.
- *gold agreement*: the share of known-answer items (attention, qualification: an expected
  answer) labelled as expected.
- *drift*: majority agreement on the second half of those compared items (in submission order)
  minus the first half (the first half is the smaller one when their number is odd); needs at
  least ``DRIFT_MIN_ITEMS`` compared items.
- *suggested action*: ``reject`` when any rule in :data:`REJECT_RULES` holds, else ``warn``
  when any in :data:`WARN_RULES` holds, else ``keep``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

DRIFT_MIN_ITEMS = 4
REJECT_ATTENTION_FAILURES = 2
REJECT_GOLD_BELOW, REJECT_GOLD_MIN_ITEMS = 0.5, 2
REJECT_MAJORITY_BELOW, REJECT_MAJORITY_MIN_ITEMS = 0.4, 4
WARN_MAJORITY_BELOW, WARN_MAJORITY_MIN_ITEMS = 0.6, 3
WARN_DRIFT_AT_OR_BELOW = -0.3


@dataclass(frozen=True)
class Label:
    participant: str
    item: int
    has_failure: bool
    expected: bool | None  # the known answer; None for regular items
    active_ms: int
    submitted_at: datetime


@dataclass
class ParticipantQuality:
    participant: str
    items_done: int = 0
    seconds_per_item: float | None = None
    attention_passed: int = 0
    attention_total: int = 0
    majority_agree: int = 0
    majority_compared: int = 0
    gold_agree: int = 0
    gold_total: int = 0
    first_half: float | None = None
    second_half: float | None = None
    action: str = "keep"
    reasons: list[str] = field(default_factory=list)

    @property
    def majority_agreement(self) -> float | None:
        return self.majority_agree / self.majority_compared if self.majority_compared else None

    @property
    def gold_agreement(self) -> float | None:
        return self.gold_agree / self.gold_total if self.gold_total else None

    @property
    def attention_failed(self) -> int:
        return self.attention_total - self.attention_passed

    @property
    def drift(self) -> float | None:
        if self.first_half is None or self.second_half is None:
            return None
        return self.second_half - self.first_half


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def suggest(q: ParticipantQuality, *, min_seconds_per_item: float) -> tuple[str, list[str]]:
    reject, warn = [], []
    if q.attention_failed >= REJECT_ATTENTION_FAILURES:
        reject.append(f"failed {q.attention_failed} of {q.attention_total} attention checks")
    elif q.attention_failed:
        warn.append(f"failed {q.attention_failed} of {q.attention_total} attention checks")
    gold = q.gold_agreement
    if gold is not None and q.gold_total >= REJECT_GOLD_MIN_ITEMS and gold < REJECT_GOLD_BELOW:
        reject.append(f"{q.gold_agree} of {q.gold_total} known items right")
    maj = q.majority_agreement
    if maj is not None:
        text = f"agrees with the majority on {q.majority_agree} of {q.majority_compared} items"
        if q.majority_compared >= REJECT_MAJORITY_MIN_ITEMS and maj < REJECT_MAJORITY_BELOW:
            reject.append(text)
        elif q.majority_compared >= WARN_MAJORITY_MIN_ITEMS and maj < WARN_MAJORITY_BELOW:
            warn.append(text)
    if q.drift is not None and q.drift <= WARN_DRIFT_AT_OR_BELOW:
        warn.append(f"agreement fell from {q.first_half:.0%} to {q.second_half:.0%}")
    if q.seconds_per_item is not None and q.seconds_per_item < min_seconds_per_item:
        warn.append(
            f"{q.seconds_per_item:.0f} s active per item, under the {min_seconds_per_item:.0f} s"
            " minimum"
        )
    if reject:
        return "reject", reject + warn
    if warn:
        return "warn", warn
    return "keep", ["no problem found"] if q.items_done else ["no items yet"]


def participant_quality(
    labels: Iterable[Label],
    *,
    participants: Iterable[str],
    attention: dict[str, tuple[int, int]],
    min_seconds_per_item: float = 0,
) -> list[ParticipantQuality]:
    """``attention``: participant → (passed, total) planted checks."""
    labels = list(labels)
    by_item: dict[int, list[Label]] = defaultdict(list)
    for lab in labels:
        if lab.expected is None:
            by_item[lab.item].append(lab)
    out = []
    for pid in participants:
        mine = sorted(
            (lab for lab in labels if lab.participant == pid), key=lambda x: x.submitted_at
        )
        q = ParticipantQuality(participant=pid)
        regular = [lab for lab in mine if lab.expected is None]
        q.items_done = len(regular)
        if regular:
            q.seconds_per_item = sum(lab.active_ms for lab in regular) / len(regular) / 1000
        q.attention_passed, q.attention_total = attention.get(pid, (0, 0))
        known = [lab for lab in mine if lab.expected is not None]
        q.gold_total = len(known)
        q.gold_agree = sum(lab.has_failure == lab.expected for lab in known)
        agreed: list[bool] = []
        for lab in regular:
            others = [o.has_failure for o in by_item[lab.item] if o.participant != pid]
            yes = sum(others)
            if not others or yes * 2 == len(others):
                continue
            agreed.append(lab.has_failure == (yes * 2 > len(others)))
        q.majority_compared, q.majority_agree = len(agreed), sum(agreed)
        if len(agreed) >= DRIFT_MIN_ITEMS:
            half = len(agreed) // 2
            q.first_half, q.second_half = _share(agreed[:half]), _share(agreed[half:])
        q.action, q.reasons = suggest(q, min_seconds_per_item=min_seconds_per_item)
        out.append(q)
    return out
