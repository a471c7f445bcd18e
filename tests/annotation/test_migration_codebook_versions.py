"""Annotation 0014 makes the codebook versions: the shipped codebook is stored as version 1 and
every critical-failure study points there; a study of another form type keeps its form type's
own codebook. Reversible."""

from __future__ import annotations

import pytest

from annotation.codebook import CODEBOOK
from annotation.codebook_text import as_json
from tests.support.migrations import back_to_the_leaf, leaf_nodes, migrate_to  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("back_to_the_leaf")]

BEFORE = [("annotation", "0013_text_limits")]
AFTER = [("annotation", "0014_codebook_versions")]


def test_the_shipped_codebook_becomes_version_1_of_every_critical_failure_study():
    old = migrate_to(BEFORE, state_with=leaf_nodes("judging"))
    Study = old.get_model("annotation", "Study")
    cf = Study.objects.create(name="cf", slug="cf-study", form_type="critical_failure")
    rating = Study.objects.create(name="r", slug="r-study", form_type="rating")

    new = migrate_to(AFTER)
    CodebookVersion = new.get_model("annotation", "CodebookVersion")
    Study = new.get_model("annotation", "Study")
    (v1,) = CodebookVersion.objects.all()
    assert v1.number == 1 and v1.content == as_json(CODEBOOK) and v1.note == "shipped codebook"
    assert Study.objects.get(pk=cf.pk).codebook_version_id == v1.pk
    assert Study.objects.get(pk=rating.pk).codebook_version_id is None

    old = migrate_to(BEFORE)
    Study = old.get_model("annotation", "Study")
    assert Study.objects.count() == 2
