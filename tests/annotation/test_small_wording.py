"""Small things a person reads: counts in the singular when there is one, the new-study form
with its required choices first and its settings in groups, and a huge description refused
fast in the app's own words with the text kept."""

from __future__ import annotations

import html
import re
import time

import pytest
from django.urls import reverse

from annotation.labels import MAX_STUDY_DESCRIPTION
from annotation.models import Study
from tests.annotation.factories import (
    NO,
    label_study,
    make_generations,
    make_study,
    study_page_fields,
)

pytestmark = pytest.mark.django_db


def test_the_report_counts_one_item_in_the_singular(client, make_user):
    study = make_study(n_items=1, overlap=2, items_per_participant=1, attention_rate=0.0)
    label_study(study, {0: {"A": NO, "B": NO}}, ["A", "B"])
    client.force_login(make_user("r", role="researcher"))
    page = html.unescape(client.get(reverse("annotation:report", args=[study.pk])).content.decode())
    assert "1 item · 2 annotators · 2 labels · 1 item labelled by two or more annotators." in page


def test_the_new_study_form_asks_for_dataset_and_generator_first_in_groups(client, make_user):
    make_generations(2)
    client.force_login(make_user("r", role="researcher"))
    page = client.get(reverse("annotation:study_create")).content.decode()
    names = re.findall(r'<(?:input|select|textarea)[^>]*name="([a-z_0-9]+)"', page)
    names = [n for n in names if n != "csrfmiddlewaretoken"]
    assert names[:2] == ["dataset", "generator"], names[:5]
    legends = re.findall(r"<legend>([^<]+)</legend>", page)
    assert legends == [
        "What to label",
        "The item form",
        "Participants",
        "Quality checks",
        "Prolific",
    ]
    assert "Click through l1" not in page
    assert "Participants click through the L1 steps too" in page


def test_a_5_mb_description_is_refused_fast_in_the_apps_words_with_the_text_kept(client, make_user):
    gens = make_generations(3)
    client.force_login(make_user("r", role="researcher"))
    client.get(reverse("annotation:study_create"))  # the URLconf loaded: time the post only
    huge = "Soak the beans. " * (5 * 1024 * 1024 // 16)
    started = time.perf_counter()
    r = client.post(
        reverse("annotation:study_create"), study_page_fields(gens, 3, description=huge)
    )
    took = time.perf_counter() - started
    page = r.content.decode()
    assert not Study.objects.exists()
    message = (
        f"Description: {len(huge):,} characters, over the limit of {MAX_STUDY_DESCRIPTION:,}; "
        "shorten it (nothing was cut)"
    )
    assert message in page
    assert "Ensure this value has at most" not in page
    assert huge in html.unescape(page)  # the text is kept in its box
    assert took < 3.0, f"{took:.1f} s"


def test_a_request_larger_than_the_form_takes_is_refused_at_the_door(client, make_user):
    gens = make_generations(3)
    client.force_login(make_user("r", role="researcher"))
    huge = "x" * (6 * 1024 * 1024)
    r = client.post(
        reverse("annotation:study_create"), study_page_fields(gens, 3, description=huge)
    )
    assert r.status_code == 413
    assert "larger than the new-study form accepts: the limit is 5.2 MB" in r.content.decode()
    assert not Study.objects.exists()
