"""Judging 0006 makes judge prompts versions: the shipped H.3 text is stored as version 1 of
``judge_h3`` and every judge of it points there (its judge id kept); a judge of a template no
file ships gets none. Reversible."""

from __future__ import annotations

import hashlib

import pytest

from judging import prompting
from tests.support.migrations import back_to_the_leaf, migrate_to  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("back_to_the_leaf")]

JUDGING_BEFORE = [("judging", "0005_estimates_and_leaderboards_are_runs")]
JUDGING_AFTER = [("judging", "0006_prompt_versions")]


def test_the_shipped_h3_text_becomes_version_1_of_every_judge_of_it():
    old = migrate_to(JUDGING_BEFORE)
    Judge = old.get_model("judging", "Judge")
    h3 = Judge.objects.create(name="h3", judge_id="id-of-h3", model="m", prompt_template="judge_h3")
    odd = Judge.objects.create(name="odd", judge_id="id-odd", model="m", prompt_template="gone")

    new = migrate_to(JUDGING_AFTER)
    PromptVersion = new.get_model("judging", "PromptVersion")
    Judge = new.get_model("judging", "Judge")
    (v1,) = PromptVersion.objects.all()
    text = prompting.load_template("judge_h3")
    assert (v1.name, v1.number, v1.note) == ("judge_h3", 1, "shipped text")
    assert v1.text == text and v1.sha256 == hashlib.sha256(text.encode()).hexdigest()
    h3, odd = Judge.objects.get(pk=h3.pk), Judge.objects.get(pk=odd.pk)
    assert h3.prompt_version_id == v1.pk and h3.judge_id == "id-of-h3"
    assert odd.prompt_version_id is None and odd.prompt_template == "gone"

    old = migrate_to(JUDGING_BEFORE)  # back: the judges stay, the versions go
    Judge = old.get_model("judging", "Judge")
    assert set(Judge.objects.values_list("name", flat=True)) == {"h3", "odd"}
