"""Reads of a stored label set: its rows as the pure label set, and everything it answers —
the alt-test of a judge, the PPI-corrected How2Score per group, the people's agreement (α,
κ, AC1) and the disagreements — computed as the commands compute them on the same file
(``alt_test``, ``how2score_ppi``, ``agreement_report --labels``), so the page and the commands
give the same numbers."""

from __future__ import annotations

from typing import Any

from annotation.agreement_report import build_report
from annotation.label_set_file import HUMAN, Label, LabelSetError, agreement_rows
from annotation.label_set_file import LabelSet as ParsedLabelSet
from validation.alt_test import planner as alt_test_planner
from validation.alt_test.stats import DEFAULT_Q, EPSILON_BY_ANNOTATORS, alt_test
from validation.alt_test.words import power_sentence, verdict_sentence
from validation.disagreements.stats import DISAGREEMENTS, KINDS
from validation.label_sets.adapters import (
    alt_test_inputs,
    disagreement_rows,
    judge_names,
    ppi_inputs,
)
from validation.models import LabelSet
from validation.ppi.stats import how2score_ppi
from validation.ppi.words import ppi_sentences

BOOTSTRAP = 1000  # as agreement_report's default
MAX_DISAGREEMENTS = 200


def parsed(label_set: LabelSet) -> ParsedLabelSet:
    rows = label_set.rows.order_by("id").values_list(
        "item_id", "source", "kind", "label", "group", "text", "line"
    )
    return ParsedLabelSet(labels=[Label(*r) for r in rows], file_format=label_set.file_format)


def _alt_test(data: ParsedLabelSet, judge: str, epsilon: float, annotators: str) -> dict:
    try:
        humans, judges, scoring = alt_test_inputs(data)
    except LabelSetError as exc:
        return {"undefined": str(exc)}
    if len(humans) < 2:
        return {
            "undefined": f"{len(humans)} annotator(s): the alt-test leaves one out of two or more"
        }
    result = alt_test(humans=humans, judge=judges[judge], scoring=scoring, epsilon=epsilon,
                      q=DEFAULT_Q).to_json()  # fmt: skip
    estimate = None
    if not result["passed"]:
        estimate = alt_test_planner.items_needed(
            n_categories=len(data.categories), n_annotators=len(humans), epsilon=epsilon
        )
    return {
        **result,
        "sentence": verdict_sentence(result, judge=judge, annotators=annotators),
        "power": power_sentence(result, estimate),
    }


def _ppi(data: ParsedLabelSet, judge: str) -> dict:
    try:
        inputs = ppi_inputs(data, judge=judge)
    except LabelSetError as exc:
        return {"undefined": str(exc), "groups": []}
    groups = []
    for key, rows in inputs.items():
        result = how2score_ppi(**rows)
        groups.append(
            {
                "group": key,
                "name": key or "all items",
                **result,
                "sentences": ppi_sentences(result, judge=judge, group=key),
            }
        )
    return {"groups": groups}


def _agreement(data: ParsedLabelSet) -> dict:
    rows = agreement_rows(data)
    if not rows:
        return {"undefined": "no labels of kind human"}
    return build_report(
        rows, group_columns=["group"] if data.groups else [], n_resamples=BOOTSTRAP, seed=0
    )


def _disagreements(data: ParsedLabelSet, judge: str) -> dict:
    try:
        rows = disagreement_rows(data, judge=judge)
    except LabelSetError as exc:
        return {"undefined": str(exc), "rows": [], "counts": {}}
    counts = dict.fromkeys(KINDS, 0)
    for r in rows:
        counts[r["kind"]] += 1
    shown = [{**r, "kind_said": KINDS[r["kind"]]} for r in rows if r["kind"] in DISAGREEMENTS]
    return {
        "rows": shown[:MAX_DISAGREEMENTS],
        "n_shown_of": len(shown),
        "counts": {KINDS[k]: n for k, n in counts.items() if n},
        "n_items": len(rows),
    }


def label_set_report(
    label_set: LabelSet, *, judge: str | None = None, epsilon: float | None = None
) -> dict[str, Any]:
    """Everything the label set answers for ``judge`` (the first in it if None) at ``epsilon``
    (the annotators' kind's ε if None). A ``LabelSetError`` for a judge not in the set."""
    data = parsed(label_set)
    judges = judge_names(data)
    if judge is not None and judge not in judges:
        raise LabelSetError(
            f"no judge {judge!r} in {label_set.name!r} (judges: {', '.join(judges) or 'none'})"
        )
    judge = judge or (judges[0] if judges else None)
    if epsilon is None:
        epsilon = EPSILON_BY_ANNOTATORS[label_set.annotator_kind]
    report: dict[str, Any] = {
        "label_set": {"id": label_set.pk, "name": label_set.name},
        "judges": judges,
        "judge": judge,
        "epsilon": epsilon,
        "label_kind": data.label_kind,
        "annotators": data.sources(HUMAN),
        "agreement": _agreement(data),
    }
    if judge is None:
        why = "no judge labels (kind judge) in this label set"
        report.update(alt_test={"undefined": why}, ppi={"undefined": why, "groups": []},
                      disagreements={"undefined": why, "rows": [], "counts": {}})  # fmt: skip
        return report
    report.update(
        alt_test=_alt_test(data, judge, epsilon, label_set.annotator_kind),
        ppi=_ppi(data, judge),
        disagreements=_disagreements(data, judge),
    )
    return report
