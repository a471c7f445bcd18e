"""manage.py escalation: the report as text and JSON, and refusals naming the option (no
traceback)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.models import JudgmentSample
from tests.annotation.factories import make_annotation, make_study
from tests.judging.factories import judged_run, make_judge
from tests.validation.escalation import scenario
from validation.escalation.stats import fixed_sequence_threshold

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = StringIO()
    call_command("escalation", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_text_and_json():
    data = scenario.build()
    study, judge = str(data["study"].pk), data["judge"].name
    report = json.loads(_run("--study", study, "--judge", judge, "--seed", "5", "--format", "json"))
    assert set(report) >= {"calibration", "held_out", "escalated", "items", "study_items"}
    assert report["seed"] == 5 and report["alpha"] == 0.1 and report["delta"] == 0.1
    cal = report["calibration"]
    assert cal["threshold"] == 1.0 and cal["guaranteed_agreement"] == pytest.approx(0.9)
    assert cal["n_calibration"] + report["held_out"]["n"] == scenario.N_LABELLED
    # the scan's first step is the binomial test of the unanimous items, none against people
    top = cal["steps"][0]
    assert top["n_disagree"] == 0 and top["p_value"] == pytest.approx(0.9 ** top["n"])
    again = fixed_sequence_threshold([1.0] * top["n"], [True] * top["n"])
    assert again.steps[0].p_value == pytest.approx(top["p_value"])
    text = _run("--study", study, "--judge", judge, "--seed", "5", "--alpha", "0.2")
    assert "alpha 0.2, delta 0.1, seed 5" in text
    assert "agrees with the human majority at least 80% of the time, with 90% certainty" in text
    assert "Scan (confidence >= threshold" in text and "failed (stop)" in text
    # allowing more disagreement lets the judge decide the 0.8 items too (10% wrong together)
    wider = json.loads(
        _run(
            "--study", study, "--judge", judge, "--seed", "5", "--alpha", "0.2", "--format", "json"
        )
    )
    assert wider["calibration"]["threshold"] == 0.8
    assert len(wider["escalated"]) < len(report["escalated"])
    below = ", ".join(str(e["item_id"]) for e in wider["escalated"])
    assert f"Items below the threshold ({len(wider['escalated'])}): {below}" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--alpha", "1.5"], "--alpha: alpha must be strictly between 0 and 1"),
        (["--delta", "0"], "--delta: delta must be strictly between 0 and 1"),
        (["--seed", "-1"], "--seed: seed must be a whole number"),
        ([], "--study: too few labelled items to calibrate on: 3 have both"),
    ],
)
def test_refusals_name_the_option(args, message):
    study = make_study(n_items=3)
    judge = make_judge(name="few", model="m")
    for item in study.items.all():
        make_annotation(item=item, annotator="P0", has_failure=True)
    run = judged_run(judge, [i.generation for i in study.items.all()], [True, True, True])
    JudgmentSample.objects.bulk_create(
        JudgmentSample(judgment_id=ri.judgment_id, seed=0, has_failure=True)
        for ri in run.items.all()
    )
    with pytest.raises(CommandError) as err:
        _run("--study", str(study.pk), "--judge", "few", *args)
    assert str(err.value).startswith(message)


def test_unknown_study_and_judge():
    with pytest.raises(CommandError, match=r"^--study: no study with id 999999"):
        _run("--study", "999999", "--judge", "x")
    study = make_study(n_items=1)
    with pytest.raises(CommandError, match=r"^--judge: no judge named 'nobody'"):
        _run("--study", str(study.pk), "--judge", "nobody")


def test_the_api_gives_the_commands_report_and_names_bad_parameters(client, make_user):
    data = scenario.build()
    study, judge = str(data["study"].pk), data["judge"].name
    url = "/api/validation/escalation/"
    assert client.get(url, {"study": study, "judge": judge}).status_code in (401, 403)
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(url, {"study": study, "judge": judge}).status_code == 403
    client.force_login(make_user("res", role="researcher"))
    got = client.get(url, {"study": study, "judge": judge, "seed": "2"})
    assert got.status_code == 200
    assert got.json() == json.loads(
        _run("--study", study, "--judge", judge, "--seed", "2", "--format", "json")
    )
    for params, field in (
        ({"alpha": "abc"}, "alpha"),
        ({"alpha": "1"}, "alpha"),
        ({"delta": "nan"}, "delta"),
        ({"seed": "-1"}, "seed"),
        ({"alpha": "0.01", "delta": "0.01"}, "study"),  # too few labelled items
    ):
        bad = client.get(url, {"study": study, "judge": judge, **params})
        assert bad.status_code == 400 and field in bad.json(), params
    assert client.get(url, {"study": "999999", "judge": judge}).status_code == 404
