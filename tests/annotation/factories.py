"""Builders for the annotation tests (and the judging tests that compare with human labels):
benchmark data, studies of every form type, participants and their answers, through the real
models and services. Plain functions, options keyword-only, as in every tests/*/factories.py."""

from __future__ import annotations

import itertools
from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from annotation.labels import ParsedLabel, parse_form
from annotation.models import Annotation, Assignment, AttentionCheckResult, Participant
from annotation.selectors.forms import item_view, study_form
from annotation.services import study as study_services
from annotation.services.assignment import participant_current_assignment
from annotation.services.flow import participant_consent, participant_finish_training
from annotation.services.form_items import study_form_items_add
from annotation.services.submission import annotation_submit
from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic

_seq = itertools.count(1)


def make_generations(n: int, *, n_steps: int = 4, prefix: str = "item") -> list[Generation]:
    tag = next(_seq)
    dataset = Dataset.objects.create(name=f"ds-{tag}", version="v1")
    generator = Generator.objects.create(name=f"gen-{tag}", model="test-model")
    out = []
    for i in range(n):
        proc = Procedure.objects.create(
            dataset=dataset,
            source_example_id=f"{prefix}-{tag}-{i}",
            goal=f"Goal {i}: brew a cup of pour-over coffee with a paper filter ({prefix}).",
            resources=["kettle", "paper filter", "ground coffee"],
            steps=[f"Reference step {s} of {prefix} {i}." for s in range(1, n_steps + 1)],
        )
        out.append(
            Generation.objects.create(
                procedure=proc,
                generator=generator,
                predicted_steps=[
                    f"Generated step {s} of {prefix} {i}." for s in range(1, n_steps + 1)
                ],
            )
        )
    return out


def study_page_fields(gens: list[Generation], limit: int, **extra) -> dict:
    """What the new-study page posts for the generator of ``gens`` (every setting filled)."""
    return {
        "name": "Pilot",
        "description": "",
        "entry": "prolific",
        "prolific_study_id": "",
        "overlap": 3,
        "items_per_participant": 2,
        "min_seconds_per_item": 90,
        "attention_rate": 0.1,
        "attention_warn_after": 1,
        "attention_screen_after": 2,
        "qualification_pass_threshold": 0.8,
        "completion_code": "C0DE",
        "screened_out_code": "SCRN",
        "assignment_timeout_minutes": 30,
        "dataset": gens[0].procedure.dataset_id,
        "generator": gens[0].generator_id,
        "limit": limit,
        **extra,
    }


def make_study(
    *,
    n_items: int = 6,
    n_attention: int = 0,
    n_qualification: int = 0,
    n_training: int = 0,
    **settings,
):
    gens = make_generations(n_items + n_attention + n_qualification + n_training)
    regular = gens[:n_items]
    rest = gens[n_items:]
    known = []
    for kind, count in (
        ("attention", n_attention),
        ("qualification", n_qualification),
        ("training", n_training),
    ):
        for _ in range(count):
            g = rest.pop(0)
            known.append(
                {
                    "generation_id": g.pk,
                    "kind": kind,
                    "expected_has_failure": True,
                    "explanation": "L2 step 2 contradicts the goal.",
                }
            )
    settings.setdefault("min_seconds_per_item", 0)
    return study_services.study_create(
        name="Test study", generation_ids=[g.pk for g in regular], known_items=known, **settings
    )


def full_label(
    *, n_steps: int = 4, has_failure: bool = False, failures=None, comments: str = ""
) -> ParsedLabel:
    if has_failure and failures is None:
        failures = [
            {"description": "Step 2 contradicts the goal.", "l1_steps": [2], "l2_steps": [2]}
        ]
    return ParsedLabel(
        goal_ack=True,
        read_steps=list(range(1, n_steps + 1)),
        read_l1_steps=list(range(1, n_steps + 1)),  # the factories' L1 has as many steps
        choice="failure" if has_failure else "none",
        failures=failures or [],
        comments=comments,
    )


def prolific(pid: str, study_id: str = "S1", session: str = "SESS1") -> dict:
    return {"PROLIFIC_PID": pid, "STUDY_ID": study_id, "SESSION_ID": session}


def working_participant(study, pid: str, *, session: str = "SESS1"):
    """A Prolific participant past consent and training (``session``: their SESSION_ID, which
    is Prolific's submission id)."""
    params = prolific(pid, study_id=study.prolific_study_id or "S1", session=session)
    p = study_services.participant_enter_prolific(study=study, params=params)
    participant_consent(participant=p, agree=True)
    participant_finish_training(participant=p)
    return Participant.objects.select_related("study").get(pk=p.pk)


def regular_items(study) -> list:
    """The study's regular items in position order."""
    from annotation.models import StudyItem

    return list(StudyItem.objects.filter(study=study, kind="regular").order_by("position", "id"))


# the failure a human label names when a test only needs "has a failure"
A_FAILURE = [{"description": "Step 2 is wrong.", "l1_steps": [2], "l2_steps": [2]}]


def make_annotation(
    *,
    item,
    participant=None,
    annotator: str = "",
    at=None,
    active_ms: int = 1000,
    wall_ms: int | None = None,
    **fields,
):
    """A submitted answer of ``item`` written straight as rows (its assignment and annotation):
    by ``participant``, or by the participant of the item's study with Prolific id ``annotator``
    (made, working, on first use); submitted at ``at`` (now) after ``active_ms`` of work on the
    item (``wall_ms`` on the page, ``active_ms`` unless given). ``fields``: the annotation's
    (has_failure, label, failures…)."""
    if participant is None:
        participant, _ = Participant.objects.get_or_create(
            study=item.study, prolific_pid=annotator, defaults={"stage": Participant.Stage.WORKING}
        )
    at = at or timezone.now()
    assignment = Assignment.objects.create(
        participant=participant,
        item=item,
        state=Assignment.State.SUBMITTED,
        served_at=at - timedelta(milliseconds=active_ms),
        last_seen_at=at,
        active_ms=active_ms,
        submitted_at=at,
    )
    fields.setdefault("has_failure", False)
    annotation = Annotation.objects.create(
        assignment=assignment,
        participant=participant,
        item=item,
        wall_ms=active_ms if wall_ms is None else wall_ms,
        active_ms=active_ms,
        submitted_at=at,
        **fields,
    )
    return annotation


def make_pair_generations(n: int):
    """``n`` generations and, for each, a second generation of the same procedure by another
    generator ("system-b"): the two sides of pairwise items."""
    firsts = make_generations(n)
    other = Generator.objects.create(name="system-b", model="test-model-b")
    seconds = [
        Generation.objects.create(
            procedure=g.procedure, generator=other, predicted_steps=[f"B step of {g.pk}."]
        )
        for g in firsts
    ]
    return firsts, seconds


def make_form_study(form_type, config=None, *, specs, **settings):
    """A study of ``form_type`` (its ``config``) whose items are ``specs`` (form item specs)."""
    study = study_services.study_create(
        name=f"{form_type} study",
        generation_ids=[],
        form_type=form_type,
        form_config=config or {},
        min_seconds_per_item=0,
        attention_rate=settings.pop("attention_rate", 0.0),
        **settings,
    )
    study_form_items_add(study=study, items=specs)
    return study


def submit_form_answer(participant, data):
    """Serve the participant's next item and submit ``data`` as the page would post it."""
    assignment = participant_current_assignment(participant=participant)
    form = study_form(study=participant.study)
    view = item_view(item=assignment.item, participant_id=participant.pk, form=form)
    label = parse_form({"goal_ack": ["1"], **data}, form=form, item=view)
    return annotation_submit(assignment=assignment, label=label), view


def write_answers(study, pid: str, answers) -> None:
    """``answers``: (item, label) pairs, written as participant ``pid``'s submitted annotations
    one minute apart (40 s of work each)."""
    participant = Participant.objects.create(study=study, prolific_pid=pid, stage="done")
    at = timezone.now() - timedelta(hours=1)
    for item, label in answers:
        at += timedelta(minutes=1)
        make_annotation(item=item, participant=participant, label=label, active_ms=40_000, at=at)


# --- the report scenario: who labels what, through the real flow -------------------------------
# item position -> {annotator: first failing L2 step (failure) or None (no failure)}
NO = "no"
LABELS = {
    0: {"A": 2, "B": 2, "C": 2},
    1: {"A": NO, "B": NO, "C": NO},
    2: {"A": 1, "B": 3, "C": NO},
    3: {"A": NO, "B": NO, "C": 2},
    4: {"A": 1, "B": 1, "C": 2},
    5: {"A": NO, "B": 4, "C": NO},
}
ANNOTATORS = ("A", "B", "C")
TOPIC_ITEMS = (0, 1, 2)  # these items get the topic "Report topic"; the others have none


def label_for(position: int, annotator: str, labels: dict = LABELS):
    step = labels[position][annotator]
    if step == NO:
        return full_label(has_failure=False, comments=f"{annotator} says fine")
    return full_label(
        has_failure=True,
        failures=[
            {
                "description": f"{annotator}: step {step} is wrong",
                "l1_steps": [1],
                "l2_steps": [step],
            }
        ],
        comments=f"{annotator} found a failure",
    )


def label_study(study, labels: dict, annotators) -> dict[str, Participant]:
    """Each annotator enters, is served items by the real flow and submits the planned label."""
    out = {}
    for name in annotators:
        p = working_participant(study, name)
        while (a := participant_current_assignment(participant=p)) is not None:
            Assignment.objects.filter(pk=a.pk).update(
                served_at=timezone.now() - timedelta(seconds=60)
            )
            a.refresh_from_db()
            position = a.item.position
            assert position in labels, "the study served an item outside the plan"
            annotation_submit(
                assignment=a,
                label=label_for(position, name, labels),
                active_ms=1000 * (10 + position),
            )
            p.refresh_from_db()
        out[name] = p
    return out


def make_labelled_study():
    """The report scenario: a study of 6 items with a topic on ``TOPIC_ITEMS``, labelled by
    ``ANNOTATORS`` as ``LABELS`` plans; ``participants_by_name`` and ``items_by_position`` on it."""
    study = make_study(n_items=6, overlap=3, items_per_participant=6, attention_rate=0.0)
    topic, _ = Topic.objects.get_or_create(slug="report-topic", defaults={"name": "Report topic"})
    for item in study.items.select_related("generation__procedure"):
        if item.position in TOPIC_ITEMS:
            item.generation.procedure.topic = topic
            item.generation.procedure.save(update_fields=["topic"])
    participants = label_study(study, LABELS, ANNOTATORS)
    study.participants_by_name = participants
    study.items_by_position = {i.position: i for i in study.items.filter(kind="regular")}
    return study


# --- the annotator's pages through the test client, step by step --------------------------------
def url(name, study, *args):
    """The annotator page ``name`` of ``study``."""
    return reverse(f"annotation:{name}", args=[study.slug, *args])


def enter(client, study, pid="PID1"):
    """A Prolific participant ``pid`` follows the study link."""
    return client.get(
        url("enter", study), {"PROLIFIC_PID": pid, "STUDY_ID": "S1", "SESSION_ID": "X1"}
    )


def to_items(client, study, pid="PID1"):
    """Participant ``pid`` enters, consents and finishes the training: the first item next."""
    r = enter(client, study, pid)
    assert r.status_code == 302 and r.url == url("consent", study)
    r = client.post(url("consent", study), {"consent": "agree"})
    assert r.url == url("training", study)
    r = client.post(url("training", study))
    return r


def item_page_fields(n=4, choice="none", **extra):
    """What the item page posts for an item of ``n`` steps: read, the ``choice``; ``extra``
    fields (a failure's description and steps…) added."""
    data = {
        "goal_ack": "1",
        "read": [str(i) for i in range(1, n + 1)],
        "read_l1": [str(i) for i in range(1, n + 1)],
        "choice": choice,
        "comments": "",
    }
    data.update(extra)
    return data


def current(pid="PID1"):
    """Participant ``pid``'s active assignment."""
    return Assignment.objects.filter(participant__prolific_pid=pid, state="active").get()


# --- the quality scenario: labels, times and attention checks known in advance -----------------
# regular item position -> participant -> has_failure (absent: not labelled)
REGULAR = {
    0: {"A": True, "B": True, "C": True, "D": False},
    1: {"A": False, "B": False, "C": False, "D": False},
    2: {"A": True, "B": True, "C": False},
    3: {"A": False, "B": False, "C": True},
    4: {"A": True, "B": False, "C": True, "D": True},
    5: {"A": False, "B": False, "C": False, "D": True},
}
# active seconds per regular item, in position order of the items each labelled
SECONDS = {
    "A": [40, 50, 60, 40, 50, 60],
    "B": [45] * 6,
    "C": [30, 30, 30, 30, 30, 36],
    "D": [20] * 4,
}
# known items: k0 expects a failure, k1 expects none
KNOWN = {"A": (True, False), "B": (True, True), "D": (False, True)}
PLANTED = {
    "A": [True, True],
    "B": [True, False],
    "D": [False, False],
}  # attention check results (passed?)


def make_quality_study():
    """The quality scenario: four participants' labels (``REGULAR``), times (``SECONDS``),
    known-item answers (``KNOWN``) and attention checks (``PLANTED``), written straight as rows
    so that every figure of the quality and pay pages is known in advance; ``people`` on it."""
    study = make_study(n_items=6, n_attention=2, overlap=4, min_seconds_per_item=30)
    regular = {i.position: i for i in study.items.filter(kind="regular")}
    k0, k1 = list(study.items.filter(kind="attention").order_by("id"))
    k1.expected_has_failure = False
    k1.save(update_fields=["expected_has_failure"])
    start = timezone.now() - timedelta(hours=2)
    people = {}
    for name in ("A", "B", "C", "D"):
        p = Participant.objects.create(study=study, prolific_pid=f"PID_{name}", stage="done")
        people[name] = p
        at = start
        times = iter(SECONDS[name])
        for pos in sorted(REGULAR):
            if name in REGULAR[pos]:
                at += timedelta(minutes=1)
                make_annotation(
                    item=regular[pos],
                    participant=p,
                    has_failure=REGULAR[pos][name],
                    active_ms=next(times) * 1000,
                    at=at,
                )
        for item, value in zip((k0, k1), KNOWN.get(name, ()), strict=False):
            at += timedelta(minutes=1)
            a = make_annotation(
                item=item, participant=p, has_failure=value, active_ms=10_000, at=at
            ).assignment
        for passed in PLANTED.get(name, ()):
            AttentionCheckResult.objects.create(
                participant=p, assignment=a, kind="planted", passed=passed
            )
    study.people = people
    return study
