"""The escalation page: the report in words, the same as the command; refusals at their field
with the text kept; researchers read (no button), annotators see nothing, admins put the items
below the threshold first in the study's queue (CSRF on), and the next items claimed through
the real assignment service are those items, in the seeded order."""

from __future__ import annotations

import html
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from annotation import rules
from annotation.models import Assignment, Participant, Study, StudyItem
from annotation.services.assignment import (
    participant_current_assignment,
    study_sample_ranks_refresh,
)
from annotation.services.submission import annotation_submit
from tests.annotation.factories import full_label, working_participant
from tests.validation.escalation import scenario
from validation.escalation.services import NOTHING_DECIDED, study_escalation_apply
from validation.escalation.stats import EscalationError

pytestmark = pytest.mark.django_db

URL = "/judging/compare/validation/escalation/"
APPLY = "/judging/compare/validation/escalation/apply/"


@pytest.fixture
def sampled():
    return scenario.build(items_per_participant=200, overlap=1)


def _query(sampled, **over) -> dict:
    return {"study": sampled["study"].pk, "judge": sampled["judge"].name} | over


def _clean(response) -> str:
    return html.unescape(response.content.decode())


def test_researchers_read_the_report_in_words_as_the_command_says(client, make_user, sampled):
    client.force_login(make_user("res", role="researcher"))
    empty = client.get(URL)
    assert empty.status_code == 200 and 'id="escalation-sentence"' not in empty.content.decode()
    response = client.get(URL, _query(sampled))  # α, δ and the seed default to 0.1, 0.1, 0
    assert response.status_code == 200
    page = _clean(response)
    out = StringIO()
    call_command("escalation", "--study", str(sampled["study"].pk), "--judge",
                 sampled["judge"].name, stdout=out)  # fmt: skip
    lines = out.getvalue().splitlines()
    assert f'id="escalation-sentence"><b>{lines[1]}</b>' in page
    assert lines[2] in page and lines[3] in page  # held-out check, the queue
    assert "at least 1.00" in lines[1] and "at least 90%" in lines[1]
    out = StringIO()
    call_command("escalation", "--study", str(sampled["study"].pk), "--judge",
                 sampled["judge"].name, "--format", "json", stdout=out)  # fmt: skip
    report = json.loads(out.getvalue())
    held = report["held_out"]
    assert f"<td>{100 * held['agreement_decided']:.1f}%</td>" in page
    assert f"<td>{100 * report['calibration']['share_decided']:.1f}%</td>" in page
    assert f"<td>{held['n']:,}</td>" in page
    assert page.count('<th scope="row">') >= len(report["escalated"])
    assert 'id="escalation-apply"' not in page  # no button for researchers
    assert f'href="/api/validation/escalation/?study={sampled["study"].pk}&judge=' in page
    for word in ("undefined", "None", "NaN", "null"):
        assert word not in page
    nav = _clean(client.get("/judging/compare/validation/"))
    assert f'href="{URL}"' in nav
    # the judge validation page links here with its study and judge
    linked = _clean(client.get("/judging/compare/validation/", _query(sampled)))
    assert f'href="{URL}?study={sampled["study"].pk}&judge={sampled["judge"].name}"' in linked


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"alpha": "0"}, "alpha", "alpha must be strictly between 0 and 1"),
        ({"alpha": "abc"}, "alpha", "Enter a number."),
        ({"delta": "1.5"}, "delta", "delta must be strictly between 0 and 1"),
        ({"seed": "-2"}, "seed", "greater than or equal to 0"),
        ({"judge": "nobody"}, "judge", "Select a valid choice"),
        ({"study": "999999"}, "study", "Select a valid choice"),
    ],
)
def test_refusals_at_their_field_with_the_text_kept(
    client, make_user, sampled, params, field, message
):
    client.force_login(make_user("res", role="researcher"))
    response = client.get(URL, _query(sampled, **params))
    assert response.status_code == 400
    page = _clean(response)
    assert f'id="id_{field}-error"' in page and message in page
    if field not in ("judge", "study"):  # a number typed stays in its box
        assert f'name="{field}" value="{params[field]}"' in page
    assert 'id="escalation-sentence"' not in page


def test_too_few_items_is_said_on_the_page(client, make_user, sampled):
    client.force_login(make_user("res", role="researcher"))
    response = client.get(URL, _query(sampled, alpha="0.01", delta="0.01"))
    assert response.status_code == 400
    assert 'id="escalation-problem"' in response.content.decode()
    assert "too few labelled items" in _clean(response)


def test_a_judge_that_decides_nothing_is_said_so_and_offers_no_button(client, make_user, sampled):
    client.force_login(make_user("adm", role="admin"))
    response = client.get(URL, _query(sampled, alpha="0.05", delta="0.1"))
    assert response.status_code == 200
    page = _clean(response)
    assert f"{sampled['judge'].name} should decide nothing alone" in page
    assert "failed: the scan stops" in page and 'id="escalation-apply"' not in page
    assert "All 112 of the study's items go to people." in page
    for word in ("undefined", "None", "NaN", "null"):
        assert word not in page


def test_annotators_and_visitors_are_refused(client, make_user, sampled):
    assert client.get(URL).status_code == 302  # to the login page
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(URL, _query(sampled)).status_code == 403
    assert client.post(APPLY, _query(sampled, alpha="0.1", delta="0.1", seed="0")).status_code == (
        403
    )


def _served(participant, n: int) -> list[int]:
    """The generations of the next ``n`` items the assignment service hands this participant."""
    out = []
    for _ in range(n):
        p = Participant.objects.select_related("study").get(pk=participant.pk)
        a = participant_current_assignment(participant=p)
        out.append(a.item.generation_id)
        a = Assignment.objects.select_related(
            "item__generation__procedure", "participant__study"
        ).get(pk=a.pk)
        annotation_submit(assignment=a, label=full_label())
    return out


def test_admins_put_the_items_below_the_threshold_first(make_user, sampled):
    study, items = sampled["study"], sampled["items"]
    researcher = Client(enforce_csrf_checks=True)
    researcher.force_login(make_user("res", role="researcher"))
    form = _query(sampled, alpha="0.1", delta="0.1", seed="0")
    assert researcher.post(APPLY, form).status_code == 403
    admin = Client(enforce_csrf_checks=True)
    admin.force_login(make_user("adm", role="admin"))
    page = admin.get(URL, _query(sampled)).content.decode()
    assert 'id="escalation-apply"' in page and "csrfmiddlewaretoken" in page
    assert admin.post(APPLY, form).status_code == 403  # no CSRF token
    token = admin.cookies["csrftoken"].value
    response = admin.post(APPLY, form | {"csrfmiddlewaretoken": token})
    assert response.status_code == 302 and response["Location"].startswith(URL)
    after = _clean(admin.get(response["Location"]))
    first = scenario.expected_escalated(items)
    assert f"puts {len(first):,} items first" in after and 'id="escalation-recorded"' in after

    study.refresh_from_db()
    assert study.sampling == Study.Sampling.SEEDED
    escalation = study.design["escalation"]
    assert escalation["threshold"] == 1.0 and escalation["judge"] == sampled["judge"].name
    assert set(escalation["first_generation_ids"]) == first
    assert escalation["n_first"] == len(first) and escalation["applied_by"] == "adm"
    # the next items claimed are the escalated ones, in their seeded order, then the others
    participant = working_participant(study, "ESC_1")
    served = _served(participant, len(first) + 3)
    seeded = sorted(first, key=lambda g: rules.seeded_rank(seed=study.sampling_seed, key=g))
    assert served[: len(first)] == seeded
    rest = sorted(
        {i.generation_id for i in items} - first,
        key=lambda g: rules.seeded_rank(seed=study.sampling_seed, key=g),
    )
    assert served[len(first) :] == rest[:3]


def test_a_new_seed_keeps_the_escalated_items_first(make_user, sampled):
    study = sampled["study"]
    study_escalation_apply(study=study, judge=sampled["judge"], user=make_user("a", role="admin"))
    first = scenario.expected_escalated(sampled["items"])
    study.refresh_from_db()
    study.sampling_seed = 99
    study.save(update_fields=["sampling_seed"])
    assert study_sample_ranks_refresh(study=study) > 0
    ranked = list(
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR)
        .order_by("sample_rank", "id")
        .values_list("generation_id", flat=True)
    )
    assert set(ranked[: len(first)]) == first
    assert ranked[: len(first)] == sorted(first, key=lambda g: rules.seeded_rank(seed=99, key=g))


def test_the_service_refuses_researchers_and_a_judge_that_decides_nothing(make_user, sampled):
    from django.core.exceptions import PermissionDenied

    study, judge = sampled["study"], sampled["judge"]
    with pytest.raises(PermissionDenied):
        study_escalation_apply(study=study, judge=judge, user=make_user("r", role="researcher"))
    admin = make_user("a", role="admin")
    # at α = 0.05, δ = 0.1 a group needs 45 items without a disagreement; the unanimous items
    # of the calibration half are fewer
    with pytest.raises(EscalationError) as err:
        study_escalation_apply(study=study, judge=judge, user=admin, alpha=0.05, delta=0.1)
    assert err.value.field == "items" and str(err.value) == NOTHING_DECIDED
    study.refresh_from_db()
    assert study.design == {} and study.sampling == Study.Sampling.LEAST_ANNOTATED
