"""Reads for the disagreement list: the items of a study where a judge's verdict and the human
majority differ (and, on request, those where they agree), each with the goal, both step lists,
the judge's reasoning and critical failures, and every annotator's label.

The human majority and the judge's verdicts are the validation page's
(:func:`judging.selectors.verdicts.study_majority`, judgments matched by content as in
:func:`judging.selectors.verdicts.verdicts_for_generations`), so every count here equals the
matching count of the validation page. The kinds and the step overlap are
:mod:`validation.disagreements.stats`. Five queries whatever the study's size; filtering, sorting and
paging are done on the rows in memory (a study holds hundreds to a few thousand items).

Query options (page, API and export share :func:`filters_from_query`): ``kind`` (repeated or
comma-separated; default the four disagreement kinds; ``all`` for every kind), ``topic``,
``generator``, ``sort`` (:data:`SORTS`, ``-`` first for descending), ``page``, ``page_size``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from annotation.agreement import Undefined
from annotation.models import Study, StudyItem
from annotation.selectors.report import NO_TOPIC, regular_item_annotations
from core.errors import FieldRefusal
from core.formatting import fmt_count
from core.text import typed_text_error
from judging.models import Judge, Judgment
from judging.selectors import verdicts as cmp_sel
from validation.disagreements import stats as dis

PAGE_SIZE = 20
MAX_PAGE_SIZE = 200
MAX_TEXT = 200  # longest topic / generator name accepted as a filter
MAX_RESAMPLES = 10000
SORTS = {
    "item": "study item",
    "kind": "kind",
    "topic": "topic",
    "generator": "generator",
    "people": "share of annotators saying failure",
    "judge_failures": "number of the judge's critical failures",
    "overlap": "step overlap (both-say-failure items)",
}
HUMAN = {True: "has_failure", False: "no_failure", None: "tie"}


class ParamError(FieldRefusal):
    """Bad query options, each named; the API's error handler answers 400, the page shows
    ``str()`` with a 400."""


@dataclass(frozen=True)
class Filters:
    kinds: tuple[str, ...] = dis.DISAGREEMENTS
    topic: str = ""
    generator: str = ""
    sort: str = "item"
    page: int = 1
    page_size: int = PAGE_SIZE

    def query(self, **override: Any) -> dict[str, Any]:
        """These options as query parameters (``override`` replaces some), defaults left out."""
        values = {
            "kind": ",".join(self.kinds),
            "topic": self.topic,
            "generator": self.generator,
            "sort": self.sort,
            "page": self.page,
            "page_size": self.page_size,
            **override,
        }
        defaults = {"kind": ",".join(dis.DISAGREEMENTS), "sort": "item", "page": 1}
        defaults["page_size"] = PAGE_SIZE
        return {k: v for k, v in values.items() if v not in ("", None, defaults.get(k))}


def judge_name_error(name: str) -> str | None:
    """Why a ``judge`` query value is refused (a control character, over-long), or None."""
    error = typed_text_error(name, "judge", 128)
    return error.removeprefix("judge: ") if error else None


def _whole(raw: str, name: str, *, low: int, high: int, errors: dict[str, str]) -> int | None:
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        errors[name] = f"expected a whole number from {low} to {high}, got {raw[:40]!r}"
        return None
    return int(raw)


def filters_from_query(query: Any) -> Filters:
    """:class:`Filters` from a ``QueryDict`` (or a plain mapping); :class:`ParamError`
    naming every bad option."""
    errors: dict[str, str] = {}
    getlist = getattr(query, "getlist", None)
    raw_kinds = getlist("kind") if getlist else [query.get("kind") or ""]
    names = [k.strip() for raw in raw_kinds for k in (raw or "").split(",") if k.strip()]
    if "all" in names:
        kinds = tuple(dis.KINDS)
    else:
        unknown = [k for k in names if k not in dis.KINDS]
        if unknown:
            errors["kind"] = (
                f"unknown kind {unknown[0][:40]!r}; choose from {', '.join(dis.KINDS)} or all"
            )
        kinds = tuple(k for k in dis.KINDS if k in names) or dis.DISAGREEMENTS
    texts = {}
    for name in ("topic", "generator"):
        value = (query.get(name) or "").strip()
        error = typed_text_error(value, name, MAX_TEXT)
        if error:
            errors[name] = error.removeprefix(f"{name}: ")
            value = ""
        texts[name] = value
    sort = (query.get("sort") or "item").strip()
    if sort.removeprefix("-") not in SORTS:
        errors["sort"] = f"unknown sort {sort[:40]!r}; choose from {', '.join(SORTS)} (- first)"
        sort = "item"
    page = _whole((query.get("page") or "1").strip(), "page", low=1, high=10**6, errors=errors)
    size = (query.get("page_size") or str(PAGE_SIZE)).strip()
    page_size = _whole(size, "page_size", low=1, high=MAX_PAGE_SIZE, errors=errors)
    if errors:
        raise ParamError(errors)
    return Filters(
        kinds=kinds,
        topic=texts["topic"],
        generator=texts["generator"],
        sort=sort,
        page=page or 1,
        page_size=page_size or PAGE_SIZE,
    )


@dataclass
class StudyDisagreements:
    """Every judged, labelled item of a study as a row (see :func:`item_row`), in item order,
    with the counts per kind and the topics and generators present."""

    study: Study
    judge: Judge
    rows: list[dict[str, Any]]
    counts: dict[str, int] = field(default_factory=dict)
    topics: list[str] = field(default_factory=list)
    generators: list[str] = field(default_factory=list)


def _annotations(study: Study) -> dict[int, list[dict[str, Any]]]:
    """Each regular item's labels as the report reads them, failures trimmed to what is shown."""
    return {
        item_id: [
            {
                "annotator": a["annotator_id"],
                "has_failure": a["has_failure"],
                "failures": [
                    {
                        "description": f.get("description", ""),
                        "l1_steps": list(f.get("l1_steps") or []),
                        "l2_steps": list(f.get("l2_steps") or []),
                    }
                    for f in a["failures"]
                ],
                "comments": a["comments"],
            }
            for a in labels
        ]
        for item_id, labels in regular_item_annotations(study=study).items()
    }


def _judgments(judge: Judge, generation_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """``{generation id: the judge's judgment}`` matched by content (as the verdicts are)."""
    hashes = cmp_sel.generation_content_hashes(generation_ids)
    by_hash: dict[str, list[int]] = defaultdict(list)
    for gid, h in hashes.items():
        by_hash[h].append(gid)
    rows = Judgment.objects.filter(judge_key=judge.judge_id, content_hash__in=list(by_hash)).values(
        "content_hash", "has_failure", "parse_failed", "reasoning", "critical_failures"
    )
    out: dict[int, dict[str, Any]] = {}
    for row in rows.iterator(chunk_size=2000):
        for gid in by_hash[row["content_hash"]]:
            out[gid] = row
    return out


def _links(failures: list[dict[str, Any]], l1: str, l2: str) -> dict[str, list[int]]:
    return {
        "l1": sorted(dis.l2_links(failures, key=l1)),
        "l2": sorted(dis.l2_links(failures, key=l2)),
    }


def item_row(
    *, item: Mapping[str, Any], majority: bool | None, judgment: Mapping[str, Any], labels: list
) -> dict[str, Any]:
    """One item as the page, the API and the JSONL export show it."""
    verdict = None if judgment["parse_failed"] else judgment["has_failure"]
    kind = dis.kind_of(majority=majority, judged=True, verdict=verdict)
    failures = [] if judgment["parse_failed"] else list(judgment["critical_failures"] or [])
    judge_links = _links(failures, "L1_steps", "L2_steps")
    human_failures = [f for a in labels if a["has_failure"] for f in a["failures"]]
    people_links = _links(human_failures, "l1_steps", "l2_steps")
    overlap = None
    if kind == dis.BOTH_FAILURE:
        value = dis.jaccard(set(judge_links["l2"]), set(people_links["l2"]))
        overlap = value.to_json() if isinstance(value, Undefined) else {"value": value}
    n_failure = sum(1 for a in labels if a["has_failure"])
    return {
        **item,
        "kind": kind,
        "human_majority": HUMAN[majority],
        "n_annotators": len(labels),
        "n_people_failure": n_failure,
        "judge_verdict": "parse_failed" if verdict is None else HUMAN[verdict],
        "judge_reasoning": "" if judgment["parse_failed"] else judgment["reasoning"],
        "judge_failures": failures,
        "annotations": labels,
        "links": {"judge": judge_links, "people": people_links},
        "step_overlap": overlap,
    }


def study_disagreements(*, study: Study, judge: Judge) -> StudyDisagreements:
    """Every item of ``study`` with human labels that ``judge`` judged (see the module
    docstring), whatever its kind; :func:`select_rows` filters, sorts and pages them."""
    majority, _, item_generation = cmp_sel.study_majority(study)
    judgments = _judgments(judge, list(item_generation.values()))
    labels = _annotations(study)
    items = (
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR)
        .order_by("position", "id")
        .values_list(
            "id",
            "generation_id",
            "generation__procedure__source_example_id",
            "generation__procedure__topic__name",
            "generation__generator__name",
            "generation__procedure__goal",
            "generation__procedure__steps",
            "generation__predicted_steps",
        )
    )
    rows = []
    for iid, gid, sid, topic, generator, goal, ref, gen in items.iterator(chunk_size=2000):
        if gid not in majority or gid not in judgments:
            continue
        item = {
            "item_id": iid,
            "generation_id": gid,
            "source_example_id": sid,
            "topic": topic or NO_TOPIC,
            "generator": generator,
            "goal": goal,
            "reference_steps": list(ref or []),
            "generated_steps": list(gen or []),
        }
        rows.append(
            item_row(item=item, majority=majority[gid], judgment=judgments[gid], labels=labels[iid])
        )
    counts = dict.fromkeys(dis.KINDS, 0)
    for row in rows:
        counts[row["kind"]] += 1
    return StudyDisagreements(
        study=study,
        judge=judge,
        rows=rows,
        counts=counts,
        topics=sorted({r["topic"] for r in rows}),
        generators=sorted({r["generator"] for r in rows}),
    )


def _sort_key(name: str):
    order = {k: i for i, k in enumerate(dis.KINDS)}
    if name == "kind":
        return lambda r: order[r["kind"]]
    if name in ("topic", "generator"):
        return lambda r: r[name]
    if name == "people":
        return lambda r: r["n_people_failure"] / r["n_annotators"] if r["n_annotators"] else 0.0
    return lambda r: len(r["judge_failures"])  # judge_failures


def _overlap(row: dict[str, Any]) -> float | None:
    return (row["step_overlap"] or {}).get("value")


def select_rows(data: StudyDisagreements, filters: Filters) -> list[dict[str, Any]]:
    """The rows of the chosen kinds, topic and generator, sorted (ties in item order);
    :class:`ParamError` for a topic or generator no judged item of the study has."""
    errors = {}
    if filters.topic and filters.topic not in data.topics:
        errors["topic"] = f"no judged item of this study has the topic {filters.topic!r}"
    if filters.generator and filters.generator not in data.generators:
        errors["generator"] = f"no judged item of this study is by {filters.generator!r}"
    if errors:
        raise ParamError(errors)
    rows = [
        r
        for r in data.rows
        if r["kind"] in filters.kinds
        and (not filters.topic or r["topic"] == filters.topic)
        and (not filters.generator or r["generator"] == filters.generator)
    ]
    name = filters.sort.removeprefix("-")
    descending = filters.sort.startswith("-")
    if name == "item":
        return rows[::-1] if descending else rows
    if name == "overlap":  # items without an overlap last, in either direction
        sign = -1 if descending else 1
        return sorted(rows, key=lambda r: (_overlap(r) is None, sign * (_overlap(r) or 0.0)))
    return sorted(rows, key=_sort_key(name), reverse=descending)


@dataclass(frozen=True)
class Page:
    rows: list[dict[str, Any]]
    number: int
    n_pages: int
    count: int


def paginate(rows: list[dict[str, Any]], filters: Filters) -> Page:
    """The page ``filters.page`` of ``rows``; :class:`ParamError` past the last page (an empty
    list has one, empty, page)."""
    n_pages = max(1, math.ceil(len(rows) / filters.page_size))
    if filters.page > n_pages:
        pages = fmt_count(n_pages, "page")
        each = fmt_count(filters.page_size, "item")
        raise ParamError({"page": f"there {'is' if n_pages == 1 else 'are'} {pages} of {each}"})
    start = (filters.page - 1) * filters.page_size
    return Page(
        rows=rows[start : start + filters.page_size],
        number=filters.page,
        n_pages=n_pages,
        count=len(rows),
    )


def overlap_report(
    data: StudyDisagreements, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> dict[str, Any]:
    """The step overlap of the both-say-failure items, summarised with its bootstrap CI
    (:func:`validation.disagreements.stats.overlap_summary`)."""
    values = []
    for row in data.rows:
        if row["kind"] == dis.BOTH_FAILURE:
            overlap = row["step_overlap"]
            value = overlap.get("value")
            values.append(Undefined(overlap["undefined"]) if value is None else value)
    return dis.overlap_summary(values, n_resamples=n_resamples, confidence=confidence, seed=seed)


# --- export ----------------------------------------------------------------------------------

EXPORT_FIELDS = (
    "study_id",
    "judge",
    "item_id",
    "generation_id",
    "source_example_id",
    "topic",
    "generator",
    "kind",
    "human_majority",
    "n_annotators",
    "n_people_failure",
    "judge_verdict",
    "judge_l2_steps",
    "people_l2_steps",
    "step_overlap",
    "goal",
    "judge_reasoning",
    "judge_failures",
    "annotations",
    "reference_steps",
    "generated_steps",
)


def export_row(row: Mapping[str, Any], *, study: Study, judge: Judge) -> dict[str, Any]:
    """A row as the CSV and JSONL exports write it (:data:`EXPORT_FIELDS`, in that order)."""
    values = {
        **row,
        "study_id": study.pk,
        "judge": judge.name,
        "judge_l2_steps": row["links"]["judge"]["l2"],
        "people_l2_steps": row["links"]["people"]["l2"],
        "step_overlap": _overlap(row),
    }
    return {name: values[name] for name in EXPORT_FIELDS}
