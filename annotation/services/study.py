"""Study-level writes: creating studies and their items, opening/pausing/closing them, and
letting participants in (Prolific link or account). Its reads: :mod:`annotation.selectors.study`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation import conf, rules
from annotation.models import CodebookVersion, EntryEvent, Participant, Study, StudyItem
from annotation.selectors.annotator import Refused
from annotation.selectors.rounds import entry_exclusion
from annotation.services.form_items import study_form_items_add
from benchmarks.models import Generation
from core.bulk_load import analyze_tables

Kind = StudyItem.Kind
Stage = Participant.Stage

_PROLIFIC_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class EntryRefused(Refused):
    """Why a participant cannot enter; ``reason`` picks the page shown."""


# --- studies --------------------------------------------------------------------------


STUDY_SETTINGS = (
    "description",
    "status",
    "entry",
    "prolific_study_id",
    "overlap",
    "items_per_participant",
    "min_seconds_per_item",
    "attention_rate",
    "attention_warn_after",
    "attention_screen_after",
    "qualification_pass_threshold",
    "completion_code",
    "screened_out_code",
    "assignment_timeout_minutes",
    "show_resources",
    "click_through_l1",
    "form_type",
    "form_config",
    "sampling",
    "sampling_seed",
    "gold_rate",
    "codebook_version",
    "new_participants_per_address",
)
# set by the service that makes a study from a plan (validation.ppi_plan.services), never typed
# on the new-study form or the API, never copied to a new round (its items lose their
# inclusion probabilities there)
PLAN_SETTINGS = ("design", "target_half_width")


@transaction.atomic
def study_create(
    *,
    name: str,
    generation_ids: Iterable[int],
    known_items: Iterable[dict] = (),
    pairs: Iterable[Sequence[int]] = (),
    created_by=None,
    **settings,
) -> Study:
    """Create a study over generations (regular items) plus known-answer items.

    ``pairs``: a pairwise study's regular items, ``[generation_a, generation_b]`` each (two
    generations of the same procedure; checked by :func:`study_form_items_add`, all or none);
    a pairwise study takes pairs instead of ``generation_ids``.

    ``known_items``: ``{generation_id, kind: attention|training|qualification|gold,
    expected_has_failure: bool, explanation?, attempt?}`` (``attempt`` 2: a qualification item
    of the second try, after the training again); in a study of another form type their answer
    is ``expected_label`` instead (checked by the form type), with ``generation_b_id`` for a
    pairwise pair and ``context`` where the form shows one.
    """
    unknown = set(settings) - set(STUDY_SETTINGS) - set(PLAN_SETTINGS)
    if unknown:
        raise ValidationError(f"unknown study setting(s): {', '.join(sorted(unknown))}")
    settings.setdefault("assignment_timeout_minutes", conf.default_assignment_timeout_minutes())
    critical = settings.get("form_type", "critical_failure") == "critical_failure"
    if critical and settings.get("codebook_version") is None:  # the newest codebook
        settings["codebook_version"] = CodebookVersion.objects.latest()
    study = Study(name=name, created_by=created_by, **settings)
    study.full_clean()
    study.save()
    generation_ids, pairs = list(generation_ids), list(pairs)
    if study.form_type == "pairwise" and generation_ids:
        raise ValidationError(
            {
                "generation_ids": "A pairwise study's items are pairs: give pairs, not generation_ids."
            }
        )
    if pairs:
        try:
            study_form_items_add(study=study, items=_pair_specs(pairs))
        except ValidationError as exc:  # "item 2: generation_b_id …" → under "pairs"
            raise ValidationError({"pairs": exc.messages}) from exc
    study_items_add(study=study, generation_ids=generation_ids, kind=Kind.REGULAR)
    if study.form_type != "critical_failure":
        _known_form_items_add(study, list(known_items))
        analyze_tables(StudyItem)  # bulk-filled: plan its queries on its real size
        return study
    for position, spec in enumerate(known_items):
        kind = spec.get("kind")
        if kind not in (Kind.ATTENTION, Kind.TRAINING, Kind.QUALIFICATION, Kind.GOLD):
            raise ValidationError(
                f"known item {position + 1}: kind must be attention, training, qualification or "
                f"gold, not {kind!r}"
            )
        attempt = spec.get("attempt", 1)
        if attempt not in (1, 2) or (attempt == 2 and kind != Kind.QUALIFICATION):
            raise ValidationError(
                f"known item {position + 1}: attempt must be 1, or 2 for a qualification item"
            )
        if not isinstance(spec.get("expected_has_failure"), bool):
            raise ValidationError(
                f"known item {position + 1}: expected_has_failure must be true or false"
            )
        study_items_add(
            study=study,
            generation_ids=[spec["generation_id"]],
            kind=kind,
            expected_has_failure=spec["expected_has_failure"],
            explanation=spec.get("explanation", ""),
            start=position,
            attempt=attempt,
        )
    analyze_tables(StudyItem)  # bulk-filled: plan its queries on its real size
    return study


def _known_form_items_add(study: Study, known_items: list) -> None:
    """Known items of a study of another form type: their answer is ``expected_label``, checked
    by the form type (:func:`study_form_items_add`), all or none."""
    specs = []
    for n, spec in enumerate(known_items, start=1):
        if spec.get("kind") == Kind.REGULAR or "kind" not in spec:
            raise ValidationError(
                {
                    "known_items": f"known item {n}: kind must be attention, training, "
                    "qualification or gold"
                }
            )
        if spec.get("expected_label") is None:
            raise ValidationError(
                {
                    "known_items": f"known item {n}: a {study.form_type} study's known items "
                    "give their answer as expected_label (expected_has_failure is for "
                    "critical-failure studies)"
                }
            )
        keys = ("generation_id", "generation_b_id", "kind", "expected_label", "explanation")
        specs.append({k: spec[k] for k in (*keys, "context", "attempt") if k in spec})
    try:
        study_form_items_add(study=study, items=specs)
    except ValidationError as exc:  # "item 2: …" → "known item 2: …" under "known_items"
        raise ValidationError(
            {"known_items": [f"known {m}" if m.startswith("item ") else m for m in exc.messages]}
        ) from exc


def _pair_specs(pairs: list) -> list[dict]:
    specs = []
    for n, pair in enumerate(pairs, start=1):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValidationError({"pairs": f"pair {n}: give two generation ids [a, b]"})
        specs.append({"generation_id": pair[0], "generation_b_id": pair[1]})
    return specs


def study_items_add(
    *,
    study: Study,
    generation_ids: Iterable[int],
    kind: str = Kind.REGULAR,
    expected_has_failure: bool | None = None,
    explanation: str = "",
    start: int | None = None,
    attempt: int = 1,
) -> list[StudyItem]:
    ids = list(dict.fromkeys(int(g) for g in generation_ids))
    found = set(Generation.objects.filter(pk__in=ids).values_list("pk", flat=True))
    missing = [g for g in ids if g not in found]
    if missing:
        raise ValidationError(f"generation(s) not found: {', '.join(map(str, missing[:10]))}")
    if start is None:
        start = study.items.filter(kind=kind).count()
    items = [
        StudyItem(
            study=study,
            generation_id=g,
            kind=kind,
            position=start + i,
            expected_has_failure=expected_has_failure,
            explanation=explanation,
            attempt=attempt,
            sample_rank=rules.seeded_rank(seed=study.sampling_seed, key=g),
        )
        for i, g in enumerate(ids)
    ]
    try:
        with transaction.atomic():
            return StudyItem.objects.bulk_create(items)
    except IntegrityError as exc:
        raise ValidationError(f"a generation is already in this study as a {kind} item") from exc


def study_set_status(*, study: Study, status: str) -> Study:
    if status not in Study.Status.values:
        raise ValidationError(f"status must be one of {', '.join(Study.Status.values)}")
    if status == Study.Status.OPEN and study.stopped_by_target:
        raise ValidationError(
            {
                "status": "This study stopped when its interval reached the target; an admin "
                "resumes it from the note on the study page (which also resumes recruitment "
                "on Prolific)."
            }
        )
    study.status = status
    study.save(update_fields=["status"])
    return study


def study_set_entry_limit(*, study: Study, value) -> Study:
    """Set how many new participants may join from one network address per entry window
    (a lab session behind one address needs more than the default); 0: no limit."""
    field = Study._meta.get_field("new_participants_per_address")
    try:
        limit = field.clean(str(value).strip() if value is not None else value, study)
    except ValidationError as exc:
        raise ValidationError({field.name: exc.messages}) from None
    study.new_participants_per_address = limit
    study.save(update_fields=["new_participants_per_address"])
    return study


# --- entry ----------------------------------------------------------------------------


def _check_open(study: Study) -> None:
    if study.status == Study.Status.CLOSED:
        raise EntryRefused("closed", "This study is closed and no longer accepts participants.")
    if study.status == Study.Status.PAUSED:
        raise EntryRefused("paused", "This study is paused. Please come back a little later.")


def _has_room(study: Study) -> bool:
    return StudyItem.objects.filter(
        study=study, kind=Kind.REGULAR, n_assigned__lt=study.overlap
    ).exists()


def _enter(
    study: Study, lookup: dict, defaults: dict, existing=None, *, create: bool = True
) -> Participant | None:
    """The participant of ``lookup`` (resumed), or a new one; with ``create=False`` (a GET:
    a link followed, nothing written) None where one would be created, after the same checks."""
    if existing is None:
        existing = Participant.objects.filter(study=study, **lookup).first()
    if existing is not None:
        if existing.stage not in (Stage.DONE, Stage.SCREENED_OUT, Stage.DECLINED, Stage.RETURNED):
            _check_open(study)
        return existing
    _check_open(study)
    if not _has_room(study):
        raise EntryRefused(
            "full", "This study is full: every item already has all the annotators it needs."
        )
    if not create:
        return None
    try:
        with transaction.atomic():
            return Participant.objects.create(study=study, **lookup, **defaults)
    except IntegrityError:  # the same person arriving twice at once
        return Participant.objects.get(study=study, **lookup)


SESSION_CONFLICT_MESSAGE = (
    "This Prolific ID already has a session in progress. Please continue in the browser where "
    "you started, or contact the researcher through Prolific."
)


def _prolific_params(study: Study, params: dict[str, str]) -> dict[str, str]:
    problems = []
    values = {}
    for name in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"):
        value = (params.get(name) or "").strip()
        if not value:
            problems.append(f"{name} is missing")
        elif not _PROLIFIC_ID.match(value):
            problems.append(f"{name} is malformed (letters, digits, - and _ only, at most 64)")
        values[name] = value
    if not problems and study.prolific_study_id and values["STUDY_ID"] != study.prolific_study_id:
        problems.append("STUDY_ID does not match this study")
    if problems:
        raise EntryRefused(
            "bad_link", "This study link is incomplete or wrong: " + "; ".join(problems) + "."
        )
    return values


def _refuse_session_conflict(participant: Participant, session_id: str, client_ip) -> None:
    """The same PID with another SESSION_ID: never resumed while the first is in progress."""
    if participant.stage in (Stage.DONE, Stage.SCREENED_OUT, Stage.DECLINED, Stage.RETURNED):
        return  # nothing left to take over: the final page only
    EntryEvent.objects.create(
        study_id=participant.study_id,
        participant=participant,
        kind=EntryEvent.Kind.SESSION_CONFLICT,
        client_ip=client_ip,
        detail=f"SESSION_ID {session_id[:64]} refused (bound to {participant.prolific_session_id})",
    )
    raise EntryRefused("session_conflict", SESSION_CONFLICT_MESSAGE)


def rate_limited_message(limit: int, minutes: int) -> str:
    """The refusal page's reason for a new participant over the study's address limit."""
    joined = "1 new participant has" if limit == 1 else f"{limit:,} new participants have"
    return (
        f"{joined} already joined this study from your network address in the last "
        f"{minutes} minutes, the most the study allows per address (its setting “New "
        "participants per network address per hour”). Nothing was recorded for you. If you "
        "are in a lab or classroom session where everyone shares one network, ask the "
        "researcher to raise that setting on the study's progress page; otherwise please try "
        "again later."
    )


def _refuse_over_ip_limit(study: Study, client_ip) -> None:
    """At most ``study.new_participants_per_address`` new participants per address and window
    (``ANNOTATION_NEW_PARTICIPANTS_WINDOW_MINUTES``); 0: no limit."""
    limit = study.new_participants_per_address
    if not limit or not client_ip:
        return
    minutes = conf.new_participants_window_minutes()
    since = timezone.now() - timedelta(minutes=minutes)
    recent = Participant.objects.filter(study=study, entry_ip=client_ip, created_at__gte=since)
    if recent.count() < limit:
        return
    logged = EntryEvent.objects.filter(
        study=study, kind=EntryEvent.Kind.RATE_LIMITED, client_ip=client_ip, created_at__gte=since
    )
    if not logged.exists():  # one event per address and window, not one per request
        EntryEvent.objects.create(
            study=study,
            kind=EntryEvent.Kind.RATE_LIMITED,
            client_ip=client_ip,
            detail=f"more than {limit} new participants in {minutes} min "
            "(study setting: new participants per network address)",
        )
    raise EntryRefused("rate_limited", rate_limited_message(limit, minutes))


EXCLUDED_MESSAGE = (
    "Sorry, you cannot take part in this study: you are excluded from it because of an earlier "
    "round of this research. Please return the study on Prolific so that you are not penalised."
)


def _refuse_excluded(study: Study, prolific_pid: str, client_ip) -> None:
    """A new Prolific participant excluded from this study (rejected in an earlier round, or
    in its exclusion group) is refused, and the refusal is logged for the researcher."""
    why = entry_exclusion(study=study, prolific_pid=prolific_pid)
    if not why:
        return
    EntryEvent.objects.create(
        study=study,
        kind=EntryEvent.Kind.EXCLUDED,
        client_ip=client_ip,
        detail=f"PROLIFIC_PID {prolific_pid} refused: {why}"[:255],
    )
    raise EntryRefused("excluded", EXCLUDED_MESSAGE)


def participant_enter_prolific(
    *, study: Study, params: dict[str, str], client_ip: str | None = None, create: bool = True
) -> Participant | None:
    """Create or resume a participant from a Prolific link's query parameters (``create=False``:
    resume only, None where the consent would create one — a participant is created when they
    consent, never by following a link).

    The first entry binds the PROLIFIC_PID to its SESSION_ID: the same pair resumes (from any
    browser: it is Prolific's own link); the same PID with another SESSION_ID is refused while
    the session is in progress, and recorded for the researcher (EntryEvent)."""
    if not study.accepts_prolific:
        raise EntryRefused(
            "bad_link", "This study is not run through Prolific; please log in with your account."
        )
    values = _prolific_params(study, params)
    existing = Participant.objects.filter(study=study, prolific_pid=values["PROLIFIC_PID"]).first()
    if existing is None:
        _refuse_excluded(study, values["PROLIFIC_PID"], client_ip)
        _refuse_over_ip_limit(study, client_ip)
    participant = _enter(
        study,
        {"prolific_pid": values["PROLIFIC_PID"]},
        {"prolific_session_id": values["SESSION_ID"], "entry_ip": client_ip},
        existing=existing,
        create=create,
    )
    if participant is not None and participant.prolific_session_id != values["SESSION_ID"]:
        _refuse_session_conflict(participant, values["SESSION_ID"], client_ip)
    return participant


def participant_enter_account(*, study: Study, user, create: bool = True) -> Participant | None:
    """The account's one participant in the study, resumed or (``create``) new."""
    if not study.accepts_accounts:
        raise EntryRefused(
            "bad_link", "This study is run through Prolific; please use the link from Prolific."
        )
    return _enter(study, {"user": user}, {}, create=create)
