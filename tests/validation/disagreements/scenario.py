"""The disagreement scenario, built through the real models (shared by the selector, page, API
and browser tests of the disagreement list).

Nine regular items, three annotators P0, P1, P2 (item 4: two), one judge ``judge-d``:

====  ==========  ========  ============  ====================  ==============  =========
item  people      majority  judge         judge L2 links        people L2       kind
====  ==========  ========  ============  ====================  ==============  =========
0     1 1 0       failure   failure       2, 3                  2 | 4           both_failure, J = 1/3
1     1 1 1       failure   none          —                     2               people_failure
2     0 0 1       none      failure       1                     3               judge_failure
3     0 0 0       none      none          —                     —               both_none
4     1 0         tie       failure       2                     2               people_split
5     0 0 0       none      parse failed  —                     —               parse_failed
6     1 1 0       failure   failure       (L1 1 only)           (L1 only)       both_failure, J undefined
7     1 1 1       failure   failure       2                     2 | 2 | 2       both_failure, J = 1
8     0 0 0       none      not judged                                          (left out)
====  ==========  ========  ============  ====================  ==============  =========

Items 0–3 have the topic "Kitchen", 4–8 "Clinic"; items 0, 2 and 4 are by generator "gen-x",
the others by the study's own generator.
"""

from __future__ import annotations

from annotation.models import StudyItem
from benchmarks.models import Generation, Generator, Topic
from judging.models import Judgment
from judging.services.items import item_content_hash
from tests.annotation.factories import make_annotation, make_study
from tests.judging.factories import make_judge

PEOPLE = [
    (1, 1, 0),
    (1, 1, 1),
    (0, 0, 1),
    (0, 0, 0),
    (1, 0),
    (0, 0, 0),
    (1, 1, 0),
    (1, 1, 1),
    (0, 0, 0),
]
# the L2 (and L1) steps each annotator saying "failure" links, per item
PEOPLE_LINKS = {
    0: [[2], [4]],
    1: [[2], [2], [2]],
    2: [[3]],
    4: [[2]],
    6: [[], []],
    7: [[2], [2], [2]],
}
# (has_failure | None for a parse failure, [(L1 steps, L2 steps) per critical failure]) or skip
JUDGE = [
    (True, [([1], [2]), ([], [3])]),
    (False, []),
    (True, [([2], [1])]),
    (False, []),
    (True, [([1], [2])]),
    (None, []),
    (True, [([1], [])]),
    (True, [([2], [2])]),
    "skip",
]
EXPECTED_KINDS = [
    "both_failure",
    "people_failure",
    "judge_failure",
    "both_none",
    "people_split",
    "parse_failed",
    "both_failure",
    "both_failure",
]


def _judgment(judge, generation, verdict, failures) -> None:
    parse_failed = verdict is None
    critical = [
        {"failure": f"Judge failure {k + 1} of {generation.pk}.", "L1_steps": l1, "L2_steps": l2}
        for k, (l1, l2) in enumerate(failures)
    ]
    Judgment.objects.create(
        judge=judge,
        judge_key=judge.judge_id,
        content_hash=item_content_hash(generation),
        source_example_id=generation.procedure.source_example_id,
        reasoning="" if parse_failed else f"Judge reasoning on {generation.pk}.",
        critical_failures=critical,
        has_failure=bool(verdict),
        n_failures=len(critical),
        parse_failed=parse_failed,
        raw_output="not json" if parse_failed else "{}",
    )


def disagreement_scenario() -> dict:
    study = make_study(n_items=len(PEOPLE))
    items = list(
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR)
        .select_related("generation__procedure")
        .order_by("position", "id")
    )
    cooking = Topic.objects.get_or_create(name="Kitchen", defaults={"slug": "kitchen-test"})[0]
    health = Topic.objects.get_or_create(name="Clinic", defaults={"slug": "clinic-test"})[0]
    gen_x = Generator.objects.create(name="gen-x", model="x")
    for k, item in enumerate(items):
        procedure = item.generation.procedure
        procedure.topic = cooking if k < 4 else health
        procedure.save(update_fields=["topic"])
        if k in (0, 2, 4):
            Generation.objects.filter(pk=item.generation_id).update(generator=gen_x)
    for k, (item, labels) in enumerate(zip(items, PEOPLE, strict=True)):
        links = iter(PEOPLE_LINKS.get(k, []))
        for a, value in enumerate(labels):
            failures = []
            if value:
                l2 = next(links)
                failures = [
                    {
                        "description": f"P{a} sees a failure in item {k}.",
                        "l1_steps": [1],
                        "l2_steps": l2,
                    }
                ]
            make_annotation(
                item=item,
                annotator=f"P{a}",
                has_failure=bool(value),
                failures=failures,
                comments=f"P{a} comment on item {k}." if a == 0 else "",
            )
    judge = make_judge(name="judge-d", model="judge-model")
    for item, spec in zip(items, JUDGE, strict=True):
        if spec != "skip":
            _judgment(judge, item.generation, *spec)
    return {"study": study, "items": items, "judge": judge, "gen_x": gen_x}
