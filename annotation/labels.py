"""Parse and validate an item page's form into a label (pure Python, no Django).

The form's fields: ``goal_ack`` ("1"), ``read`` (L2 step numbers confirmed as read, repeated),
``read_l1`` (L1 step numbers confirmed as read, repeated; required when the study asks for it),
``choice`` ("none" | "failure"), for each failure i: ``f-i-desc``, ``f-i-l1`` and ``f-i-l2``
(step numbers, repeated), and ``comments``. Step numbers are 1-based, as on the page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

# the limits of the annotation app's free text (docs/reference/limits.md): over-long text is
# refused with the limit named, never cut
MAX_DESCRIPTION = 2_000  # a failure's description (item page and adjudication)
MAX_COMMENTS = 5_000  # an answer's comments
MAX_NOTE = 5_000  # an adjudication's note
MAX_STUDY_DESCRIPTION = 10_000  # a study's description
MAX_EXPLANATION = 5_000  # a training item's explanation
MAX_FAILURES = 30
_FAILURE_KEY = re.compile(r"^f-(\d{1,3})-(desc|l1|l2)$")
CRITICAL_FAILURE = "critical_failure"


@dataclass
class ParsedLabel:
    goal_ack: bool = False
    read_steps: list[int] = field(default_factory=list)
    read_l1_steps: list[int] = field(default_factory=list)
    choice: str = ""
    failures: list[dict] = field(default_factory=list)
    comments: str = ""
    # a form type other than critical failure (annotation.form_types): its name and answer
    form_type: str = CRITICAL_FAILURE
    answer: dict = field(default_factory=dict)

    @property
    def has_failure(self) -> bool | None:
        return {"none": False, "failure": True}.get(self.choice)

    def as_draft(self) -> dict:
        draft = {
            "goal_ack": self.goal_ack,
            "read_steps": self.read_steps,
            "read_l1_steps": self.read_l1_steps,
            "choice": self.choice,
            "failures": self.failures,
            "comments": self.comments,
        }
        if self.form_type != CRITICAL_FAILURE:
            draft |= {"form_type": self.form_type, "answer": self.answer}
        return draft


def _ints(values: Sequence[str], *, upper: int) -> list[int]:
    out: set[int] = set()
    for raw in values:
        raw = (raw or "").strip()
        if raw.isdigit() and 1 <= int(raw) <= upper:
            out.add(int(raw))
    return sorted(out)


def parse_label(data: Mapping[str, Sequence[str]], *, n_l1: int, n_l2: int) -> ParsedLabel:
    """Read the form leniently (a draft may be half done); out-of-range steps are dropped."""

    def first(name: str) -> str:
        values = data.get(name) or []
        return values[0] if values else ""

    label = ParsedLabel(
        goal_ack=first("goal_ack") in {"1", "on", "true"},
        read_steps=_ints(data.get("read") or [], upper=n_l2),
        read_l1_steps=_ints(data.get("read_l1") or [], upper=n_l1),
        choice=first("choice") if first("choice") in {"none", "failure"} else "",
        comments=first("comments"),
    )
    indices = sorted({int(m.group(1)) for key in data for m in [_FAILURE_KEY.match(key)] if m})
    for index in indices[:MAX_FAILURES]:
        label.failures.append(
            {
                "description": first(f"f-{index}-desc").strip(),
                "l1_steps": _ints(data.get(f"f-{index}-l1") or [], upper=n_l1),
                "l2_steps": _ints(data.get(f"f-{index}-l2") or [], upper=n_l2),
            }
        )
    return label


def parse_form(data: Mapping[str, Sequence[str]], *, form, item) -> ParsedLabel:
    """The item form of any form type (``form``: a bound form type of
    :mod:`annotation.form_types`, ``item``: its ``ItemView``): the critical-failure form as
    :func:`parse_label` reads it; another type's answer under ``answer``, with the goal
    acknowledgement and the comments every form shares."""
    if form.name == CRITICAL_FAILURE:
        return parse_label(data, n_l1=len(item.l1), n_l2=len(item.l2))
    answer = form.parse(data, item)
    answer.pop("comments", None)
    values = data.get("goal_ack") or []
    comments = data.get("comments") or []
    return ParsedLabel(
        goal_ack=bool(values) and values[0] in {"1", "on", "true"},
        comments=comments[0] if comments else "",
        form_type=form.name,
        answer=answer,
    )


def form_submission_errors(label: ParsedLabel, *, form, item, n_l1: int = 0) -> list[str]:
    """What stops a label of any form type from being submitted (see
    :func:`submission_errors` for the critical-failure form; ``n_l1`` as there)."""
    if form.name == CRITICAL_FAILURE:
        return submission_errors(label, n_l2=len(item.l2), n_l1=n_l1)
    errors = [] if label.goal_ack else ["Goal: tick “I've read the goal…” before submitting."]
    return errors + form.errors(label.answer, item)


def unread_steps(label: ParsedLabel, *, n_l2: int, n_l1: int = 0) -> tuple[list[int], list[int]]:
    """(L1 steps, L2 steps) not yet clicked through; ``n_l1`` is 0 when the study does not ask
    for the L1 click-through."""
    return (
        [i for i in range(1, n_l1 + 1) if i not in label.read_l1_steps],
        [i for i in range(1, n_l2 + 1) if i not in label.read_steps],
    )


def _unread_text(prefix: str, unread: list[int]) -> str:
    shown = ", ".join(f"{prefix}.{i}" for i in unread[:6]) + ("…" if len(unread) > 6 else "")
    return f"{prefix} steps: click every step to confirm you read it ({len(unread)} left: {shown})."


def submission_errors(label: ParsedLabel, *, n_l2: int, n_l1: int = 0) -> list[str]:
    """What stops this label from being submitted, each naming the field; empty when complete.
    ``n_l1``: the number of L1 steps to click through (0 when the study does not ask for it)."""
    errors: list[str] = []
    if not label.goal_ack:
        errors.append("Goal: tick “I've read the goal…” before submitting.")
    unread_l1, _ = unread_steps(label, n_l2=n_l2, n_l1=n_l1)
    if unread_l1:
        errors.append(_unread_text("L1", unread_l1))
    unread = [i for i in range(1, n_l2 + 1) if i not in label.read_steps]
    if unread:
        shown = ", ".join(f"L2.{i}" for i in unread[:6]) + ("…" if len(unread) > 6 else "")
        errors.append(
            f"L2 steps: click every step to confirm you read it ({len(unread)} left: {shown})."
        )
    if label.choice == "":
        errors.append(
            "Choice: select “No critical failures identified” or “Critical failures identified”."
        )
    elif label.choice == "failure":
        errors.extend(message for _, message in failure_errors(label.failures))
    return errors


NO_FAILURE_GIVEN = (
    "Critical failures: add at least one failure, or choose “No critical failures identified”."
)


def failure_errors(failures: Sequence[Mapping]) -> list[tuple[int, str]]:
    """What a "critical failure" label needs, the one rule of the item page and the
    adjudication: at least one failure, each with a description and at least one linked L1 or
    L2 step. (failure number, message) pairs, number 0 for the label as a whole."""
    if not failures:
        return [(0, NO_FAILURE_GIVEN)]
    errors = []
    for number, failure in enumerate(failures, start=1):
        if not (failure.get("description") or "").strip():
            errors.append((number, f"Failure {number}: write a short description."))
        if not failure.get("l1_steps") and not failure.get("l2_steps"):
            errors.append((number, f"Failure {number}: link at least one L1 or L2 step."))
    return errors


def cleaned_failures(label: ParsedLabel) -> list[dict]:
    """The failures to store: none when the choice is "no critical failures"."""
    return list(label.failures) if label.choice == "failure" else []


def first_failure_step(failures: Sequence[Mapping]) -> int | None:
    """The earliest L2 step linked to any failure (for first-failure-location agreement)."""
    steps = [s for f in failures for s in (f.get("l2_steps") or [])]
    return min(steps) if steps else None
