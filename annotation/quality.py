"""Participant quality (pure functions): per participant, items done, active time per item,
attention checks, agreement with the majority of the other annotators and with known answers,
drift over the session, and a suggested action with its reasons.

Definitions (one home for each):
- *agreement with the majority*: over the participant's regular items that at least one other
  participant labelled and whose other labels have a strict majority (more than half alike;
  a tie has none), the share where the participant's label equals that majority. The label
  compared is ``Label.value`` (the form type's ``quality_value``: "has failure" for critical
  failure, the preferred system for pairwise, all ratings for rating), else "has failure".
- *gold agreement*: the share of known-answer items (attention, qualification, silent gold:
  an expected answer) labelled as expected: ``Label.correct`` when the reader set it (the
  study's form type's known-answer rule, ``BoundForm.known_answer``, so it holds for every
  form type), else "has failure" equals the expected bool.
- *silent gold agreement*: the same share over the silent gold items alone (known answers
  shown like any other item, so the participant cannot tell them apart).
- *drift*: majority agreement on the second half of those compared items (in submission order)
  minus the first half (the first half is the smaller one when their number is odd); needs at
  least ``DRIFT_MIN_ITEMS`` compared items.
- *suggested action*: ``reject`` when any rule in :data:`REJECT_RULES` holds, else ``warn``
  when any in :data:`WARN_RULES` holds, else ``keep``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable
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
    expected: object | None  # the known answer (a bool, or a form type's label); None: regular
    active_ms: int
    submitted_at: datetime
    silent: bool = False  # a silent gold item
    correct: bool | None = None  # known items: answered as expected (None: compare has_failure)
    value: Hashable = None  # what the majority compares (None: has_failure)

    @property
    def compared(self) -> Hashable:
        return self.has_failure if self.value is None else self.value

    @property
    def right(self) -> bool:
        return self.correct if self.correct is not None else self.has_failure == self.expected


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
    silent_gold_agree: int = 0
    silent_gold_total: int = 0
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
    def silent_gold_agreement(self) -> float | None:
        if not self.silent_gold_total:
            return None
        return self.silent_gold_agree / self.silent_gold_total

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
        q.gold_agree = sum(lab.right for lab in known)
        silent = [lab for lab in known if lab.silent]
        q.silent_gold_total = len(silent)
        q.silent_gold_agree = sum(lab.right for lab in silent)
        agreed: list[bool] = []
        for lab in regular:
            others = [o.compared for o in by_item[lab.item] if o.participant != pid]
            top = Counter(others).most_common(1)
            if not top or top[0][1] * 2 <= len(others):
                continue
            agreed.append(lab.compared == top[0][0])
        q.majority_compared, q.majority_agree = len(agreed), sum(agreed)
        if len(agreed) >= DRIFT_MIN_ITEMS:
            half = len(agreed) // 2
            q.first_half, q.second_half = _share(agreed[:half]), _share(agreed[half:])
        q.action, q.reasons = suggest(q, min_seconds_per_item=min_seconds_per_item)
        out.append(q)
    return out
