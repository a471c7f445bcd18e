"""Reads of judges' verdicts: judgments joined to study items and generations, and a study's
human majority (labels from the annotation selectors, the majority by
:func:`judging.agreement.human_majority`). The leaderboard (:mod:`judging.leaderboard`) and
every validation report (:mod:`validation`) read verdicts through these functions.

Judgments are matched to generations by *content* (``judge_key`` + ``content_hash``, the key a
judgment is stored under), so a verdict reused across runs or imported counts wherever that
exact content appears. One query for all judges.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from annotation.models import Study, StudyItem
from annotation.selectors.flow import study_label_rows
from benchmarks.models import Generation
from core.errors import FieldRefusal
from judging import prompting
from judging.agreement import human_majority
from judging.models import Judge, Judgment

Verdicts = dict[Any, bool | None]


def judges_by_names(names: Sequence[str], *, field: str = "judges") -> list[Judge]:
    """The judges named, in that order; a :class:`core.errors.FieldRefusal` of ``field`` (the
    parameter that named them) naming those that do not exist."""
    found = {j.name: j for j in Judge.objects.filter(name__in=names)}
    missing = [n for n in names if n not in found]
    if missing:
        raise FieldRefusal({field: f"no judge named {', '.join(repr(m) for m in missing)}"})
    return [found[n] for n in names]


def judges_named(names: Sequence[str]) -> list[Judge] | None:
    """The judges chosen by name (unknown names ignored), by name; None when none is named."""
    names = [n for n in names if n]
    if not names:
        return None
    return list(Judge.objects.filter(name__in=names).order_by("name"))


def judge_pks_by_key(judges: Sequence[Judge]) -> dict[str, list[int]]:
    """Judge pks by ``judge_id``: two judge rows configured identically share their judgments."""
    out: dict[str, list[int]] = defaultdict(list)
    for j in judges:
        out[j.judge_id].append(j.pk)
    return out


def generation_content_hashes(generation_ids: Iterable[int]) -> dict[int, str]:
    rows = Generation.objects.filter(pk__in=list(generation_ids)).values_list(
        "id", "procedure__goal", "procedure__steps", "predicted_steps"
    )
    return {
        gid: prompting.content_hash(goal=goal, reference_steps=ref or [], steps=cand or [])
        for gid, goal, ref, cand in rows.iterator(chunk_size=2000)
    }


def verdicts_for_generations(
    *, judges: Sequence[Judge], generation_ids: Iterable[int]
) -> dict[int, Verdicts]:
    """``{judge pk: {generation id: has_failure | None (parse failed)}}``; generations a judge
    never judged are absent from its mapping. One query for all judges."""
    hashes = generation_content_hashes(generation_ids)
    by_hash: dict[str, list[int]] = defaultdict(list)
    for gid, h in hashes.items():
        by_hash[h].append(gid)
    judges_by_key = judge_pks_by_key(judges)
    out: dict[int, Verdicts] = {j.pk: {} for j in judges}
    rows = Judgment.objects.filter(
        judge_key__in=list(judges_by_key), content_hash__in=list(by_hash)
    ).values_list("judge_key", "content_hash", "has_failure", "parse_failed")
    for key, h, has_failure, parse_failed in rows.iterator(chunk_size=5000):
        for pk in judges_by_key[key]:
            for gid in by_hash[h]:
                out[pk][gid] = None if parse_failed else has_failure
    return out


def verdicts_by_content(*, judges: Sequence[Judge]) -> dict[int, Verdicts]:
    """``{judge pk: {content_hash: has_failure | None}}`` over everything each judge judged."""
    judges_by_key = judge_pks_by_key(judges)
    out: dict[int, Verdicts] = {j.pk: {} for j in judges}
    rows = Judgment.objects.filter(judge_key__in=list(judges_by_key)).values_list(
        "judge_key", "content_hash", "has_failure", "parse_failed"
    )
    for key, h, has_failure, parse_failed in rows.iterator(chunk_size=5000):
        for pk in judges_by_key[key]:
            out[pk][h] = None if parse_failed else has_failure
    return out


# --- a study's items and their human majority -------------------------------------------------


def study_item_generations(*, study: Study) -> dict[int, int]:
    """``{study item id: generation id}`` of the study's regular items."""
    return dict(
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR).values_list(
            "id", "generation_id"
        )
    )


def judges_with_verdicts(*, generation_ids: Iterable[int]) -> list[Judge]:
    hashes = set(generation_content_hashes(generation_ids).values())
    keys = set(
        Judgment.objects.filter(content_hash__in=list(hashes))
        .values_list("judge_key", flat=True)
        .distinct()
    )
    return list(Judge.objects.filter(judge_id__in=keys).order_by("name"))


def study_majority(study: Study) -> tuple[dict[int, bool | None], list, dict[int, int]]:
    """(``{generation id: human majority}``, the label rows, ``{item id: generation id}``)."""
    label_rows = study_label_rows(study=study)
    majority_by_item = human_majority((item, annotator, h) for item, annotator, h, _ in label_rows)
    item_generation = study_item_generations(study=study)
    majority = {item_generation[i]: v for i, v in majority_by_item.items() if i in item_generation}
    return majority, label_rows, item_generation
