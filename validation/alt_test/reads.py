"""Reads for the alt-test of a judge on a study (:mod:`validation.alt_test.stats`), by the study's
form type — each annotator's labels of the study's regular items against the judge's verdict
on the same generations (matched by content, :mod:`judging.selectors.verdicts`):

- ``critical_failure``: has_failure, scored by accuracy;
- ``rating``: per dimension, scored by negative RMSE. A critical-failure judge answers at the
  ends of the scale: no failure → the highest point, a failure → the lowest;
- ``pairwise``: the preferred output (first | second | tie), scored by accuracy. The judge
  prefers the output without a critical failure; the same verdict on both is a tie.

Annotators are named as the study shows them (the Prolific id or ``user-N``). A judge's parse
failure is no label (the item is left out and listed, like items with fewer than 2 annotators).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from annotation.models import Annotation, Study, StudyItem
from judging.models import Judge
from judging.selectors.verdicts import verdicts_for_generations
from validation.alt_test.stats import (
    DEFAULT_EPSILON,
    DEFAULT_Q,
    MIN_ANNOTATORS_PER_ITEM,
    MIN_ITEMS_PER_ANNOTATOR,
    alt_test,
)

FORM_TYPES = ("critical_failure", "rating", "pairwise")


def _annotations(study: Study):
    rows = (
        Annotation.objects.filter(item__study=study, item__kind=StudyItem.Kind.REGULAR)
        .select_related("participant")
        .order_by("participant_id", "item_id")
    )
    for a in rows.iterator(chunk_size=2000):
        yield a.participant.label, a.item_id, a.has_failure, a.label or {}


def _preference(a: bool | None, b: bool | None) -> str | None:
    """The judge's preferred output from its verdicts on the first and second (None: one of
    them unjudged or not parsed)."""
    if a is None or b is None:
        return None
    if a == b:
        return "tie"
    return "second" if a else "first"


def _section(key: str, title: str, scoring: str, judge_answer: str, humans, judge, **opts):
    result = alt_test(humans=humans, judge=judge, scoring=scoring, **opts).to_json()
    return {"key": key, "title": title, "judge_answer": judge_answer, **result}


def label_categories(study: Study) -> int:
    """K, the number of label categories of ``study``'s form type (the planner's default):
    2 for has_failure, 3 for a pairwise preference (first, second, tie), a rating's points."""
    if study.form_type == "pairwise":
        return 3
    if study.form_type == "critical_failure":
        return 2
    return int((study.form_config or {}).get("points", 5))


def study_alt_test(
    *, study: Study, judge: Judge, epsilon: float = DEFAULT_EPSILON, q: float = DEFAULT_Q
) -> dict[str, Any]:
    """The alt-test of ``judge`` on ``study``, one section per label the form type has (module
    docstring). A study of another form type gets ``undefined`` and no sections."""
    opts = {"epsilon": epsilon, "q": q}
    report: dict[str, Any] = {
        "study": {"id": study.pk, "name": study.name, "form_type": study.form_type},
        "judge": {"name": judge.name, "judge_id": judge.judge_id},
        "epsilon": epsilon,
        "q": q,
        "rules": {
            "min_annotators_per_item": MIN_ANNOTATORS_PER_ITEM,
            "min_items_per_annotator": MIN_ITEMS_PER_ANNOTATOR,
            "passes_when": "winning rate ω ≥ 0.5",
        },
        "sections": [],
    }
    if study.form_type not in FORM_TYPES:
        report["undefined"] = (
            f"no alt-test for the {study.form_type!r} form type ({', '.join(FORM_TYPES)})"
        )
        return report
    items = {
        pk: (a, b)
        for pk, a, b in StudyItem.objects.filter(
            study=study, kind=StudyItem.Kind.REGULAR
        ).values_list("id", "generation_id", "generation_b_id")
    }
    generation_ids = {g for pair in items.values() for g in pair if g}
    verdicts = verdicts_for_generations(judges=[judge], generation_ids=generation_ids)[judge.pk]
    labels = list(_annotations(study))
    sections = report["sections"]
    if study.form_type == "critical_failure":
        humans: dict[str, dict] = defaultdict(dict)
        for annotator, item, has_failure, _ in labels:
            humans[annotator][item] = bool(has_failure)
        judged = {i: verdicts[a] for i, (a, _) in items.items() if verdicts.get(a) is not None}
        sections.append(
            _section(
                "has_failure",
                "Critical failure (has_failure)",
                "accuracy",
                "the judge's has_failure",
                humans,
                judged,
                **opts,
            )
        )
    elif study.form_type == "pairwise":
        humans = defaultdict(dict)
        for annotator, item, _, label in labels:
            if label.get("preferred") in ("first", "second", "tie"):
                humans[annotator][item] = label["preferred"]
        judged = {}
        for i, (a, b) in items.items():
            pref = _preference(verdicts.get(a), verdicts.get(b))
            if pref is not None:
                judged[i] = pref
        sections.append(
            _section(
                "preferred",
                "Pairwise preference (preferred output)",
                "accuracy",
                "the output without a critical failure; a tie when both or neither have one",
                humans,
                judged,
                **opts,
            )
        )
    else:
        config = study.form_config or {}
        low = int(config.get("low", 0))
        high = low + int(config.get("points", 5)) - 1
        judged = {
            i: (low if verdicts[a] else high)
            for i, (a, _) in items.items()
            if verdicts.get(a) is not None
        }
        for dim in config.get("dimensions") or []:
            humans = defaultdict(dict)
            for annotator, item, _, label in labels:
                value = (label.get("ratings") or {}).get(dim["key"])
                if isinstance(value, int) and not isinstance(value, bool):
                    humans[annotator][item] = value
            sections.append(
                _section(
                    dim["key"],
                    f"Rating: {dim.get('label', dim['key'])} ({low}–{high})",
                    "neg_rmse",
                    f"{high} when the judge finds no critical failure, {low} when it finds one",
                    humans,
                    judged,
                    **opts,
                )
            )
    return report
