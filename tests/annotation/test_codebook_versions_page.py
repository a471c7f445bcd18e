"""The codebook versions page in the app (researchers and admins, not only the console): each
version's statistics (its studies, annotations, share marked with a failure, Krippendorff's α
per study) and the diff between a version and any earlier one; a bad choice is a 400 naming
the parameter."""

from __future__ import annotations

import pytest

from annotation.codebook import CODEBOOK
from annotation.codebook_text import as_json
from annotation.models import Annotation, CodebookVersion
from annotation.selectors.codebook_versions import codebook_version_stats
from annotation.services.codebook_versions import codebook_version_create
from tests.annotation.factories import make_labelled_study

pytestmark = pytest.mark.django_db

URL = "/study/codebook-versions/"


def _content(**changes) -> dict:
    return {**as_json(CODEBOOK), **changes}


@pytest.fixture
def versions():
    v1 = CodebookVersion.objects.shipped()
    v2 = codebook_version_create(content=_content(question="Q two?"), note="round 2")
    study = make_labelled_study()  # names the newest version, v2
    v3 = codebook_version_create(
        content=_content(question="Q two?", definition="Defined again (round 3)."), note="round 3"
    )
    return {"v1": v1, "v2": v2, "v3": v3, "study": study}


def test_statistics_per_version(versions):
    rows = {r["version"].number: r for r in codebook_version_stats(enqueue=_no_worker)}
    assert sorted(rows) == [1, 2, 3]
    study = versions["study"]
    assert [s["study"] for s in rows[2]["studies"]] == [study]
    assert rows[1]["studies"] == [] and rows[3]["studies"] == []
    annotations = Annotation.objects.filter(item__study=study)
    assert rows[2]["n_annotations"] == annotations.count() > 0
    share = annotations.filter(has_failure=True).count() / annotations.count()
    assert rows[2]["failure_share"] == pytest.approx(share)
    assert rows[2]["studies"][0]["alpha"]["value"] is not None


def test_the_page_shows_statistics_and_a_diff_against_any_earlier_version(
    versions, client, make_user
):
    client.force_login(make_user("res", role="researcher"))
    page = client.get(URL)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="codebook-v3"' in html and versions["study"].name in html
    assert "Krippendorff" in html and "None" not in html
    latest = client.get(URL).context["diff"]  # v3 against the version before (v2)
    assert latest.n_added == latest.n_removed == 1
    both = client.get(URL, {"version": 3, "against": 1}).context["diff"]
    assert both.n_added == both.n_removed == 2  # the question and the definition
    assert (
        "Defined again (round 3)." in client.get(URL, {"version": 3, "against": 1}).content.decode()
    )


@pytest.mark.parametrize(
    "params, message",
    [
        ({"version": "x"}, "version: expected a version number"),
        ({"version": 9}, "version: there is no codebook v9"),
        ({"version": 2, "against": 3}, "against: choose a version before v2"),
        ({"version": 3, "against": "-1"}, "against: expected a version number"),
    ],
)
def test_a_bad_choice_is_a_400_naming_the_parameter(versions, client, make_user, params, message):
    client.force_login(make_user("res", role="researcher"))
    response = client.get(URL, params)
    assert response.status_code == 400 and message in response.content.decode()


def test_annotators_are_refused(versions, client, make_user):
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(URL).status_code == 403


def _no_worker(study_id: int) -> None:  # small studies: computed in the request
    raise AssertionError(f"study {study_id}: a small study's report was sent to a worker")
