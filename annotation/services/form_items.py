"""Writes of study items for form types other than critical failure: a pairwise item's
second generation, an item's context (a CustomPlans hint, a solve item's prompt and scoring
record) and a known item's expected answer, checked by the study's form type."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from annotation import rules
from annotation.form_types.base import FormConfigError
from annotation.models import Study, StudyItem
from annotation.selectors.forms import study_form
from benchmarks.models import Generation

Kind = StudyItem.Kind
MAX_CONTEXT_CHARS = 200_000


def _clean_spec(study: Study, form, spec: Mapping, where: str, generations: dict) -> StudyItem:
    kind = spec.get("kind", Kind.REGULAR)
    if kind not in Kind.values:
        raise ValidationError(f"{where}: kind must be one of {', '.join(Kind.values)}")
    gen_id, second_id = spec.get("generation_id"), spec.get("generation_b_id")
    if gen_id not in generations:
        raise ValidationError(f"{where}: generation_id {gen_id!r} not found")
    if form.name == "pairwise":
        if second_id not in generations:
            raise ValidationError(f"{where}: generation_b_id {second_id!r} not found")
        if second_id == gen_id:
            raise ValidationError(f"{where}: generation_b_id must differ from generation_id")
        if generations[second_id].procedure_id != generations[gen_id].procedure_id:
            raise ValidationError(
                f"{where}: generation_b_id must be a generation of the same procedure"
            )
    elif second_id is not None:
        raise ValidationError(f"{where}: generation_b_id is for pairwise studies only")
    context = spec.get("context") or {}
    if not isinstance(context, Mapping):
        raise ValidationError(f"{where}: context must be a JSON object")
    if len(str(context)) > MAX_CONTEXT_CHARS:
        raise ValidationError(f"{where}: context is over {MAX_CONTEXT_CHARS:,} characters")
    if form.name == "customplans" and "hint" not in context:
        # the item's own hint (a CustomPlans dataset imported with import_pack, generated with
        # the customplans protocol): the raters see the condition the procedure was customized to
        gold = generations[gen_id].procedure.payload or {}
        hint = gold.get("hint") or gold.get("customization_hint")
        if isinstance(hint, str) and hint.strip():
            context = {**context, "hint": hint}
    if "hint" in context and not isinstance(context["hint"], str):
        raise ValidationError(f"{where}: context.hint must be text")
    if "record" in context and not isinstance(context["record"], Mapping):
        raise ValidationError(f"{where}: context.record must be a JSON object")
    attempt = spec.get("attempt", 1)
    if attempt not in (1, 2) or (attempt == 2 and kind != Kind.QUALIFICATION):
        raise ValidationError(f"{where}: attempt must be 1, or 2 for a qualification item")
    expected = spec.get("expected_label")
    if kind != Kind.REGULAR:
        try:
            expected = form.type.clean_expected(expected, config=form.config)
        except FormConfigError as exc:
            raise ValidationError(f"{where}: {exc}") from exc
    elif expected is not None:
        raise ValidationError(f"{where}: expected_label is for known (non-regular) items only")
    return StudyItem(
        study=study,
        generation_id=gen_id,
        generation_b_id=second_id,
        kind=kind,
        expected_label=expected,
        context=dict(context),
        explanation=str(spec.get("explanation", "")),
        attempt=attempt,
        sample_rank=rules.seeded_rank(seed=study.sampling_seed, key=gen_id),
    )


def study_form_items_add(*, study: Study, items: Iterable[Mapping]) -> list[StudyItem]:
    """Add items to a study of any form type, all or none: ``{generation_id,
    generation_b_id? (pairwise), kind? (regular | attention | training | qualification |
    gold), context? ({hint?, prompt?, record?}; a CustomPlans item without a hint takes its
    procedure's), expected_label? (known items, checked by the
    form type), explanation?, attempt? (2: a qualification item of the second try)}``. A refusal (ValidationError) names the item (1-based) and field."""
    specs = list(items)
    form = study_form(study=study)
    ids = {s.get(k) for s in specs for k in ("generation_id", "generation_b_id")} - {None}
    ints = {i for i in ids if isinstance(i, int) and not isinstance(i, bool)}
    generations = (
        Generation.objects.select_related("procedure")
        .defer("procedure__source_text")
        .in_bulk(list(ints))
    )
    rows = [
        _clean_spec(
            study, form, spec if isinstance(spec, Mapping) else {}, f"item {n}", generations
        )
        for n, spec in enumerate(specs, start=1)
    ]
    positions: dict[str, int] = {}
    for row in rows:
        if row.kind not in positions:
            positions[row.kind] = study.items.filter(kind=row.kind).count()
        row.position = positions[row.kind]
        positions[row.kind] += 1
    try:
        with transaction.atomic():
            return StudyItem.objects.bulk_create(rows)
    except IntegrityError as exc:
        raise ValidationError(
            "a generation is already in this study as an item of that kind"
        ) from exc


def study_form_item_checked(*, study: Study, spec: Mapping, where: str = "item") -> StudyItem:
    """One item spec (as :func:`study_form_items_add` takes it) checked by the study's form
    type and returned unsaved (the console's item rows use it); ValidationError names
    ``where`` and the field."""
    form = study_form(study=study)
    ids = [spec.get(k) for k in ("generation_id", "generation_b_id")]
    generations = Generation.objects.in_bulk([i for i in ids if isinstance(i, int)])
    return _clean_spec(study, form, spec, where, generations)
