"""Builders of benchmark data and studies for the annotation tests."""

from __future__ import annotations

import itertools

from annotation.labels import ParsedLabel
from annotation.services import study as study_services
from annotation.services.flow import participant_consent, participant_finish_training
from benchmarks.models import Dataset, Generation, Generator, Procedure

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


def working_participant(study, pid: str):
    from annotation.models import Participant

    p = study_services.participant_enter_prolific(study=study, params=prolific(pid))
    participant_consent(participant=p, agree=True)
    participant_finish_training(participant=p)
    return Participant.objects.select_related("study").get(pk=p.pk)
