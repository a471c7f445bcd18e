"""What the demo adds so that every page shows something real: the finished study with three
SIMULATED annotators (seeded labels, α near the paper's 0.593), the replayed mining batch, the
home dashboard (one query per stage card, only what a role may open) and the study's
"share with Prolific" panel."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Annotation, Participant, Study
from annotation.selectors.report import study_report
from core.dashboard import home_cards
from demo.simulated import PAPER_ALPHA, draw_labels
from demo.studies import SIMULATED_STUDY


@pytest.fixture
def demo(settings, tmp_path, monkeypatch):
    for name in ("ADMIN", "RESEARCHER", "ANNOTATOR"):
        monkeypatch.setenv(f"DEMO_{name}_PASSWORD", f"pw-{name}-1")
    settings.VAR_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"
    out = io.StringIO()
    call_command("load_demo", stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_draw_labels_is_seeded_and_close_to_the_papers_alpha():
    truth = [True, False, False, True, False, True, False, False, True, False, True]
    shape = [(5, 5)] * len(truth)
    first, again = draw_labels(truth, shape), draw_labels(truth, shape)
    assert first == again
    assert abs(first.alpha - PAPER_ALPHA) < 0.05
    assert all(len(row) == 3 for row in first.labels)
    with pytest.raises(ValueError, match="no seed"):
        draw_labels([True], [(1, 1)], p_agree=1.0, n_annotators=3)


@pytest.mark.django_db
def test_the_finished_study_is_simulated_and_says_so(demo):
    study = Study.objects.get(name=SIMULATED_STUDY)
    assert study.status == "closed" and "SIMULATED" in study.description
    pids = sorted(Participant.objects.filter(study=study).values_list("prolific_pid", flat=True))
    assert pids == ["simulated-1", "simulated-2", "simulated-3"]
    assert Annotation.objects.filter(item__study=study).count() == 3 * study.items.count() == 33
    assert (
        not Annotation.objects.filter(item__study=study)
        .exclude(comments__icontains="simulated")
        .exists()
    )
    report = study_report(study=study)
    alpha = report["alpha"]["value"]
    assert 0.55 <= alpha <= 0.65
    assert f"(drawn: {alpha:.3f})" in study.description  # the report computes what was drawn
    assert "SIMULATED" in demo and "REPLAYED" in demo


@pytest.mark.django_db
def test_home_cards_by_role_and_one_query_each(demo, django_assert_num_queries):
    from django.contrib.auth.models import AnonymousUser, User
    from django.utils.module_loading import import_string

    researcher = User.objects.get(username="researcher")
    keys = [c.key for c in home_cards(user=researcher)]
    assert keys == ["mine", "benchmark", "generate", "judge", "annotate", "agree", "try", "studies"]
    assert [c.key for c in home_cards(user=AnonymousUser())] == ["try"]
    annotator = User.objects.get(username="annotator")  # a signed-in account: its own studies
    assert [c.key for c in home_cards(user=annotator)] == ["try", "studies"]
    for name in ("mine", "benchmark", "generate", "judge", "annotate"):
        path = next(p for p in _dashboard() if p.endswith(f".{name}_card"))
        user = User.objects.get(username="researcher")
        with django_assert_num_queries(2):  # the role lookup, then the card's one query
            card = import_string(path)(user=user)
        assert card.figure not in (None, "", "—"), name


def _dashboard():
    from django.conf import settings

    return settings.HOME_DASHBOARD


@pytest.mark.django_db
def test_empty_home_cards_show_a_dash_with_the_reason_and_the_action(client, make_user):
    client.force_login(make_user("r", role="researcher"))
    html = client.get("/").content.decode()
    assert html.count('class="figure is-empty"') == 6
    assert "No document has been mined yet." in html
    # a researcher may not start a batch: the action is named, not linked
    assert "An admin starts one from the Mining page" in html and "/mining/new/" not in html
    assert "undefined" not in html.lower()
    client.force_login(make_user("a", role="admin"))
    html = client.get("/").content.decode()
    assert 'href="/mining/new/">Start a mining batch' in html


@pytest.mark.django_db
def test_share_with_prolific_panel(demo, client):
    from django.contrib.auth.models import User

    client.force_login(User.objects.get(username="researcher"))
    study = Study.objects.get(name="Demo study: the paper's examples")
    html = client.get(reverse("annotation:study_progress", args=[study.pk])).content.decode()
    assert "Share with Prolific" in html
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}" in html
    assert study.completion_code in html and study.screened_out_code in html
    assert f"cc={study.completion_code}" in html
    test_url = re.search(r'id="test-participant" href="([^"]+)"', html).group(1)
    test_url = test_url.replace("&amp;", "&")
    client.logout()
    response = client.get(test_url)
    assert response.status_code == 302 and response.url.endswith("/consent/")
    testers = Participant.objects.filter(study=study, prolific_pid__startswith="test-")
    assert testers.count() == 0  # following a link creates nobody: the consent POST does
    client.post(response.url, {"consent": "agree"})
    assert testers.count() == 1
    closed = Study.objects.get(name=SIMULATED_STUDY)
    client.force_login(User.objects.get(username="researcher"))
    html = client.get(reverse("annotation:study_progress", args=[closed.pk])).content.decode()
    assert 'id="test-participant"' not in html and "not now, the study is closed" in html


@pytest.mark.django_db
def test_the_console_says_the_demo_batch_was_replayed(demo, client, make_user):
    from demo.mining import DEMO_BATCH
    from mining.models import MiningBatch

    batch = MiningBatch.objects.get(name=DEMO_BATCH)
    client.force_login(make_user("console-admin", role="admin"))
    html = client.get(f"/admin/mining/miningbatch/{batch.pk}/change/").content.decode()
    assert "REPLAYED from recorded replies (no model called)" in html
    assert "demo/fixtures/mining/replies.jsonl" in html
