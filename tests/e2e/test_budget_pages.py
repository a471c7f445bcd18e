"""The pages that spend a human budget pass the axe audit for the researcher who reads them and
the admin who acts on them, on the demo's SIMULATED data: the plan with its create form, the
planned study's report and progress (its target stopped it), and the escalation threshold. The
admin's buttons are there for the admin only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from demo.budget import JUDGE, plan_path, planned_study_ensure
from demo.label_sets import label_set_demo_ensure
from tests.e2e.test_accessibility import serious_violations
from tests.support.browser_roles import log_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_budget_pages_pass_axe_and_show_each_role_its_buttons(make_user, live_server, page):
    make_user("res", role="researcher")
    admin = make_user("adm", role="admin")
    label_set = label_set_demo_ensure(username="res")
    study = planned_study_ensure(label_set=label_set, admin=admin)
    escalation = f"{reverse('validation:escalation')}?study={study.pk}&judge={JUDGE}"
    pages = {
        "plan": plan_path(label_set),
        "report": reverse("annotation:report", args=[study.pk]),
        "progress": reverse("annotation:study_progress", args=[study.pk]),
        "escalation": escalation,
    }
    base, problems, buttons = live_server.url, [], {}
    for user in ("res", "adm"):
        log_in(page, base, user)
        for name, path in pages.items():
            page.goto(base + path)
            page.wait_for_load_state("networkidle")
            problems += [f"{user} {name}: {v}" for v in serious_violations(page)]
            buttons[user, name] = page.locator("button, input[type=submit]").all_inner_texts()
            text = page.inner_text("main")
            for word in ("None", "NaN", "undefined", "null"):
                assert f" {word} " not in f" {text} ", (user, name, word)
        page.context.clear_cookies()
    assert problems == []
    create = "Create the study"
    assert any(create in b for b in buttons["adm", "plan"]), buttons["adm", "plan"]
    assert not any(create in b for b in buttons["res", "plan"])
    resume = [b for b in buttons["adm", "progress"] if "Resume" in b]
    assert resume and not [b for b in buttons["res", "progress"] if "Resume" in b]
