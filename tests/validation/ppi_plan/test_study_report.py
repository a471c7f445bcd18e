"""A study made from a plan shows, on its agreement report, its corrected How2Score: the interval
obtained, the one a uniform sample of the same size would have given and the target, in words;
no number and no placeholder while it is undefined, the reason said instead."""

from __future__ import annotations

import html
import re

import pytest

from validation.ppi_plan.words import interval_sentences

RESULT = {"how2score": 0.7234, "ci": [0.68, 0.7668], "half_width": 0.0434, "n_labelled": 120,
          "n_population": 600, "uniform_half_width": 0.053, "target": 0.05, "reached": True,
          "n_labels": 360, "method": "active inference"}  # fmt: skip


def test_the_interval_beside_the_uniform_one_and_the_target_in_words():
    first, compared, target = interval_sentences(RESULT, sampling="uncertainty")
    assert first == (
        "Corrected How2Score: 72.3% (95% interval 68.0–76.7%, ±4.3 points) from 120 items "
        "labelled by people and the judge's verdicts on 600."
    )
    assert compared.startswith("A uniform sample of the same 120 items would have given about ±5.3")
    assert "made the interval 18% narrower, so keep sampling this way" in compared
    assert target == "The target of ±5.0 points is reached: no more labels are needed."


def test_a_wider_interval_says_to_sample_uniformly_and_an_unreached_target_to_go_on():
    r = {**RESULT, "uniform_half_width": 0.04, "reached": False, "ci": [0.6, 1.02]}
    first, compared, target = interval_sentences(r, sampling="uncertainty")
    assert "60.0–100.0%" in first  # clipped to the score's range
    assert "did not narrow the interval here" in compared and "sample uniformly" in compared
    assert target == "The target of ±5.0 points is not reached yet: keep labelling."
    same = interval_sentences({**r, "uniform_half_width": 0.0445}, sampling="uncertainty")[1]
    assert "about the same" in same and "either way of sampling will do" in same
    uniform = interval_sentences({**r, "target": None}, sampling="uniform")
    assert len(uniform) == 2 and "drawn uniformly" in uniform[1]


@pytest.mark.parametrize(
    "r",
    [
        {"how2score": None, "ci": None, "undefined": "fewer than 2 labelled items", "n_labels": 1},
        {"undefined": "fewer than 2 labelled items"},
    ],
)
def test_no_score_says_why_never_none(r):
    (sentence,) = interval_sentences(r, sampling="uncertainty")
    assert "No corrected How2Score yet" in sentence and "fewer than 2 labelled items" in sentence
    for word in ("None", "NaN", "nan", "inf"):
        assert word not in sentence


def test_an_undefined_uniform_comparison_says_why():
    r = {**RESULT, "uniform_half_width": None}
    compared = interval_sentences(r, sampling="uncertainty")[1]
    assert "cannot be said yet" in compared and "None" not in compared


def test_within_the_target_too_early_says_how_many_labels_the_rule_waits_for():
    r = {**RESULT, "n_labelled": 40, "reached": False}
    target = interval_sentences(r, sampling="uncertainty")[2]
    assert target == (
        "The interval is within the target of ±5.0 points, but a study stops only once 100 items "
        "carry people's label (40 so far): keep labelling."
    )


# --- on the report page ----------------------------------------------------------------------


def _panel(client, study) -> str:
    page = html.unescape(client.get(f"/study/report/{study.pk}/").content.decode())
    if 'id="study-interval"' not in page:
        return ""
    return page.split('id="study-interval"', 1)[1].split("</section>", 1)[0]


@pytest.mark.django_db
def test_the_report_of_a_planned_study_shows_its_corrected_score(client, make_user):
    from decimal import Decimal

    from annotation.models import StudyItem
    from tests.annotation.factories import make_annotation, make_study
    from tests.validation.ppi_plan.scenario import scored
    from validation.active.reads import study_interval
    from validation.ppi_plan.services import study_from_plan

    admin = make_user("boss", role="admin")
    world = scored(n=60, samples=True)
    study = study_from_plan(
        user=admin, name="Planned", judge=world["judge"], dataset=None, n=20, overlap=1,
        items_per_participant=10, reward=Decimal("1.00"), currency="GBP",
        sampling="uncertainty", seed=11, target_half_width=0.05, plan={"n": 20},
    )  # fmt: skip
    client.force_login(make_user("res", role="researcher"))
    empty = _panel(client, study)
    assert "No corrected How2Score yet: 0 item(s) labelled by people: at least 2 needed." in empty

    items = list(study.items.filter(kind=StudyItem.Kind.REGULAR).order_by("id"))
    for i, item in enumerate(items):  # people disagree with the judge on every fourth item
        make_annotation(item=item, annotator="P1", has_failure=(i % 4 == 0))
    panel = _panel(client, study)
    found = study_interval(study)
    assert found["how2score"] is not None and found["uniform_half_width"] is not None
    for sentence in interval_sentences(found, sampling="uncertainty"):
        assert sentence in panel
    assert f"A uniform sample of the same {len(items)} items would have given about" in panel
    assert found["method"] in panel
    assert not re.search(r"\b(None|NaN|nan|inf|undefined|null)\b", panel), panel

    by_hand = make_study(n_items=3)
    assert _panel(client, by_hand) == ""
    by_hand.design = {"escalation": {"threshold": 0.9}}  # escalated, not drawn from a plan
    by_hand.save(update_fields=["design"])
    assert _panel(client, by_hand) == ""
