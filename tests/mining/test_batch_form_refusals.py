"""The new-batch and promote forms: a control character or a bad number is an error
at its field with the typed values kept (not the bare 400 page); after a refusal the file
already sent is kept, so it need not be chosen again; the replay backend is offered."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from mining.models import MiningBatch
from tests.mining.factories import doc

pytestmark = pytest.mark.django_db

RECORDING = "demo/fixtures/mining/replies.jsonl"


def _file(name="docs.jsonl"):
    return SimpleUploadedFile(name, "".join(json.dumps(doc(i)) + "\n" for i in range(2)).encode())


@pytest.fixture
def web(make_user, media_root):
    c = Client()
    c.force_login(make_user("adm", role="admin"))
    return c


def _kept_token(html: str) -> str:
    match = re.search(r'name="kept_file" value="([^"]+)"', html)
    assert match, "the refused page carries no kept file"
    return match.group(1)


def test_the_replay_backend_is_offered(web):
    html = web.get("/mining/new/").content.decode()
    assert 'value="replay"' in html and "Replay recorded replies" in html
    assert 'name="recording"' in html


def test_a_control_character_is_a_field_error_and_the_file_is_kept(web):
    r = web.post(
        "/mining/new/",
        {
            "name": "beans\x00batch",
            "file": _file(),
            "stages": ["1", "2"],
            "backend": "replay",
            "recording": RECORDING,
            "model": "gpt-4.1",
            "min_steps": "5",
            "max_steps": "99999999999999",  # a bad number: a field error too
        },
    )
    html = r.content.decode()
    assert r.status_code == 200 and "This request was refused" not in html
    assert "Name: contains a control character (U+0000 NUL)" in html
    assert "Ensure this value is less than or equal to 2147483647" in html
    assert 'value="beans' in html  # what was typed stays in the form
    assert "Kept from your last try: <strong>docs.jsonl</strong>" in html
    assert not MiningBatch.objects.exists()

    # the next try names the kept file instead of choosing it again
    r = web.post(
        "/mining/new/",
        {
            "name": "beans batch",
            "kept_file": _kept_token(html),
            "stages": ["1", "2"],
            "backend": "replay",
            "recording": RECORDING,
            "model": "gpt-4.1",
            "min_steps": "5",
            "max_steps": "15",
        },
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    batch = MiningBatch.objects.get()
    assert batch.name == "beans batch" and batch.source_name == "docs.jsonl"
    assert batch.backends["procedures"]["backend"] == "replay"
    assert batch.backends["procedures"]["recording"] == RECORDING
    assert batch.source_file.read().decode().count("\n") == 2


def test_without_a_file_or_a_kept_one_it_says_to_choose_it(web):
    r = web.post("/mining/new/", {"model": "m", "stages": ["1"], "min_steps": 5, "max_steps": 9})
    html = r.content.decode()
    assert "Choose a file to upload." in html
    r = web.post(
        "/mining/new/",
        {"kept_file": "forged", "model": "m", "stages": ["1"], "min_steps": 5, "max_steps": 9},
    )
    assert "Choose a file to upload." in r.content.decode()


def test_replay_needs_a_recording_inside_the_project(web):
    for recording, message in (
        ("", "needs a recording"),
        ("/etc/passwd", "a path inside the project"),
        ("../x.jsonl", "a path inside the project"),
        ("nowhere/replies.jsonl", "No recording at nowhere/replies.jsonl"),
    ):
        r = web.post(
            "/mining/new/",
            {
                "file": _file(),
                "backend": "replay",
                "recording": recording,
                "model": "m",
                "stages": ["2"],
                "min_steps": 5,
                "max_steps": 9,
            },
        )
        assert message in r.content.decode(), recording
    assert not MiningBatch.objects.exists()


def test_the_created_batch_banner_names_no_status_that_goes_stale(web):
    """The banner stays on the page while the status below moves on (queued, running, done):
    it says what happened, and leaves the status to the status."""
    r = web.post(
        "/mining/new/",
        {
            "name": "beans batch",
            "file": _file(),
            "stages": ["1", "2"],
            "backend": "replay",
            "recording": RECORDING,
            "model": "gpt-4.1",
            "min_steps": "5",
            "max_steps": "15",
        },
        follow=True,
    )
    batch = MiningBatch.objects.get()
    banner = re.search(r'<ul class="messages"[^>]*>(.*?)</ul>', r.content.decode(), re.S).group(1)
    assert f"Batch {batch.pk} created; its status and progress are below." in banner
    assert "queued" not in banner.lower()
