"""A researcher creates a study in the browser and reads its progress page."""

from __future__ import annotations

import json

import pytest

from annotation.models import Study
from tests.annotation.factories import make_generations

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def create_with_known_items(page, body: str) -> None:
    """Choose a known-items file with ``body`` and submit the form."""
    file = {"name": "known.jsonl", "mimeType": "application/jsonl", "buffer": body.encode()}
    page.set_input_files("input[name=known_items]", files=[file])
    page.get_by_role("button", name="Create study").click()


def test_researcher_creates_study_and_sees_progress(live_server, page, shots, make_user):
    gens = make_generations(5)
    make_user("resa", role="researcher", password="pw-Test-12345")
    page.goto(f"{live_server.url}/accounts/login/?next=/study/manage/new/")
    page.fill("input[name=username]", "resa")
    page.fill("input[name=password]", "pw-Test-12345")
    page.locator("form").get_by_role("button").click()
    page.get_by_role("heading", name="New annotation study").wait_for()
    page.fill("input[name=name]", "Browser study")
    page.select_option("select[name=dataset]", str(gens[0].procedure.dataset_id))
    page.select_option("select[name=generator]", str(gens[0].generator_id))
    page.fill("input[name=limit]", "4")
    page.fill("input[name=min_seconds_per_item]", "60")
    # a known-items file with a bad second line: the field names the line, nothing is created
    known = json.dumps(
        {"generation_id": gens[4].pk, "kind": "attention", "expected_has_failure": True}
    )
    create_with_known_items(page, known + '\n{"kind": "gold"}\n')
    page.get_by_text("known.jsonl line 2: give exactly one of generation_id").wait_for()
    assert not Study.objects.exists()
    create_with_known_items(page, known + "\n")
    page.get_by_text("created with 4 items and 1 known item.").wait_for()
    study = Study.objects.get(name="Browser study")
    assert study.items.count() == 5 and study.min_seconds_per_item == 60
    assert study.items.get(generation=gens[4]).kind == "attention"
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in page.locator("#prolific-url").inner_text()
    page.screenshot(path=str(shots / "research-progress.png"), full_page=True)
    page.get_by_role("button", name="Pause").click()
    page.get_by_role("button", name="Resume").wait_for()
    study.refresh_from_db()
    assert study.status == "paused"
