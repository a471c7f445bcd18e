"""Operations on a study's Prolific submissions, bonuses and participant groups.

Every call to Prolific is logged as a :class:`~annotation.models.ProlificCall` row with the user
who made it, whether it worked and Prolific's answer. Moving money or changing a submission's
state (approve, reject, return, bonuses, groups) is for admins (:func:`core.roles.is_admin`);
listing submissions is for researchers too. Bad input raises ``ValidationError`` before any call;
a refused call raises :class:`~annotation.prolific.client.ProlificError` (logged) and changes
nothing else here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from decimal import Decimal

from django.core.exceptions import PermissionDenied, ValidationError

from annotation import pay as pay_rules
from annotation.models import Participant, ProlificCall, Study
from annotation.prolific.client import (
    MIN_REJECTION_MESSAGE,
    REJECTION_CATEGORIES,
    Bonus,
    ProlificClient,
    ProlificError,
)
from annotation.selectors.quality import study_pay
from core.roles import is_admin, is_researcher

ACTIONS = ("approve", "reject", "return")


def _need(user, check, what: str) -> None:
    if not check(user):
        raise PermissionDenied(f"Only {what} may do this.")


def _prolific_study_id(study: Study) -> str:
    if not study.prolific_study_id:
        raise ValidationError(
            {"prolific_study_id": "This study has no Prolific study id; set it on the study."}
        )
    return study.prolific_study_id


def logged_call(
    *, study, user, action, target, summary, call, client=None, participant_ids=(), amount=None
):
    """Run ``call(client)``; log it either way; re-raise a refusal after logging it.
    ``amount``: the money the call moves (kept on the row only when it worked)."""
    client = client or ProlificClient()
    try:
        result = call(client)
    except ProlificError as exc:
        ProlificCall.objects.create(
            study=study,
            user=user,
            action=action,
            target=target,
            request_summary=summary,
            status=exc.status,
            ok=False,
            message=str(exc),
        )
        raise
    ProlificCall.objects.create(
        study=study,
        user=user,
        action=action,
        target=target,
        request_summary=summary,
        status=200,
        ok=True,
        message=_answer_text(result),
        participant_ids=list(participant_ids),
        amount=amount,
    )
    return result


def _answer_text(result) -> str:
    if isinstance(result, dict):
        keys = ("id", "status", "total_amount", "amount", "fees")
        return ", ".join(f"{k}={result[k]}" for k in keys if k in result)[:500]
    return f"{len(result)} results" if isinstance(result, list) else ""


# --- submissions ---------------------------------------------------------------------------------


def submissions_list(*, study: Study, user, client=None) -> list[dict]:
    """The study's submissions on Prolific, each matched to its participant here (``None``
    when the Prolific id never entered this study)."""
    _need(user, is_researcher, "researchers and admins")
    sid = _prolific_study_id(study)
    subs = logged_call(
        study=study,
        user=user,
        action=ProlificCall.Action.LIST,
        target=sid,
        summary=f"GET /studies/{sid}/submissions/ (all pages)",
        call=lambda c: c.list_submissions(sid),
        client=client,
    )
    here = {
        p.prolific_pid: p
        for p in Participant.objects.filter(
            study=study, prolific_pid__in=[s.get("participant_id") for s in subs]
        )
    }
    return [
        {
            "id": s.get("id", ""),
            "participant_id": s.get("participant_id", ""),
            "status": s.get("status", ""),
            "started_at": s.get("started_at"),
            "completed_at": s.get("completed_at"),
            "study_code": s.get("study_code", ""),
            "participant": here.get(s.get("participant_id")),
        }
        for s in subs
    ]


@dataclass
class BulkResult:
    done: list[str]
    failed: list[tuple[str, str]]  # (submission id, message)


def validate_transition(*, action: str, submission_ids, category: str = "", message: str = ""):
    """Check a bulk action before any call (``ValidationError`` naming the field)."""
    if action not in ACTIONS:
        raise ValidationError({"action": f"Choose one of {', '.join(ACTIONS)}."})
    ids = [s.strip() for s in submission_ids if s and s.strip()]
    if not ids:
        raise ValidationError({"submissions": "Choose at least one submission."})
    if action == "reject":
        if category not in REJECTION_CATEGORIES:
            raise ValidationError(
                {"rejection_category": f"Choose one of {', '.join(REJECTION_CATEGORIES)}."}
            )
        if len(message.strip()) < MIN_REJECTION_MESSAGE:
            raise ValidationError(
                {
                    "message": f"Prolific needs a rejection message of at least "
                    f"{MIN_REJECTION_MESSAGE} characters ({len(message.strip())} given)."
                }
            )
    if action == "return" and not message.strip():
        raise ValidationError({"message": "Give the reason for asking to return."})
    return ids


def submissions_transition(
    *, study: Study, user, action: str, submission_ids, category="", message="", client=None
) -> BulkResult:
    """Approve, reject or request the return of each submission; one logged call each. A
    refused call does not stop the others; the result says which were refused and why."""
    _need(user, is_admin, "admins")
    ids = validate_transition(
        action=action, submission_ids=submission_ids, category=category, message=message
    )
    client = client or ProlificClient()
    result = BulkResult(done=[], failed=[])
    for sub_id in ids:
        if action == "approve":
            call, summary = (lambda c, s=sub_id: c.approve(s)), "APPROVE"
        elif action == "reject":
            call = lambda c, s=sub_id: c.reject(s, category=category, message=message.strip())  # noqa: E731
            summary = f"REJECT category={category} message={message.strip()[:80]}…"
        else:
            call = lambda c, s=sub_id: c.request_return(s, reasons=[message.strip()])  # noqa: E731
            summary = f"request return: {message.strip()[:80]}"
        try:
            logged_call(
                study=study,
                user=user,
                action=action,
                target=sub_id,
                summary=summary,
                call=call,
                client=client,
            )
        except ProlificError as exc:
            result.failed.append((sub_id, str(exc)))
        else:
            result.done.append(sub_id)
    return result


# --- bonuses -------------------------------------------------------------------------------------


@dataclass
class BonusPreview:
    bonuses: list[tuple[str, Decimal]]
    total: Decimal
    digest: str  # names exactly these bonuses; the submit step must repeat it


def bonus_preview(*, csv_text: str, currency: str = "GBP") -> BonusPreview:
    try:
        bonuses = pay_rules.parse_bonus_csv(csv_text, currency=currency)
    except ValueError as exc:
        raise ValidationError({"bonuses": str(exc)}) from exc
    canonical = "\n".join(f"{pid},{amount}" for pid, amount in bonuses)
    return BonusPreview(
        bonuses=bonuses,
        total=pay_rules.bonus_total(a for _, a in bonuses),
        digest=hashlib.sha256(canonical.encode()).hexdigest()[:16],
    )


def bonus_submit(*, study: Study, user, csv_text: str, digest: str, client=None) -> str:
    """Set up the previewed bonuses on Prolific and pay them; returns the bulk payment id.
    Refuses when ``digest`` is not the preview's (the CSV changed since) or when these very
    bonuses were already paid for this study (Prolific's pay call is not idempotent)."""
    _need(user, is_admin, "admins")
    sid = _prolific_study_id(study)
    preview = bonus_preview(csv_text=csv_text, currency=study_pay(study).currency)
    if digest != preview.digest:
        raise ValidationError({"bonuses": "The bonuses changed since the preview; preview again."})
    tag = f"bonuses {preview.digest}"
    if ProlificCall.objects.filter(
        study=study, action=ProlificCall.Action.BONUS_PAY, ok=True, request_summary__startswith=tag
    ).exists():
        raise ValidationError({"bonuses": "These exact bonuses were already paid for this study."})
    client = client or ProlificClient()
    created = logged_call(
        study=study,
        user=user,
        action=ProlificCall.Action.BONUS_CREATE,
        target=sid,
        summary=f"{tag}: {len(preview.bonuses)} participants, total {preview.total}",
        call=lambda c: c.create_bonuses(
            sid, [Bonus(pid, str(amount)) for pid, amount in preview.bonuses]
        ),
        client=client,
    )
    bulk_id = str(created.get("id", ""))
    if not bulk_id:
        raise ProlificError("Prolific set up the bonuses but gave no payment id; nothing paid.")
    logged_call(
        study=study,
        user=user,
        action=ProlificCall.Action.BONUS_PAY,
        target=bulk_id,
        summary=f"{tag}: pay bulk {bulk_id}, total {preview.total}",
        call=lambda c: c.pay_bonuses(bulk_id),
        client=client,
        amount=preview.total,
    )
    return bulk_id


# --- participant groups --------------------------------------------------------------------------


_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def group_add_checked(*, group_id: str, participant_ids) -> tuple[str, list[str]]:
    """The group id and the distinct participant ids of an exclusion, checked before anything
    is asked or sent (``ValidationError`` naming each bad field): the confirmation step and
    the call both go through here."""
    errors = {}
    group_id = (group_id or "").strip()
    if not group_id:
        errors["group_id"] = "Give the Prolific participant group id (it is empty)."
    elif len(group_id) > 64 or not set(group_id) <= _ID_CHARS:
        errors["group_id"] = f"{group_id[:70]!r} is not a Prolific participant group id."
    ids = sorted({p.strip() for p in participant_ids if p and p.strip()})
    bad = [p for p in ids if len(p) > 64 or not set(p) <= _ID_CHARS]
    if not ids:
        errors["participants"] = "Give at least one Prolific id."
    elif bad:
        errors["participants"] = f"{bad[0][:70]!r} is not a Prolific id."
    if errors:
        raise ValidationError(errors)
    return group_id, ids


def group_add(*, study: Study, user, group_id: str, participant_ids, client=None) -> int:
    """Add Prolific participants to a participant group (e.g. one later studies exclude)."""
    _need(user, is_admin, "admins")
    group_id, ids = group_add_checked(group_id=group_id, participant_ids=participant_ids)
    logged_call(
        study=study,
        user=user,
        action=ProlificCall.Action.GROUP_ADD,
        target=group_id,
        summary=f"add {len(ids)}: {', '.join(ids)[:400]}",
        call=lambda c: c.add_to_group(group_id, ids),
        client=client,
        participant_ids=ids,
    )
    return len(ids)


def calls(*, study: Study, limit: int = 100):
    return list(ProlificCall.objects.filter(study=study).select_related("user")[:limit])
