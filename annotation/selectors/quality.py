"""Reads for the participant quality page and the pay page of a study (the math is in
:mod:`annotation.quality` and :mod:`annotation.pay`)."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Count, Q

from annotation import pay as pay_rules
from annotation.models import Annotation, AttentionCheckResult, Participant, Study, StudyPay
from annotation.quality import Label, ParticipantQuality, participant_quality
from annotation.selectors.forms import study_form

QUALITY_FIELDS = [
    "participant",
    "stage",
    "items_done",
    "seconds_per_item",
    "attention_passed",
    "attention_total",
    "majority_agreement",
    "majority_compared",
    "gold_agreement",
    "gold_total",
    "silent_gold_agreement",
    "silent_gold_total",
    "first_half",
    "second_half",
    "drift",
    "action",
    "reasons",
]
SORT_KEYS = set(QUALITY_FIELDS) - {"reasons"}
_ACTION_ORDER = {"reject": 0, "warn": 1, "keep": 2}


def _labels(study: Study) -> list[Label]:
    """Every non-training label; a known item's ``correct`` by the study's form type's
    known-answer rule (:meth:`annotation.form_types.base.BoundForm.known_answer`)."""
    form = study_form(study=study)
    rows = (
        Annotation.objects.filter(item__study=study)
        .exclude(item__kind="training")
        .values_list(
            "participant_id",
            "item_id",
            "has_failure",
            "label",
            "item__expected_has_failure",
            "item__expected_label",
            "item__kind",
            "active_ms",
            "submitted_at",
        )
    )
    out = []
    for pid, item, has, label, expected, expected_label, kind, active, at in rows:
        known = kind != "regular"
        correct = None
        if known:
            correct, _detail = form.known_answer(
                answer=label or {},
                has_failure=has,
                expected_label=expected_label,
                expected_has_failure=expected,
            )
        out.append(
            Label(
                participant=str(pid),
                item=item,
                has_failure=has,
                expected=(expected_label if expected is None else expected) if known else None,
                active_ms=active,
                submitted_at=at,
                silent=kind == "gold",
                correct=correct,
                value=None if form.is_critical_failure else _value(form, label),
            )
        )
    return out


def _value(form, label):
    value = form.type.quality_value(label or {}, config=form.config)
    return value if value is not None else ""


def _attention(study: Study) -> dict[str, tuple[int, int]]:
    rows = (
        AttentionCheckResult.objects.filter(participant__study=study, kind="planted")
        .values("participant_id")
        .annotate(total=Count("id"), passed=Count("id", filter=Q(passed=True)))
    )
    return {str(r["participant_id"]): (r["passed"], r["total"]) for r in rows}


def quality_rows(*, study: Study, sort: str = "action", descending: bool = False) -> list[dict]:
    """One dict per participant (``QUALITY_FIELDS`` plus ``pid``), sorted by ``sort``;
    unknown sort keys fall back to the suggested action (reject first). Empty values sort last."""
    participants = {str(p.pk): p for p in Participant.objects.filter(study=study)}
    found = participant_quality(
        _labels(study),
        participants=list(participants),
        attention=_attention(study),
        min_seconds_per_item=study.min_seconds_per_item,
    )
    rows = [_row(q, participants[q.participant]) for q in found]
    key = sort if sort in SORT_KEYS else "action"

    def sort_value(row):
        value = row[key]
        if key == "action":
            value = _ACTION_ORDER[value]
        return (value is None, value if value is not None else 0, row["participant"])

    rows.sort(key=sort_value, reverse=False)
    if descending:
        filled = [r for r in rows if r[key] is not None][::-1]
        rows = filled + [r for r in rows if r[key] is None]
    return rows


def _row(q: ParticipantQuality, p: Participant) -> dict:
    def r(value, digits=3):
        return None if value is None else round(value, digits)

    return {
        "pid": p.pk,
        "participant": p.label,
        "prolific_pid": p.prolific_pid,
        "stage": p.get_stage_display(),
        "items_done": q.items_done,
        "seconds_per_item": r(q.seconds_per_item, 1),
        "attention_passed": q.attention_passed,
        "attention_total": q.attention_total,
        "majority_agreement": r(q.majority_agreement),
        "majority_compared": q.majority_compared,
        "gold_agreement": r(q.gold_agreement),
        "gold_total": q.gold_total,
        "silent_gold_agreement": r(q.silent_gold_agreement),
        "silent_gold_total": q.silent_gold_total,
        "first_half": r(q.first_half),
        "second_half": r(q.second_half),
        "drift": r(q.drift),
        "action": q.action,
        "reasons": "; ".join(q.reasons),
    }


# --- pay --------------------------------------------------------------------------------------


def pay_floor() -> Decimal | None:
    floor = getattr(settings, "ANNOTATION_MIN_HOURLY_PAY", None)
    if floor in (None, ""):
        return None
    try:
        value = Decimal(str(floor))
    except ArithmeticError:
        raise ImproperlyConfigured(
            f"ANNOTATION_MIN_HOURLY_PAY={floor!r} is not an amount (e.g. 9.00, or empty)"
        ) from None
    if not value.is_finite() or value < 0:
        raise ImproperlyConfigured(f"ANNOTATION_MIN_HOURLY_PAY={floor!r} must be 0 or more")
    return value


def study_pay(study: Study) -> StudyPay:
    """The study's pay terms (unsaved defaults when none were set)."""
    return StudyPay.objects.filter(study=study).first() or StudyPay(study=study)


def pay_rows(*, study: Study) -> dict:
    """Effective hourly pay and rule bonuses per participant who labelled anything."""
    terms = study_pay(study)
    per = defaultdict(lambda: {"active_ms": 0, "items": 0, "known_correct": 0})
    rows = Annotation.objects.filter(item__study=study).values_list(
        "participant_id", "active_ms", "item__kind", "has_failure", "item__expected_has_failure"
    )
    for pid, active, kind, has, expected in rows:
        entry = per[pid]
        entry["active_ms"] += active
        if kind == "regular":
            entry["items"] += 1
        elif kind in ("attention", "qualification", "gold") and has == expected:
            entry["known_correct"] += 1
    participants = {p.pk: p for p in Participant.objects.filter(pk__in=list(per))}
    labels = {pid: participants[pid].label for pid in per}
    summary = pay_rules.hourly_summary(
        reward=terms.reward,
        estimated_minutes=terms.estimated_minutes,
        active_seconds={labels[pid]: e["active_ms"] / 1000 for pid, e in per.items()},
        floor=pay_floor(),
    )
    out = []
    for pid, e in sorted(per.items(), key=lambda kv: labels[kv[0]]):
        label = labels[pid]
        out.append(
            {
                "participant": label,
                "prolific_pid": participants[pid].prolific_pid,
                "active_minutes": round(e["active_ms"] / 60000, 1),
                "hourly": summary.per_participant[label],
                "below_floor": label in summary.below_floor,
                "items": e["items"],
                "known_correct": e["known_correct"],
                "bonus": pay_rules.bonus(
                    n_items=e["items"],
                    n_known_correct=e["known_correct"],
                    per_item=terms.bonus_per_item,
                    per_known_correct=terms.bonus_per_known_correct,
                ),
            }
        )
    return {"terms": terms, "summary": summary, "rows": out, "floor": pay_floor()}


def rule_bonus_csv(*, study: Study) -> str:
    """The rule bonuses of participants who came through Prolific, as ``participant_id,amount``
    lines (zero bonuses left out) for the bonus form."""
    lines = [
        f"{row['prolific_pid']},{row['bonus']}"
        for row in pay_rows(study=study)["rows"]
        if row["prolific_pid"] and row["bonus"] > 0
    ]
    return "\n".join(lines)
