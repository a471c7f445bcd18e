"""The demo shows an uploaded label set with its verdicts, SIMULATED and marked as such
(demo.label_sets), uploaded by the demo researcher through the upload service."""

import html
import io

import pytest
from django.core.management import call_command

from demo.label_sets import NAME
from validation.models import LabelSet

pytestmark = pytest.mark.django_db


def test_demo_label_set_and_its_page(settings, tmp_path, client):
    settings.VAR_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    label_set = LabelSet.objects.get(name=NAME)
    assert f"/judging/compare/label-sets/{label_set.pk}/" in out.getvalue()
    assert label_set.uploaded_by.username == "researcher" and "SIMULATED" in label_set.name
    assert label_set.counts == {"n_labels": 780, "n_items": 600, "n_human_items": 60,
                                "n_judge_items": 600, "n_annotators": 3, "n_judges": 1,
                                "n_groups": 2}  # fmt: skip
    call_command("load_demo", stdout=io.StringIO())
    assert LabelSet.objects.filter(name=NAME).count() == 1 and label_set.rows.count() == 780

    client.force_login(label_set.uploaded_by)
    listing = html.unescape(client.get("/judging/compare/label-sets/").content.decode())
    assert NAME in listing
    page = html.unescape(
        client.get(f"/judging/compare/label-sets/{label_set.pk}/").content.decode()
    )
    assert "By the alternative annotator test" in page and "my-judge may" in page
    assert "model-a's How2Score judged by my-judge is" in page
    assert "model-b's How2Score judged by my-judge is" in page
