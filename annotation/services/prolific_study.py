"""A study's life on Prolific, driven from the app: create the Prolific study as a draft,
publish it (optionally as a pilot of N places first), confirm the pilot's estimated time and
reward and add places, pause, resume, stop, add places, and read Prolific's status and
submissions back (the poll, the same service as the webhooks).

Every call is logged (:func:`annotation.services.prolific.logged_call`). Every write on
Prolific is for admins (publishing, places and the pilot spend money); reading back is for
researchers too. Bad input raises ``ValidationError`` naming the field before any call."""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import timedelta
from decimal import Decimal

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from annotation import conf, money
from annotation.models import ProlificCall, ProlificStudy, Study
from annotation.prolific import rules
from annotation.prolific.client import ProlificClient, ProlificError
from annotation.selectors.prolific_study import Draft, live_studies, prolific_state
from annotation.selectors.quality import study_pay
from annotation.services.pay import pay_terms_update
from annotation.services.prolific import logged_call
from annotation.services.prolific_events import study_status_apply, submission_status_apply
from core.roles import is_admin, is_researcher
from core.text import typed_text_error

log = logging.getLogger(__name__)
A = ProlificCall.Action
TRANSITION_ACTIONS = {"PAUSE": A.STUDY_PAUSE, "START": A.STUDY_START, "STOP": A.STUDY_STOP}
_ID_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def _admin(user) -> None:
    if not is_admin(user):
        raise PermissionDenied("Only admins change a study on Prolific (it spends money).")


def _state(study: Study) -> ProlificStudy:
    state = prolific_state(study)
    if state is None:
        raise ValidationError({"prolific": "Create the Prolific study from the app first."})
    return state


def _ids(values, field: str) -> list[str]:
    out = [v.strip() for v in values if v and v.strip()]
    for v in out:
        if len(v) > 64 or not set(v) <= _ID_CHARS:
            raise ValidationError({field: f"{v[:70]!r} is not a Prolific id."})
    return out


def reward_error(reward: Decimal | None, currency: str) -> str:
    """Why ``reward`` cannot be a study's reward ("" when it can): the one amount rule
    (:func:`annotation.money.parse_amount`), so ``Decimal("150")`` is refused as ambiguous."""
    try:
        money.parse_amount("" if reward is None else str(reward), currency=currency)
    except money.AmountError as exc:
        return str(exc)
    return ""


def draft_checked(draft: Draft) -> Draft:
    """The draft with its fields checked (``ValidationError`` naming each bad field)."""
    errors = {}
    for name, limit in (("name", 120), ("description", 2000)):
        value = getattr(draft, name)
        problem = typed_text_error(value, name, limit) or ("" if value.strip() else "required")
        if problem:
            errors[name] = problem
    problem = reward_error(draft.reward, draft.currency)
    if problem:
        errors["reward"] = problem
    if not 1 <= draft.minutes <= 600:
        errors["minutes"] = "The estimated time is 1 to 600 minutes."
    if not 1 <= draft.places <= 10000:
        errors["places"] = "Places are 1 to 10,000."
    if not draft.devices or not set(draft.devices) <= set(rules.DEVICES):
        errors["devices"] = f"Choose at least one of {', '.join(rules.DEVICES)}."
    for name in ("allow_groups", "block_groups", "previous_studies"):
        try:
            setattr(draft, name, _ids(getattr(draft, name), name))
        except ValidationError as exc:
            errors.update(exc.message_dict)
    if errors:
        raise ValidationError(errors)
    return draft


def prolific_study_create(
    *, study: Study, user, draft: Draft, study_url: str, client=None
) -> ProlificStudy:
    """Create the Prolific study as a draft (UNPUBLISHED): the entry URL with Prolific's
    placeholders, the three completion codes with their actions, reward, time, places,
    devices and filters. The study is linked to it (``prolific_study_id``)."""
    _admin(user)
    draft = draft_checked(draft)
    if prolific_state(study) is not None or study.prolific_study_id:
        raise ValidationError({"prolific": "This study is already linked to a Prolific study."})
    state = ProlificStudy(study=study, prolific_id="pending", created_by=user)
    codes = rules.Codes(study.completion_code, study.screened_out_code, state.failed_attention_code)
    terms_group = draft.block_groups[0] if draft.block_groups else ""
    body = {
        "name": draft.name,
        "internal_name": f"{draft.name} (how2review study {study.pk})",
        "description": draft.description,
        "external_study_url": rules.entry_url(study_url),
        "prolific_id_option": "url_parameters",
        "completion_codes": rules.completion_codes(codes, exclusion_group=terms_group),
        "total_available_places": draft.places,
        "estimated_completion_time": draft.minutes,
        "reward": money.minor_units(draft.reward),
        "device_compatibility": draft.devices,
        "filters": rules.filters(
            allow_groups=draft.allow_groups,
            block_groups=draft.block_groups,
            previous_studies=draft.previous_studies,
        ),
    }
    created = logged_call(
        study=study,
        user=user,
        action=A.STUDY_CREATE,
        target=draft.name[:255],
        summary=f"POST /studies/ places={draft.places} "
        f"reward={money.shown(draft.reward, draft.currency)} "
        f"minutes={draft.minutes} devices={','.join(draft.devices)}",
        call=lambda c: c.create_study(body),
        client=client,
    )
    prolific_id = str(created.get("id", ""))
    if not prolific_id:
        raise ProlificError("Prolific created the study but gave no id.")
    with transaction.atomic():
        state.prolific_id = prolific_id
        state.status = str(created.get("status") or "UNPUBLISHED")
        state.status_at = timezone.now()
        state.total_places = draft.places
        state.registered = {**body, "draft": {k: str(v) for k, v in asdict(draft).items()}}
        state.save()
        study.prolific_study_id = prolific_id
        study.save(update_fields=["prolific_study_id"])
    return state


def _patch(study, user, state, changes: dict, summary: str, client):
    return logged_call(
        study=study,
        user=user,
        action=A.STUDY_UPDATE,
        target=state.prolific_id,
        summary=summary,
        call=lambda c: c.update_study(state.prolific_id, changes),
        client=client,
    )


def prolific_study_publish(*, study: Study, user, pilot_places: int = 0, client=None):
    """Publish the draft; with ``pilot_places`` (fewer than the places), only that many
    places first: the pilot."""
    _admin(user)
    state = _state(study)
    if not rules.transition_allowed("PUBLISH", state.status):
        raise ValidationError({"prolific": f"A study that is {state.status} cannot be published."})
    if pilot_places and not 1 <= pilot_places < state.total_places:
        raise ValidationError(
            {"pilot_places": f"A pilot is 1 to {state.total_places - 1} places (fewer than all)."}
        )
    client = client or ProlificClient()
    if pilot_places:
        _patch(
            study,
            user,
            state,
            {"total_available_places": pilot_places},
            f"pilot: places {state.total_places} → {pilot_places}",
            client,
        )
    answer = logged_call(
        study=study,
        user=user,
        action=A.STUDY_PUBLISH,
        target=state.prolific_id,
        summary=f"PUBLISH ({pilot_places} pilot places)" if pilot_places else "PUBLISH",
        call=lambda c: c.transition_study(state.prolific_id, "PUBLISH"),
        client=client,
    )
    state.pilot_places = pilot_places
    if pilot_places:
        state.total_places = pilot_places
    state.save(update_fields=["pilot_places", "total_places"])
    _status_from(state, answer, "ACTIVE")
    return state


def _status_from(state: ProlificStudy, answer, fallback: str) -> None:
    status = answer.get("status") if isinstance(answer, dict) else None
    study_status_apply(
        prolific_id=state.prolific_id, status=status or fallback, at=timezone.now(), source="app"
    )


def prolific_study_transition(*, study: Study, user, action: str, note: str = "", client=None):
    """Pause, resume (``START``) or stop the study on Prolific (admins). ``note``: why, added
    to the logged call's summary."""
    _admin(user)
    return _transition(study, user, action, f"{action}: {note}" if note else action, client)


def prolific_study_transition_by_app(*, study: Study, action: str, why: str, client=None):
    """The same operation done by the app itself, not by a person (no user on the logged call,
    ``why`` in its summary): pausing recruitment once a study's interval reached its target
    (validation.stopping). People go through :func:`prolific_study_transition`."""
    if not why.strip():
        raise ValidationError({"why": "Say why the app changes the study on Prolific."})
    return _transition(study, None, action, f"{action}: {why}", client)


def _transition(study: Study, user, action: str, summary: str, client):
    state = _state(study)
    if action not in TRANSITION_ACTIONS:
        raise ValidationError({"action": f"Choose one of {', '.join(TRANSITION_ACTIONS)}."})
    if not rules.transition_allowed(action, state.status):
        raise ValidationError({"action": f"{action} is not possible while {state.status}."})
    answer = logged_call(
        study=study,
        user=user,
        action=TRANSITION_ACTIONS[action],
        target=state.prolific_id,
        summary=summary,
        call=lambda c: c.transition_study(state.prolific_id, action),
        client=client,
    )
    after = {"PAUSE": "PAUSED", "START": "ACTIVE", "STOP": "AWAITING REVIEW"}[action]
    _status_from(state, answer, after)
    return state


def prolific_places_add(*, study: Study, user, places: int, client=None) -> ProlificStudy:
    _admin(user)
    state = _state(study)
    if not 1 <= places <= 10000:
        raise ValidationError({"places": "Add 1 to 10,000 places."})
    if state.status == "UNPUBLISHED":
        raise ValidationError({"places": "Publish first; a draft's places are set at creation."})
    total = state.total_places + places
    _patch(
        study,
        user,
        state,
        {"total_available_places": total},
        f"places {state.total_places} → {total}",
        client,
    )
    state.total_places = total
    state.save(update_fields=["total_places"])
    return state


def pilot_confirm(
    *, study: Study, user, minutes: int, reward: Decimal, places: int, client=None
) -> ProlificStudy:
    """After the pilot: set the estimated time and reward the researcher confirmed (on
    Prolific and in the pay terms) and add ``places``."""
    _admin(user)
    state = _state(study)
    if not state.pilot_places or state.pilot_confirmed_at:
        raise ValidationError({"pilot": "There is no pilot waiting for confirmation."})
    errors = {}
    if not 1 <= minutes <= 600:
        errors["minutes"] = "The estimated time is 1 to 600 minutes."
    currency = study_pay(study).currency
    problem = reward_error(reward, currency)
    if problem:
        errors["reward"] = problem
    if not 1 <= places <= 10000:
        errors["places"] = "Add 1 to 10,000 places."
    if errors:
        raise ValidationError(errors)
    total = state.total_places + places
    _patch(
        study,
        user,
        state,
        {
            "estimated_completion_time": minutes,
            "reward": money.minor_units(reward),
            "total_available_places": total,
        },
        f"after the pilot: {minutes} min, reward {money.shown(reward, currency)}, places {state.total_places} → {total}",
        client,
    )
    with transaction.atomic():
        pay_terms_update(study=study, user=user, reward=reward, estimated_minutes=minutes)
        state.total_places = total
        state.pilot_confirmed_at = timezone.now()
        state.save(update_fields=["total_places", "pilot_confirmed_at"])
    return state


# --- reading back (researchers; the beat task) -------------------------------------------------


RECONCILE_SHOWN = 20  # changes of the last read kept for the study page


def prolific_study_sync(*, study: Study, user=None, client=None) -> dict:
    """Read the study and its submissions from Prolific and apply what changed, through the
    same service the webhooks use; returns Prolific's counts. ``user`` None: the beat task."""
    if user is not None and not is_researcher(user):
        raise PermissionDenied("Only researchers and admins read Prolific.")
    state = _state(study)
    client = client or ProlificClient()
    now = timezone.now()
    remote = logged_call(
        study=study,
        user=user,
        action=A.STUDY_GET,
        target=state.prolific_id,
        summary=f"GET /studies/{state.prolific_id}/",
        call=lambda c: c.get_study(state.prolific_id),
        client=client,
    )
    changes: list[str] = []
    outcome = study_status_apply(
        prolific_id=state.prolific_id, status=remote.get("status", ""), at=now, source="poll"
    )
    if outcome.startswith("study "):  # a new status, not "ignored" or "nothing changed"
        changes.append(outcome)
    subs = logged_call(
        study=study,
        user=user,
        action=A.LIST,
        target=state.prolific_id,
        summary=f"GET /studies/{state.prolific_id}/submissions/ (all pages)",
        call=lambda c: c.list_submissions(state.prolific_id),
        client=client,
    )
    counts: dict[str, int] = {}
    for sub in subs:
        status = str(sub.get("status", "")).upper()
        counts[status] = counts.get(status, 0) + 1
        outcome = submission_status_apply(
            submission_id=str(sub.get("id", "")),
            status=status,
            at=now,
            source="poll",
            prolific_pid=str(sub.get("participant_id", "")),
            study=study,
        )
        if outcome.startswith("recorded"):  # what the webhooks had not told (or not yet)
            changes.append(f"{sub.get('participant_id', '')}: {outcome}")
    counts["places_taken"] = int(remote.get("places_taken") or 0)
    reconciled = {
        "by": "the beat task" if user is None else user.get_username(),
        "n_changed": len(changes),
        "changes": changes[:RECONCILE_SHOWN],
    }
    ProlificStudy.objects.filter(pk=state.pk).update(
        counts={**counts, "reconciled": reconciled}, synced_at=now
    )
    return counts


def prolific_poll_all() -> int:
    """The beat task: sync every live study created from the app. With a webhook URL the
    deliveries carry the changes and this only reconciles: a study is read again once its last
    read is ``PROLIFIC_RECONCILE_SECONDS`` old, so a lost delivery is caught."""
    due_before = None
    if conf.prolific_webhook_url():
        due_before = timezone.now() - timedelta(seconds=conf.prolific_reconcile_seconds())
    n = 0
    for state in live_studies():
        if due_before is not None and state.synced_at is not None and state.synced_at > due_before:
            continue
        try:
            prolific_study_sync(study=state.study)
        except ProlificError as exc:  # logged as a failed call; the next beat tries again
            log.warning("Prolific poll of %s failed: %s", state.prolific_id, exc)
        else:
            n += 1
    return n
