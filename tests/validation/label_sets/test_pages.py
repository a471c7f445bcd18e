"""The label-set pages: a researcher uploads a file and reads one page of answers equal to the
commands' on the same file; refused files are messages at the file field with nothing stored
and the choices kept; admins delete; annotators see nothing."""

from __future__ import annotations

import html
import json
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from tests.validation.label_sets.scenario import csv_text, rows
from validation.models import LabelSet, LabelSetRow

pytestmark = pytest.mark.django_db
URL = "/judging/compare/label-sets/"


def _upload(client, name: str, text: str | bytes, filename: str = "labels.csv", **extra):
    data = text.encode() if isinstance(text, str) else text
    return client.post(
        URL,
        {"name": name, "file": SimpleUploadedFile(filename, data), "annotator_kind": "crowd",
         "critical_failures": "on", **extra},
    )  # fmt: skip


def _command(*args) -> dict:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


def test_upload_and_one_page_of_answers(client, make_user, tmp_path):
    client.force_login(make_user("res", role="researcher"))
    text = csv_text(rows())
    response = _upload(client, "pilot", text, description="three annotators")
    assert response.status_code == 302
    label_set = LabelSet.objects.get(name="pilot")
    assert response["Location"].endswith(f"/label-sets/{label_set.pk}/")
    assert label_set.uploaded_by.username == "res" and label_set.filename == "labels.csv"
    assert label_set.counts["n_labels"] == 780 and label_set.rows.count() == 780

    page = html.unescape(client.get(response["Location"]).content.decode())
    path = tmp_path / "labels.csv"
    path.write_text(text)
    alt = _command("alt_test", "--labels", str(path), "--format", "json")["my-judge"]
    ppi = _command("how2score_ppi", "--labels", str(path), "--format", "json")
    agreement = _command("agreement_report", "--labels", str(path), "--format", "json")
    assert "my-judge may not replace the annotators: it won against 0 of 3 annotators" in page
    assert (
        f"ω = {alt['winning_rate']:.2f}" in page
        and f"ρ = {alt['advantage_probability']:.2f}" in page
    )
    for name in ("model-a", "model-b"):
        g = ppi["groups"][name]
        assert f"{name}'s How2Score judged by my-judge is {100 * g['how2score']:.1f}% (95% CI " \
               f"{100 * g['ci'][0]:.1f}–{100 * g['ci'][1]:.1f}%" in page  # fmt: skip
    assert page.count('<figure class="ppi-forest"><svg') == 3  # all items and the two groups
    assert f"{agreement['alpha']['value']:.3f}" in page
    assert f"{agreement['cohen_kappa']['mean']['value']:.3f}" in page
    assert f"{agreement['gwet_ac1']['value']:.3f}" in page
    assert (
        "Label set pilot" in page and "file labels.csv (CSV" in page and "uploaded by res" in page
    )
    for word in ("undefined", "None", "NaN", "null"):
        assert word not in page
    assert "Delete label set" not in page  # researchers read; admins delete


@pytest.mark.parametrize(
    ("text", "filename", "message"),
    [
        ("item_id,who,kind,label\na,x,human,1\n", "a.csv", "line 1: missing column(s) source"),
        ("item_id,source,kind,label\na,x,robot,1\n", "a.csv", "line 2, column 'kind': unknown kind 'robot'"),
        ("item_id,source,kind,label\na,x,human,1\na,j,judge,2\n", "a.csv",
         "line 3, column 'label': A critical-failure label set (PPI) takes 0/1 labels"),
        (b"item_id,source,kind,label\na,x\x00,human,1\n", "a.csv", "line 2: contains a control character (U+0000 NUL)"),
        (b"", "a.csv", "The submitted file is empty."),
        (b"x" * (50 * 2**20), "big.csv", "over the limit of 20 MiB; nothing was stored"),
    ],
)  # fmt: skip
def test_bad_files_are_messages_at_the_field(client, make_user, text, filename, message):
    client.force_login(make_user("res", role="researcher"))
    response = _upload(client, "refused", text, filename=filename, annotator_kind="experts")
    assert response.status_code == 400
    body = html.unescape(response.content.decode())
    error = body.split('id="id_file-error"', 1)[1].split("</div>", 1)[0]
    assert message in error
    assert 'value="refused"' in body and '<option value="experts" selected>' in body
    assert not LabelSet.objects.exists() and not LabelSetRow.objects.exists()


def test_a_non_binary_file_is_stored_and_says_what_ppi_needs(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    response = _upload(
        client,
        "words",
        "item_id,source,kind,label\na,x,human,1\na,j,judge,2\n",
        critical_failures="",
    )
    page = html.unescape(client.get(response["Location"]).content.decode())
    assert "Not computed: line 3, column 'label': PPI takes 0/1 labels" in page


def test_roles(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    _upload(client, "pilot", csv_text(rows(n_items=40, n_labelled=10)))
    label_set = LabelSet.objects.get()
    delete = f"{URL}{label_set.pk}/delete/"
    assert client.post(delete).status_code == 403
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(URL).status_code == 403
    assert client.get(f"{URL}{label_set.pk}/").status_code == 403
    client.force_login(make_user("adm", role="admin"))
    assert "Delete label set pilot" in client.get(f"{URL}{label_set.pk}/").content.decode()
    assert client.get(delete).status_code == 405
    assert client.post(delete).status_code == 302
    assert not LabelSet.objects.exists() and not LabelSetRow.objects.exists()
    assert client.get(f"{URL}{label_set.pk}/").status_code == 404


def test_the_console_lists_label_sets_and_admins_delete_them(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    _upload(client, "pilot", csv_text(rows(n_items=20, n_labelled=10)))
    label_set = LabelSet.objects.get()
    listing = client.get("/admin/validation/labelset/")
    assert listing.status_code == 200 and "pilot" in listing.content.decode()
    assert client.get("/admin/validation/labelset/add/").status_code == 403
    assert (
        client.post(
            f"/admin/validation/labelset/{label_set.pk}/delete/", {"post": "yes"}
        ).status_code
        == 403
    )
    client.force_login(make_user("adm", role="admin"))
    done = client.post(f"/admin/validation/labelset/{label_set.pk}/delete/", {"post": "yes"})
    assert done.status_code == 302 and not LabelSetRow.objects.exists()
