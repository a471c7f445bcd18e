"""The scoring-run console: admins create (pack and options checked by the service) and launch;
researchers read the run, its summary and failures, and can neither add nor launch."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from benchmarks.models import Dataset, Generator, ScoringRun
from benchmarks.services.scoring_runs import scoring_run_create

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parents[3] / "demo" / "fixtures" / "packs"


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def data():
    path = str(FIXTURES / "procbench.jsonl")
    call_command("import_pack", "procbench", path, "--dataset", "pb", "--generator", "m",
                 stdout=io.StringIO())  # fmt: skip
    return Dataset.objects.get(name="pb"), Generator.objects.get(name="m")


def test_admin_creates_with_checked_options_and_launches(client, make_user, data):
    ds, gen = data
    client.force_login(make_user("boss", role="admin", staff=True))
    add = reverse("admin:benchmarks_scoringrun_add")
    form = {
        "generator": gen.pk,
        "dataset": ds.pk,
        "pack": "procbench",
        "options": '{"nope": 1}',
        "chunk_size": 100,
    }
    refused = client.post(add, form)
    assert refused.status_code == 200
    assert "options: unknown nope for procbench" in refused.content.decode()
    assert not ScoringRun.objects.exists()
    form["options"] = '{"missing_final": "error"}'
    assert client.post(add, form).status_code == 302
    run = ScoringRun.objects.get()
    assert (run.status, run.n_total, run.options) == ("queued", 3, {"missing_final": "error"})
    changelist = reverse("admin:benchmarks_scoringrun_changelist")
    response = client.post(
        changelist, {"action": "launch_runs", "_selected_action": [run.pk]}, follow=True
    )
    text = [str(m) for m in response.context["messages"]]
    assert text[-1] == f"scoring run {run.pk} launched", text


def test_researcher_reads_but_cannot_add_or_launch(client, make_user, data):
    ds, gen = data
    run = scoring_run_create(generator=gen, dataset=ds, pack="procbench", start=False)
    client.force_login(make_user("rita", role="researcher", staff=True))
    page = client.get(reverse("admin:benchmarks_scoringrun_change", args=[run.pk]))
    assert page.status_code == 200 and "procbench" in page.content.decode()
    assert client.get(reverse("admin:benchmarks_scoringrun_add")).status_code == 403
    changelist = reverse("admin:benchmarks_scoringrun_changelist")
    listing = client.get(changelist)
    assert listing.status_code == 200 and "launch_runs" not in listing.content.decode()
    client.post(changelist, {"action": "launch_runs", "_selected_action": [run.pk]})
    run.refresh_from_db()
    assert run.status == "queued" and run.started_at is None


def test_generation_and_procedure_pages_show_stop_tokens_and_pack_results(client, make_user):
    from benchmarks.models import Generation

    path = str(FIXTURES / "longproc-countdown.jsonl")
    call_command("import_pack", "longproc-countdown", path, "--dataset", "cd", "--generator", "m",
                 stdout=io.StringIO())  # fmt: skip
    ds, gen = Dataset.objects.get(name="cd"), Generator.objects.get(name="m")
    from core.runs import engine

    engine.execute_inline(
        scoring_run_create(generator=gen, dataset=ds, pack="longproc-countdown", start=False)
    )
    g = Generation.objects.get(procedure__source_example_id="countdown-f5")
    client.force_login(make_user("rita", role="researcher", staff=True))
    html = client.get(reverse("admin:benchmarks_generation_change", args=[g.pk])).content.decode()
    assert "How it stopped" in html and "812" in html  # prompt tokens
    assert "longproc-countdown" in html  # pack_scores
    page = client.get(reverse("admin:benchmarks_procedure_change", args=[g.procedure_id]))
    assert "Scorer-pack gold" in page.content.decode()
