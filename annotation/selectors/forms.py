"""The study's form type and what an item shows it (reads; the form types are pure,
:mod:`annotation.form_types`)."""

from __future__ import annotations

from annotation.form_types.base import BoundForm, ItemView
from annotation.form_types.pairwise import shown_swapped
from annotation.form_types.registry import form_for
from annotation.models import Study, StudyItem


def study_form(*, study: Study) -> BoundForm:
    """The study's form type with its checked settings."""
    return form_for(study.form_type, study.form_config)


def item_view(*, item: StudyItem, participant_id: int | None, form: BoundForm) -> ItemView:
    """An item as plain data for its form type; a pairwise item's order is this participant's
    fixed coin flip (:func:`annotation.form_types.pairwise.shown_swapped`)."""
    generation = item.generation
    procedure = generation.procedure
    second = item.generation_b.predicted_steps if item.generation_b_id else ()
    swapped = (
        form.name == "pairwise"
        and participant_id is not None
        and shown_swapped(participant_id=participant_id, item_id=item.pk, salt=str(item.study_id))
    )
    return ItemView(
        goal=procedure.goal,
        l1=list(procedure.steps),
        l2=list(generation.predicted_steps),
        l2_b=list(second),
        context=item.context or {},
        swapped=bool(swapped),
    )


def form_page_context(*, study: Study, assignment, state: dict) -> dict:
    """The item page's form: the critical-failure page as before, or another type's partial
    (``form_template``) with what it shows (``form_page``)."""
    form = study_form(study=study)
    out = {"form_type": form.name, "form_title": form.type.title, "form_template": form.template}
    if form.is_critical_failure:
        return out
    out["form_codebook_title"] = form.type.codebook(config=form.config)["title"]
    view = item_view(item=assignment.item, participant_id=assignment.participant_id, form=form)
    page = form.type.page_context(answer=state.get("answer") or {}, config=form.config, item=view)
    return out | {"form_page": page, "item_view": view}


def form_codebook(*, study: Study) -> dict | None:
    """The training page's instructions of a form type other than critical failure (None: the
    critical-failure codebook, :mod:`annotation.codebook`)."""
    form = study_form(study=study)
    return None if form.is_critical_failure else form.type.codebook(config=form.config)


def submitted_answer_lines(*, study: Study, annotation, typed: dict | None) -> dict:
    """The already-submitted page of a form type other than critical failure: the kept answer
    and what the tab had typed, in words (empty for critical failure: the page shows its own)."""
    form = study_form(study=study)
    if form.is_critical_failure:
        return {}
    answer = (typed or {}).get("answer")
    return {
        "answer_lines": form.type.describe(annotation.label or {}, config=form.config),
        "typed_lines": form.type.describe(answer, config=form.config) if answer else [],
    }


def known_answer_result(
    *, study: Study, item: StudyItem, annotation, form: BoundForm | None = None
) -> tuple[bool, str]:
    """Whether an answer to a known item (attention, qualification, gold) is right, and the
    detail to record (the rule: :meth:`annotation.form_types.base.BoundForm.known_answer`);
    ``form``: the study's form when the caller has it already."""
    return (form or study_form(study=study)).known_answer(
        answer=annotation.label or {},
        has_failure=annotation.has_failure,
        expected_label=item.expected_label,
        expected_has_failure=item.expected_has_failure,
    )
