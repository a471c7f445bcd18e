"""A label set (:mod:`annotation.label_set_file`) as the inputs the validation statistics take.
Pure: no Django.

- :func:`alt_test_inputs` — ``{annotator: {item: label}}`` and ``{judge: {item: label}}`` with
  the scoring that fits the labels: categories (0/1 included) by accuracy, numbers by negative
  RMSE (the alt-test paper's two).
- :func:`human_majority` — an item's human label for PPI and the disagreement list: the label
  most of its annotators gave. A tie (one annotator says 1, another 0, or 2 against 2) has no
  majority: the item counts as unlabelled, as for a study (:mod:`validation.ppi.reads`).
- :func:`ppi_inputs` — per group, the paired human majority and judge verdict on the items with
  a majority, and the judge's verdicts on the others; 0/1 labels only.
- :func:`disagreement_rows` — each item people labelled and the judge judged, with its kind
  (:func:`validation.disagreements.stats.kind_of`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from annotation.label_set_file import (
    HUMAN,
    JUDGE,
    NUMERIC,
    Label,
    LabelSet,
    LabelSetError,
    as_number,
)
from validation.disagreements.stats import kind_of

ALL_GROUPS = ""  # the group key of the whole set


def scoring_for(label_set: LabelSet) -> str:
    """``neg_rmse`` for numbers that are not all 0/1, ``accuracy`` for categories."""
    return "neg_rmse" if label_set.label_kind == NUMERIC else "accuracy"


def alt_test_inputs(
    label_set: LabelSet, *, scoring: str | None = None
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], str]:
    """``(humans, judges, scoring)``; numbers as floats under ``neg_rmse``."""
    scoring = scoring or scoring_for(label_set)
    if scoring == "neg_rmse":
        for x in label_set.labels:
            if as_number(x.label) is None:
                raise LabelSetError(
                    f"negative RMSE scores numbers; {x.label!r} is not one",
                    line=x.line,
                    column="label",
                )

    def value(x: Label):
        return as_number(x.label) if scoring == "neg_rmse" else x.label

    humans: dict[str, dict[str, Any]] = {}
    judges: dict[str, dict[str, Any]] = {}
    for x in label_set.labels:
        (humans if x.kind == HUMAN else judges).setdefault(x.source, {})[x.item_id] = value(x)
    return humans, judges, scoring


def require_binary(labels: Iterable[Label], *, what: str) -> None:
    """Refuse the first label that is not 0 or 1, naming its line."""
    for x in labels:
        if x.label not in ("0", "1"):
            raise LabelSetError(
                f"{what} takes 0/1 labels (1 = a critical failure); {x.source!r} gave "
                f"{x.label!r} for item {x.item_id!r}",
                line=x.line,
                column="label",
            )


def human_majority(label_set: LabelSet) -> tuple[dict[str, str | None], dict[str, int]]:
    """``({item: majority label or None when tied}, {item: number of annotators})``."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for x in label_set.of_kind(HUMAN):
        votes[x.item_id][x.label] += 1
    majority: dict[str, str | None] = {}
    for item, counter in votes.items():
        (top, n), *rest = counter.most_common()
        majority[item] = None if rest and rest[0][1] == n else top
    return majority, {item: sum(c.values()) for item, c in votes.items()}


def judge_names(label_set: LabelSet) -> list[str]:
    return label_set.sources(JUDGE)


def _pick_judge(label_set: LabelSet, judge: str | None) -> str:
    names = judge_names(label_set)
    if not names:
        raise LabelSetError("no judge labels (kind judge): nothing to correct or to test")
    if judge is None:
        return names[0]
    if judge not in names:
        raise LabelSetError(f"no judge {judge!r} in the file (judges: {', '.join(names)})")
    return judge


def ppi_inputs(
    label_set: LabelSet, *, judge: str | None = None, group: str | None = None
) -> dict[str, dict[str, list[int]]]:
    """``{group: {"human": [...], "judge": [...], "unlabelled": [...]}}`` for ``judge`` (the
    first in the file if None): ``ALL_GROUPS`` for every item, then one entry per group (only
    ``group`` when given). Labelled: items with a human majority and a verdict of the judge;
    unlabelled: the judge's verdicts on the other items (no human label, or a tie)."""
    name = _pick_judge(label_set, judge)
    require_binary(label_set.labels, what="PPI")
    if group is not None and group not in label_set.groups:
        raise LabelSetError(
            f"no group {group!r} in the file (groups: {', '.join(label_set.groups) or 'none'})"
        )
    majority, _ = human_majority(label_set)
    keys = [ALL_GROUPS, *label_set.groups] if group is None else [group]
    out = {k: {"human": [], "judge": [], "unlabelled": []} for k in keys}
    for x in label_set.of_kind(JUDGE):
        if x.source != name:
            continue
        verdict, human = int(x.label), majority.get(x.item_id)
        for key in dict.fromkeys(k for k in (ALL_GROUPS, x.group) if k in out):
            if human is None:
                out[key]["unlabelled"].append(verdict)
            else:
                out[key]["human"].append(int(human))
                out[key]["judge"].append(verdict)
    return out


def disagreement_rows(label_set: LabelSet, *, judge: str | None = None) -> list[dict[str, Any]]:
    """Each item people labelled and the judge judged: its human labels, majority, verdict and
    kind (binary labels; the first judge if None), items in the file's order."""
    name = _pick_judge(label_set, judge)
    require_binary(label_set.labels, what="The disagreement list")
    majority, n_annotators = human_majority(label_set)
    verdicts = {x.item_id: x for x in label_set.of_kind(JUDGE) if x.source == name}
    people: dict[str, list[Label]] = defaultdict(list)
    for x in label_set.of_kind(HUMAN):
        people[x.item_id].append(x)
    rows = []
    for item, labels in people.items():
        verdict = verdicts.get(item)
        if verdict is None:
            continue
        m = majority[item]
        rows.append(
            {
                "item_id": item,
                "group": verdict.group or labels[0].group,
                "kind": kind_of(
                    majority=None if m is None else m == "1",
                    judged=True,
                    verdict=verdict.label == "1",
                ),
                "majority": m,
                "n_annotators": n_annotators[item],
                "human": [{"source": x.source, "label": x.label, "text": x.text} for x in labels],
                "judge": {"source": name, "label": verdict.label, "text": verdict.text},
            }
        )
    return rows
