"""Prompt and codebook versions in the console (Django admin, through the test client) and the
API: admins add the next version (from an existing one with ``?from=``), a refusal is a field
error with the typed text kept; researchers read every version and its diff, add nothing,
change nothing, delete nothing; annotators see none of it."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation.codebook import CODEBOOK
from annotation.codebook_text import as_json
from annotation.models import CodebookVersion
from judging import prompting
from judging.models import PromptVersion
from tests.core.factories import api_client

# version 1 of each comes from a data migration, which a transactional test elsewhere may
# have emptied: the tests ask for it through ``shipped()``, which makes it again when missing
pytestmark = pytest.mark.django_db

H3 = prompting.load_template("judge_h3")


def test_admin_adds_a_prompt_version_from_an_existing_one(client, make_user, roles):
    admin = make_user("ada", role="admin", staff=True)
    client.force_login(admin)
    v1 = PromptVersion.objects.shipped("judge_h3")
    add = reverse("admin:judging_promptversion_add")
    form = client.get(add, {"from": v1.pk}).content.decode()
    assert "# Important Guidelines" in form
    text = H3.replace("## L1 as Reference", "## L1 as the Reference")
    res = client.post(add, {"name": "judge_h3", "text": text, "note": "wording"})
    assert res.status_code == 302, res.content.decode()[:2000]
    v2 = PromptVersion.objects.get(name="judge_h3", number=2)
    assert (v2.text, v2.note, v2.author) == (text, "wording", admin)
    page = client.get(reverse("admin:judging_promptversion_change", args=[v2.pk])).content
    html = page.decode()
    assert "1 line(s) added, 1 removed" in html
    assert "<del" in html and "## L1 as Reference" in html and "<ins" in html
    assert "New version from this one" in html and 'name="_save"' not in html
    listing = client.get(reverse("admin:judging_promptversion_changelist")).content.decode()
    assert "judge_h3 v2" in listing and "first version" in listing
    # refused: an unrenderable text, the same text again — field errors, the text kept
    res = client.post(add, {"name": "judge_h3", "text": "Judge {candidate}", "note": ""})
    html = res.content.decode()
    assert res.status_code == 200 and "unknown placeholder(s) {candidate}" in html
    assert "Judge {candidate}" in html
    res = client.post(add, {"name": "judge_h3", "text": text, "note": ""})
    assert "this text is already judge_h3 v2" in res.content.decode()
    assert PromptVersion.objects.count() == 2
    # never changed nor deleted, even by an admin
    change = reverse("admin:judging_promptversion_change", args=[v2.pk])
    assert client.post(change, {"name": "judge_h3", "text": "x {steps}"}).status_code == 403
    delete = reverse("admin:judging_promptversion_delete", args=[v2.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert PromptVersion.objects.get(pk=v2.pk).text == text


def test_researchers_read_versions_and_add_nothing(client, make_user, roles):
    client.force_login(make_user("rex", role="researcher", staff=True))
    v1 = PromptVersion.objects.shipped("judge_h3")
    listing = client.get(reverse("admin:judging_promptversion_changelist"))
    assert listing.status_code == 200 and "judge_h3 v1" in listing.content.decode()
    assert reverse("admin:judging_promptversion_add") not in listing.content.decode()
    html = client.get(reverse("admin:judging_promptversion_change", args=[v1.pk])).content
    assert "New version from this one" not in html.decode() and "shipped text" in html.decode()
    add = reverse("admin:judging_promptversion_add")
    assert client.get(add).status_code == 403
    assert client.post(add, {"name": "judge_h3", "text": "x {steps}"}).status_code == 403
    cb = CodebookVersion.objects.shipped()
    assert (
        client.get(reverse("admin:annotation_codebookversion_change", args=[cb.pk])).status_code
        == 200
    )
    assert client.get(reverse("admin:annotation_codebookversion_add")).status_code == 403
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(reverse("admin:judging_promptversion_changelist")).status_code == 302


def test_admin_adds_a_codebook_version_and_its_diff_names_the_changed_kind(
    client, make_user, roles
):
    client.force_login(make_user("ada", role="admin", staff=True))
    v1 = CodebookVersion.objects.shipped()
    assert v1.content == as_json(CODEBOOK)
    add = reverse("admin:annotation_codebookversion_add")
    form = client.get(add, {"from": v1.pk}).content.decode()
    assert "Redundant repetition" in form
    content = as_json(CODEBOOK)
    content["kinds"][0][1][0][1] = "An L2 step contradicts a condition stated in the goal."
    res = client.post(add, {"content": json.dumps(content), "note": "round 2 wording"})
    assert res.status_code == 302, res.content.decode()[:2000]
    v2 = CodebookVersion.objects.get(number=2)
    html = client.get(reverse("admin:annotation_codebookversion_change", args=[v2.pk])).content
    html = html.decode()
    assert "1 line(s) added, 1 removed" in html
    assert "Kind › Contradictions › Contradiction to the goal: An L2 step contradicts" in html
    content["kinds"] = [["Only group", [["one kind"]]]]
    res = client.post(add, {"content": json.dumps(content), "note": ""})
    assert "kinds[0][1][0]: must be a list of 2 texts" in res.content.decode()
    res = client.post(add, {"content": "{not json", "note": ""})
    assert res.status_code == 200 and CodebookVersion.objects.count() == 2


def test_api_lists_reads_and_admins_create(make_user, roles):
    researcher = api_client(make_user("rex", role="researcher"))
    admin = api_client(make_user("ada", role="admin"))
    annotator = api_client(make_user("ann", role="annotator"))
    PromptVersion.objects.shipped("judge_h3")  # (a transactional test before may have emptied it)
    CodebookVersion.objects.shipped()
    body = researcher.get("/api/prompt-versions/").json()
    (v1,) = body["results"]
    assert (v1["name"], v1["number"], v1["note"]) == ("judge_h3", 1, "shipped text")
    assert "text" not in v1  # the list is light; a version's read has the text
    one = researcher.get(f"/api/prompt-versions/{v1['id']}/").json()
    assert (
        one["text"] == H3 and one["changes"] == f"{len(H3.splitlines())} line(s) added, 0 removed"
    )
    assert annotator.get("/api/prompt-versions/").status_code == 403
    new = {"text": "Short judge: {goal} {reference_steps} {steps}", "note": "short"}
    assert researcher.post("/api/prompt-versions/", new, format="json").status_code == 403
    made = admin.post("/api/prompt-versions/", new, format="json")
    assert made.status_code == 201 and made.json()["number"] == 2
    assert made.json()["author"] == "ada" and made.json()["diff"].startswith("lines 1–")
    again = admin.post("/api/prompt-versions/", new, format="json")
    assert again.status_code == 400 and "already judge_h3 v2" in str(again.json())
    bad = admin.post("/api/prompt-versions/", {"text": "x {nope}"}, format="json")
    assert bad.status_code == 400 and "text" in bad.json()
    assert (
        admin.post("/api/prompt-versions/", {"text": "a\x00 {steps}"}, format="json").status_code
        == 400
    )
    assert researcher.get("/api/prompt-versions/99999/").status_code == 404
    assert researcher.get("/api/prompt-versions/x/").status_code == 404

    (c1,) = researcher.get("/api/codebook-versions/").json()["results"]
    assert c1["number"] == 1
    read = researcher.get(f"/api/codebook-versions/{c1['id']}/").json()
    assert read["content"]["question"] == CODEBOOK["question"]
    content = as_json(CODEBOOK)
    content["question"] = "Would this stop someone from reaching the goal?"
    post = {"content": content, "note": "question"}
    assert researcher.post("/api/codebook-versions/", post, format="json").status_code == 403
    made = admin.post("/api/codebook-versions/", post, format="json")
    assert made.status_code == 201 and made.json()["number"] == 2
    assert "+Question: Would this stop someone" in made.json()["diff"]
    bad = admin.post("/api/codebook-versions/", {"content": {"question": "?"}}, format="json")
    assert bad.status_code == 400 and "definition: missing" in str(bad.json())
    assert admin.post("/api/codebook-versions/", {"content": "x"}, format="json").status_code == 400
