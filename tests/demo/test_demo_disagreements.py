"""The demo shows a non-empty disagreement list: on the finished study of SIMULATED annotators,
the paper's published verdicts and the simulated majority differ on at least one item, and the
page marks the annotators as simulated."""

import io

import pytest
from django.core.management import call_command

from annotation.models import Study
from demo.management.commands.load_demo import DEMO_JUDGE
from demo.studies import SIMULATED_STUDY
from judging.models import Judge
from validation.disagreements import reads as sel

pytestmark = pytest.mark.django_db


def test_demo_has_disagreements_to_read(settings, tmp_path, client, make_user):
    settings.VAR_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"  # the demo mining batch's upload
    call_command("load_demo", stdout=io.StringIO())
    study = Study.objects.get(name=SIMULATED_STUDY)
    judge = Judge.objects.get(name=DEMO_JUDGE)
    data = sel.study_disagreements(study=study, judge=judge)
    n_disagreements = len(sel.select_rows(data, sel.Filters()))
    assert n_disagreements >= 1
    assert data.counts["both_failure"] >= 1  # the step overlap has items to summarise
    client.force_login(make_user("demo-reader", role="researcher"))
    response = client.get(
        "/judging/compare/disagreements/", {"study": study.pk, "judge": DEMO_JUDGE}
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.count('class="disagreement-item') == n_disagreements
    assert "<code>simulated-1</code>" in html  # the demo's labels say they are simulated
