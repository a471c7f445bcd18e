"""The codebook (training page, the item page's codebook dialog), the retry notice and the
already-submitted page speak the study's form type; critical failure keeps its codebook."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Assignment, Participant
from annotation.selectors.flow import qualification_missed
from tests.annotation.factories import (
    make_form_study,
    make_generations,
    make_pair_generations,
    write_answers,
)

pytestmark = pytest.mark.django_db
DIMS = ("granularity", "order", "semantic", "overall")


def url(name, study, *args):
    return reverse(f"annotation:{name}", args=[study.slug, *args])


def _rating_study():
    gens = make_generations(3)
    return make_form_study(
        "rating",
        {"preset": "scirecipe"},
        specs=[
            {"generation_id": gens[0].pk},
            {"generation_id": gens[1].pk},
            {
                "generation_id": gens[2].pk,
                "kind": "training",
                "expected_label": {"ratings": {"overall": 3}},
                "explanation": "Executable, one vague step.",
            },
        ],
        items_per_participant=2,
    )


def _enter(client, study):
    r = client.get(
        url("enter", study), {"PROLIFIC_PID": "CB1", "STUDY_ID": "S1", "SESSION_ID": "X"}
    )
    assert r.status_code == 302
    assert client.post(url("consent", study), {"consent": "agree"}).url == url("training", study)


def test_rating_codebook_training_and_dialog(client):
    study = _rating_study()
    _enter(client, study)
    page = client.get(url("training", study)).content.decode()
    assert "<h1>How to rate a solution</h1>" in page
    assert "rate the solution to evaluate (L2) on every dimension below, from 0 to 4" in page
    assert "Operational order: 0 = Order would break the experiment; 4 = Order fully" in page
    assert "Overall (fluency and executability): 3." in page  # the example's answer
    assert "What counts as a critical failure" not in page and "Severe vagueness" not in page
    client.post(url("training", study))
    partial = client.get(url("codebook_partial", study)).content.decode()
    assert 'id="form-codebook"' in partial and "Semantic clarity" in partial
    assert "Severe vagueness" not in partial
    item = client.get(url("item", study)).content.decode()
    assert '<h2 id="cb-h">How to rate a solution</h2>' in item


def test_rating_already_submitted_page_shows_both_answers_in_words(client):
    study = _rating_study()
    _enter(client, study)
    client.post(url("training", study))
    client.get(url("item", study))
    a = Assignment.objects.get(participant__prolific_pid="CB1")

    def post(value):
        data = {"goal_ack": "1", **{f"r-{d}": str(value) for d in DIMS}}
        return client.post(url("submit", study, a.pk), data)

    assert post(4).status_code == 302
    r = post(1)
    assert r.status_code == 302 and r.url == url("submitted", study, a.pk)
    page = client.get(r.url).content.decode()
    kept = page[page.index('id="first-answer"') : page.index("</div>", page.index("first-answer"))]
    assert "Overall (fluency and executability): 4" in kept and "Critical failure" not in kept
    assert "No critical failures" not in kept
    typed = page[page.index('id="typed-answer"') :]
    assert "Overall (fluency and executability): 1" in typed


def test_retry_notice_uses_the_form_types_rule_and_words():
    firsts, seconds = make_pair_generations(2)
    study = make_form_study(
        "pairwise",
        specs=[
            {
                "generation_id": firsts[k].pk,
                "generation_b_id": seconds[k].pk,
                "kind": "qualification",
                "expected_label": {"preferred": "first"},
            }
            for k in (0, 1)
        ],
        items_per_participant=1,
    )
    q0, q1 = study.items.order_by("generation_id")

    def pref(p, shown):
        return {"preferred": p, "shown": shown, "order": "ab", "reason": ""}

    write_answers(study, "RQ", [(q0, pref("first", "A")), (q1, pref("second", "B"))])
    participant = Participant.objects.select_related("study").get(prolific_pid="RQ")
    (missed,) = qualification_missed(participant=participant, attempt=1)
    assert missed.pk == q1.pk  # has_failure vs the empty expected_has_failure: both listed
    assert missed.answered_text == "Preference: B is better"
    assert missed.expected_text == "Preference: the first solution"
