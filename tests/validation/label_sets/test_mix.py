"""A label set from the app's data: a study's people's labels and a judge's verdicts (items by
generation id, groups by generator), alone or mixed with a file. Its corrected How2Score per
generator equals the PPI section's for the same study and judge; a clash between the file and
the app's data is refused with nothing stored; bad page parameters are 400s with a reason."""

from __future__ import annotations

import html

import pytest
from django.conf import settings

from annotation.label_set_file import LabelSetError
from tests.validation.alt_test.scenario import ppi_scenario
from validation.label_sets.reads import label_set_report
from validation.label_sets.services import label_set_create
from validation.models import LabelSet, LabelSetRow
from validation.ppi.reads import ppi_rankings

pytestmark = pytest.mark.django_db


def test_a_study_and_a_judge_give_the_ppi_sections_numbers():
    s = ppi_scenario()
    label_set = label_set_create(name="from the app", study=s["study"], judge=s["judge"],
                                 max_bytes=settings.LABEL_SET_MAX_BYTES, binary=True)  # fmt: skip
    assert label_set.counts["n_annotators"] == 3 and label_set.counts["n_groups"] == 2
    assert label_set.counts["n_judge_items"] == len(s["gens"])
    report = label_set_report(label_set)
    ours = {g["group"]: g for g in report["ppi"]["groups"]}
    for row in ppi_rankings(study=s["study"], judge=s["judge"])["generators"]:
        g = ours[row["generator"]]
        assert g["how2score"] == pytest.approx(row["how2score"], abs=1e-12)
        assert g["ci"] == pytest.approx(row["ci"], abs=1e-12)
        assert (g["n_labelled"], g["n_unlabelled"]) == (row["n_labelled"], row["n_unlabelled"])


def test_a_study_mixed_with_a_file_of_verdicts():
    s = ppi_scenario()
    verdicts = "item_id,source,kind,label\n" + "".join(
        f"{g},file-judge,judge,{int(v)}\n" for g, v in s["verdict"].items()
    )
    mixed = label_set_create(name="mixed", data=verdicts.encode(), filename="v.csv",
                             study=s["study"], max_bytes=settings.LABEL_SET_MAX_BYTES)  # fmt: skip
    report = label_set_report(mixed)
    assert report["judge"] == "file-judge" and report["ppi"]["groups"][0]["how2score"] is not None
    # the file labels an item as one of the study's annotators: refused, nothing stored
    first = next(iter(s["majority"]))
    clash = f"item_id,source,kind,label\n{first},P0,human,1\n"
    with pytest.raises(LabelSetError, match=f"item '{first}' is labelled by 'P0' both in the file"):
        label_set_create(name="clash", data=clash.encode(), filename="c.csv", study=s["study"],
                         max_bytes=settings.LABEL_SET_MAX_BYTES)  # fmt: skip
    assert not LabelSet.objects.filter(name="clash").exists()
    assert LabelSetRow.objects.filter(label_set__name="clash").count() == 0


def test_bad_page_parameters_are_400s_with_a_reason(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    data = "item_id,source,kind,label\n" + "".join(
        f"i{i},a,human,{i % 2}\ni{i},b,human,{(i // 3) % 2}\ni{i},j,judge,{i % 2}\n"
        for i in range(8)
    )
    label_set = label_set_create(name="small", data=data.encode(), filename="s.csv",
                                 max_bytes=settings.LABEL_SET_MAX_BYTES)  # fmt: skip
    url = f"/judging/compare/label-sets/{label_set.pk}/"
    for params, reason in (({"epsilon": "x"}, "epsilon: expected a number"),
                           ({"epsilon": "5"}, "epsilon: expected a number from -1 to 1"),
                           ({"judge": "ghost"}, "no judge 'ghost' in 'small'")):  # fmt: skip
        response = client.get(url, params)
        assert response.status_code == 400, params
        assert reason in html.unescape(response.content.decode())
    page = html.unescape(client.get(url).content.decode())
    # too few items for the alt-test: said, with the planner's estimate
    assert "The alt-test of j cannot be computed: no annotator has 30 or more items" in page
    assert "This may be for lack of items: each annotator has 8 or more items" in page
    assert (
        client.post("/judging/compare/label-sets/", {"name": "x", "study": "abc"}).status_code
        == 400
    )
    assert client.get("/judging/compare/label-sets/999999/").status_code == 404
