"""Writes of a study's pay terms (admins only: they decide what is paid)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction

from annotation.models import Study, StudyPay
from core.roles import is_admin

FIELDS = (
    "currency",
    "reward",
    "estimated_minutes",
    "bonus_per_item",
    "bonus_per_known_correct",
    "exclusion_group_id",
)


@transaction.atomic
def pay_terms_update(*, study: Study, user, **values) -> StudyPay:
    """Set the given fields; ``ValidationError`` (per field) leaves the stored terms as they were."""
    if not is_admin(user):
        raise PermissionDenied("Only admins may change what a study pays.")
    terms = StudyPay.objects.select_for_update().filter(study=study).first() or StudyPay(
        study=study
    )
    for name in FIELDS:
        if name in values:
            setattr(terms, name, values[name])
    terms.full_clean()
    terms.save()
    return terms
