"""The console's study-item rows carry a pairwise item's second generation, the context and
a known item's expected answer, checked by the study's form type (a refusal names the row)."""

from __future__ import annotations

import pytest
from django.forms import inlineformset_factory

from annotation.admin import StudyItemFormSet, StudyItemInline
from annotation.models import Study, StudyItem
from tests.annotation.factories import make_form_study, make_pair_generations

pytestmark = pytest.mark.django_db

EDITABLE = [f for f in StudyItemInline.fields if f not in StudyItemInline.readonly_fields]


def _formset(study, rows):
    FormSet = inlineformset_factory(
        Study, StudyItem, formset=StudyItemFormSet, fields=EDITABLE, extra=0
    )
    data = {
        "items-TOTAL_FORMS": str(len(rows)),
        "items-INITIAL_FORMS": "0",
        "items-MIN_NUM_FORMS": "0",
        "items-MAX_NUM_FORMS": "1000",
    }
    for n, row in enumerate(rows):
        base = {"kind": "regular", "position": n, "attempt": 1, "context": "{}"}
        data.update({f"items-{n}-{k}": v for k, v in {**base, **row}.items()})
    return FormSet(data, instance=study, prefix="items")


def test_console_rows_of_a_pairwise_study_are_checked_by_the_form_type():
    firsts, seconds = make_pair_generations(2)
    study = make_form_study("pairwise", specs=[], items_per_participant=1)
    crossed = _formset(study, [{"generation": firsts[0].pk, "generation_b": seconds[1].pk}])
    assert not crossed.is_valid()
    assert "item row 1: generation_b_id must be a generation of the same procedure" in str(
        crossed.errors
    )
    bad_gold = _formset(
        study,
        [
            {
                "generation": firsts[0].pk,
                "generation_b": seconds[0].pk,
                "kind": "gold",
                "expected_label": '{"preferred": "maybe"}',
            }
        ],
    )
    assert not bad_gold.is_valid() and "preferred must be first, second or tie" in str(
        bad_gold.errors
    )
    good = _formset(
        study,
        [
            {
                "generation": firsts[0].pk,
                "generation_b": seconds[0].pk,
                "context": '{"hint": "no oven"}',
            },
            {
                "generation": firsts[1].pk,
                "generation_b": seconds[1].pk,
                "kind": "gold",
                "expected_label": '{"preferred": "tie"}',
            },
        ],
    )
    assert good.is_valid(), good.errors
    good.save()
    gold = study.items.get(kind="gold")
    assert (gold.generation_b_id, gold.expected_label) == (seconds[1].pk, {"preferred": "tie"})
    assert study.items.get(kind="regular").context == {"hint": "no oven"}


def test_console_rows_of_a_critical_failure_study_take_no_second_generation():
    firsts, seconds = make_pair_generations(1)
    study = make_form_study("critical_failure", specs=[], items_per_participant=1)
    rows = [{"generation": firsts[0].pk, "generation_b": seconds[0].pk}]
    formset = _formset(study, rows)
    assert not formset.is_valid() and "For pairwise studies only." in str(formset.errors)
