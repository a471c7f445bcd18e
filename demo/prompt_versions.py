"""The demo's two judge prompt versions, DEMO DATA: version 1 of the H.3 prompt
(the shipped text) and a version 2 marked as demo data (``is_demo``; its note says so), and
two judges of one family that differ only in that version. Their verdicts on the finished
study's generations are SIMULATED (no model ran either prompt): version 1 repeats the paper's
published verdicts, version 2 changes a seeded few, so the prompt-version comparison page has
two versions to set side by side. Kept as they are when they exist."""

from __future__ import annotations

import random

from django.db import transaction

from annotation.models import Study, StudyItem
from benchmarks.models import Generation
from judging import prompting
from judging.models import Judge, Judgment, PromptVersion
from judging.selectors.verdicts import verdicts_for_generations
from judging.services.items import item_content_hash
from judging.services.judges import judge_create
from judging.services.prompt_versions import prompt_version_create

JUDGE_V1 = "demo-prompt-v1"
JUDGE_V2 = "demo-prompt-v2"
NOTE = (
    "DEMO DATA: a version 2 made for the demo (one paragraph added to H.3); no model ran it, "
    "its judge's verdicts are simulated"
)
ADDED = (
    "\n\n## Demo addition (version 2)\nTreat a missing safety warning as a critical failure "
    "only when L1 states it.\n"
)
JUDGE_FIELDS = {
    "backend": "openai",
    "model": "demo-simulated (no model is called)",
    "decoding": {"temperature": 0.0},
}
FLIP_SHARE = 0.3
SEED = 4


def _version_2() -> PromptVersion:
    text = prompting.load_template("judge_h3").replace(
        "\n## Acceptable Variations", ADDED + "\n## Acceptable Variations", 1
    )
    found = PromptVersion.objects.filter(
        name="judge_h3", sha256=prompting.text_sha256(text)
    ).first()
    return found or prompt_version_create(text=text, note=NOTE, is_demo=True)


def _judge(name: str, version: PromptVersion) -> Judge:
    return Judge.objects.filter(name=name).first() or judge_create(
        name=name, prompt_version=version, **JUDGE_FIELDS
    )


@transaction.atomic
def prompt_versions_demo_ensure(*, study: Study, published_judge: str) -> list[Judge]:
    """The two demo judges, with simulated verdicts on ``study``'s generations."""
    v1 = PromptVersion.objects.shipped("judge_h3")
    judges = [_judge(JUDGE_V1, v1), _judge(JUDGE_V2, _version_2())]
    generations = list(
        Generation.objects.filter(
            study_items__study=study, study_items__kind=StudyItem.Kind.REGULAR
        )
        .select_related("procedure")
        .order_by("pk")
    )
    published = Judge.objects.filter(name=published_judge).first()
    base = {}
    if published is not None:
        base = verdicts_for_generations(
            judges=[published], generation_ids=[g.pk for g in generations]
        )[published.pk]
    rng = random.Random(SEED)
    for judge in judges:
        rows = []
        for g in generations:
            says = bool(base.get(g.pk))
            if judge.name == JUDGE_V2 and rng.random() < FLIP_SHARE:
                says = not says
            failures = (
                [{"failure": "Simulated failure (demo data).", "L1_steps": [1], "L2_steps": [1]}]
                if says
                else []
            )
            rows.append(
                Judgment(
                    judge=judge,
                    judge_key=judge.judge_id,
                    content_hash=item_content_hash(g),
                    source_example_id=g.procedure.source_example_id,
                    reasoning="SIMULATED verdict (demo data): no model ran this prompt.",
                    critical_failures=failures,
                    has_failure=says,
                    n_failures=len(failures),
                )
            )
        Judgment.objects.bulk_create(rows, ignore_conflicts=True)
    return judges
