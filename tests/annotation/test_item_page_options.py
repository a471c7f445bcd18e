"""The paper's interface (C.1, Figures 7-11) as study options: by default a participant sees
what the judge sees (goal, L1, L2; resources only when the study turns them on) and clicks
through every L1 step as well as every L2 step; a study may turn the L1 click-through off."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation import rules
from annotation.labels import ParsedLabel, parse_label, submission_errors
from annotation.models import Annotation, Assignment, Study
from tests.annotation.factories import make_study

pytestmark = pytest.mark.django_db


def url(name, study, *args):
    return reverse(f"annotation:{name}", args=[study.slug, *args])


def to_item(client, study):
    client.get(url("enter", study), {"PROLIFIC_PID": "P1", "STUDY_ID": "S1", "SESSION_ID": "X"})
    client.post(url("consent", study), {"consent": "agree"})
    client.post(url("training", study))
    page = client.get(url("item", study)).content.decode()
    return page, Assignment.objects.get(
        participant__study=study, participant__prolific_pid="P1", state="active"
    )


def answer(*, l1: int, l2: int = 4) -> dict:
    return {
        "goal_ack": "1",
        "read": [str(i) for i in range(1, l2 + 1)],
        "read_l1": [str(i) for i in range(1, l1 + 1)],
        "choice": "none",
    }


def test_defaults_are_the_papers_interface():
    study = make_study()
    assert study.click_through_l1 is True and study.show_resources is False
    assert Study._meta.get_field("click_through_l1").default is True


def test_resources_are_hidden_unless_the_study_shows_them(client):
    page, _ = to_item(client, make_study())
    assert 'class="resources"' not in page and '<span class="res">kettle' not in page
    client.cookies.clear()
    page, _ = to_item(client, make_study(show_resources=True))
    assert 'class="resources"' in page and '<span class="res">kettle</span>' in page


def test_every_l1_step_must_be_clicked_through_by_default(client):
    study = make_study()
    page, a = to_item(client, study)
    assert page.count('name="read_l1"') == 4 and "<strong>0/8</strong>" in page
    a.served_at = a.served_at.replace(year=2000)
    a.save(update_fields=["served_at"])
    r = client.post(url("submit", study, a.pk), answer(l1=3), follow=True)
    assert r.status_code == 200 and r.redirect_chain[0][1] == 302  # refused: back to the item
    assert "L1 steps: click every step to confirm you read it (1 left: L1.4)" in r.content.decode()
    assert not Annotation.objects.exists()
    r = client.post(url("submit", study, a.pk), answer(l1=4))
    assert r.status_code == 302
    assert Annotation.objects.get().interface_checks["l1_steps_read"] == 4


def test_a_study_may_turn_the_l1_click_through_off(client):
    study = make_study(click_through_l1=False)
    page, a = to_item(client, study)
    assert 'name="read_l1"' not in page and "<strong>0/4</strong>" in page
    a.served_at = a.served_at.replace(year=2000)
    a.save(update_fields=["served_at"])
    r = client.post(url("submit", study, a.pk), answer(l1=0))
    assert r.status_code == 302 and Annotation.objects.count() == 1


def test_the_rule_and_the_label_errors():
    assert rules.l1_steps_to_read(click_through_l1=True, n_l1=5) == 5
    assert rules.l1_steps_to_read(click_through_l1=False, n_l1=5) == 0
    label = parse_label({"read_l1": ["1", "2", "9"]}, n_l1=3, n_l2=2)
    assert label.read_l1_steps == [1, 2]  # out-of-range steps dropped
    full = ParsedLabel(goal_ack=True, read_steps=[1, 2], read_l1_steps=[1, 2, 3], choice="none")
    assert submission_errors(full, n_l2=2, n_l1=3) == []
    full.read_l1_steps = [1, 3]
    assert submission_errors(full, n_l2=2, n_l1=3) == [
        "L1 steps: click every step to confirm you read it (1 left: L1.2)."
    ]
    assert submission_errors(full, n_l2=2, n_l1=0) == []


def test_create_study_command_sets_the_options():
    import io

    from django.core.management import call_command

    from tests.annotation.factories import make_generations

    gens = make_generations(2)
    dataset, generator = gens[0].procedure.dataset, gens[0].generator
    args = ["--dataset", f"{dataset.name}@{dataset.version}", "--generator", generator.name]
    call_command("create_study", "--name", "A", *args, stdout=io.StringIO())
    call_command(
        "create_study",
        "--name",
        "B",
        *args,
        "--show-resources",
        "--no-l1-click-through",
        stdout=io.StringIO(),
    )
    a, b = Study.objects.get(name="A"), Study.objects.get(name="B")
    assert (a.show_resources, a.click_through_l1) == (False, True)
    assert (b.show_resources, b.click_through_l1) == (True, False)


def test_step_lists_are_escaped_and_keep_what_was_ticked():
    """The step lists are built in Python (annotation.pages.annotator.steps_html), not by
    the template engine: a step's text is escaped, a ticked step stays ticked, and L1 without
    click-through is plain text with no checkbox."""
    from annotation.pages.annotator import steps_html

    steps = ['Mix <b>flour</b> & "water"', "Bake it"]
    l2 = str(steps_html(steps, {2}, side="l2", clickable=True))
    assert "<b>" not in l2 and "Mix &lt;b&gt;flour&lt;/b&gt; &amp; &quot;water&quot;" in l2
    assert l2.count('type="checkbox" name="read"') == 2
    assert '<label class="step is-read" id="l2-2">' in l2 and '<label class="step" id="l2-1">' in l2
    assert 'value="2" class="step-check" checked' in l2 and 'value="1" class="step-check">' in l2
    l1 = str(steps_html(steps, set(), side="l1", clickable=True))
    assert 'name="read_l1"' in l1 and 'id="l1-step-1"' in l1 and '<li id="l1-2">' in l1
    plain = str(steps_html(steps, set(), side="l1", clickable=False))
    assert "checkbox" not in plain and '<span class="num">L1.2</span>' in plain
