"""A study names its codebook version: a new critical-failure study names the newest one (or the
one chosen), a study of another form type none; the annotator's training page, the codebook
dialog and the item page show the study's version, not the shipped text; a version cannot be
deleted while a study names it; refusals name the place in the codebook."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db.models import ProtectedError

from annotation.codebook import CODEBOOK
from annotation.codebook_text import as_json, codebook_text
from annotation.models import CodebookVersion
from annotation.services.codebook_versions import codebook_version_create
from tests.annotation.factories import enter, make_form_study, make_study, to_items, url

pytestmark = pytest.mark.django_db

QUESTION = "Would someone following L2 fail to reach the goal because of this?"


def _revised() -> dict:
    content = as_json(CODEBOOK)
    content["question"] = QUESTION
    content["definition"] = "A critical failure stops the goal from being reached (revised)."
    return content


def test_a_new_study_names_the_newest_codebook_version():
    v1 = CodebookVersion.objects.shipped()
    assert v1.content == as_json(CODEBOOK) and v1.number == 1
    first = make_study(n_items=2)
    assert first.codebook_version == v1
    v2 = codebook_version_create(content=_revised(), note="round 2")
    assert v2.number == 2 and v2.previous() == v1
    assert make_study(n_items=2).codebook_version == v2
    assert make_study(n_items=2, codebook_version=v1).codebook_version == v1  # chosen
    first.refresh_from_db()
    assert first.codebook_version == v1  # an existing study keeps its version
    diff = v2.diff()
    assert (diff.n_added, diff.n_removed) == (2, 2)
    assert f"+Question: {QUESTION}" in diff.unified()
    assert codebook_text(v2.content).count("\n") == codebook_text(v1.content).count("\n")
    with pytest.raises(ProtectedError):
        v1.delete()


def test_a_study_of_another_form_type_names_none():
    study = make_form_study("rating", {"preset": "scirecipe"}, specs=[])
    assert study.codebook_version is None


def test_the_annotator_reads_the_studys_version(client):
    codebook_version_create(content=_revised())
    study = make_study(n_items=2)
    enter(client, study)
    client.post(url("consent", study), {"consent": "agree"})
    training = client.get(url("training", study)).content.decode()
    assert QUESTION in training and "(revised)" in training
    assert CODEBOOK["question"] not in training
    partial = client.get(url("codebook_partial", study)).content.decode()
    assert "(revised)" in partial
    client.post(url("training", study))
    item = client.get(url("item", study)).content.decode()
    assert QUESTION in item


def test_a_study_without_a_version_shows_the_shipped_codebook(client):
    study = make_study(n_items=2)
    study.codebook_version = None
    study.save(update_fields=["codebook_version"])
    r = to_items(client, study)
    assert r.status_code == 302
    assert CODEBOOK["question"] in client.get(url("item", study)).content.decode()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c.pop("question"), "question: missing"),
        (lambda c: c.update(extra="x"), "extra: unknown key"),
        (lambda c: c.update(definition=""), "definition: must be a non-empty text"),
        (lambda c: c.update(acceptable=[]), "acceptable: must be a non-empty list"),
        (lambda c: c["critical_examples"][1].pop(), "critical_examples[1]: must be a list of 3"),
        (lambda c: c.update(l1_note="x" * 2001), "l1_note: at most 2000 characters"),
        (lambda c: c.update(question="bad\x07"), "U+0007"),
    ],
)
def test_refusals_name_the_place(change, message):
    content = _revised()
    change(content)
    with pytest.raises(ValidationError) as info:
        codebook_version_create(content=content)
    assert message in " ".join(info.value.message_dict["content"])


def test_the_same_codebook_again_is_refused():
    CodebookVersion.objects.shipped()
    with pytest.raises(ValidationError) as info:
        codebook_version_create(content=as_json(CODEBOOK))
    assert info.value.message_dict["content"] == [
        "this codebook is already codebook v1 (nothing changed)"
    ]


def test_the_item_pages_question_is_read_again_once_a_version_is_saved():
    """The item page keeps a version's question per process by id. A database emptied and
    filled again (a restore, the test suite's) gives an id again for other text: saving a
    version forgets what was read."""
    from annotation.pages.annotator import _codebook_question

    version = codebook_version_create(content=_revised())
    assert _codebook_question(version.pk) == QUESTION
    other = dict(_revised(), question="Would the reader be stuck at this step?")
    CodebookVersion.objects.filter(pk=version.pk).update(content=other)  # the id, other text
    assert _codebook_question(version.pk) == QUESTION  # kept: read once per process and id
    codebook_version_create(content=dict(_revised(), question="A third question?"))
    assert _codebook_question(version.pk) == "Would the reader be stuck at this step?"
