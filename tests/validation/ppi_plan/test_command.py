"""manage.py ppi_plan: the plan from a pilot label-set file equals ppi_py.ppi_mean_power on the
human majorities and judge verdicts the PPI report uses; a plan from stated numbers says it
rests on them; the text output is a sentence to act on; refusals name the option or the line."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from ppi_py import ppi_mean_power

from annotation.label_set_file import read_label_set
from tests.validation.label_sets.scenario import csv_text, rows
from validation.label_sets.adapters import ALL_GROUPS, ppi_inputs


def _run(*args: str) -> str:
    out = StringIO()
    call_command("ppi_plan", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def pilot(tmp_path) -> str:
    path = tmp_path / "pilot.csv"
    path.write_text(csv_text(rows()))
    return str(path)


@pytest.mark.parametrize(
    ("target", "value", "power"),
    [("--budget", "300", {"budget": 300.0}), ("--effective-n", "500", {"effective_n": 500})],
)
def test_plan_from_a_pilot_file_equals_ppi_mean_power(pilot, target, value, power):
    got = json.loads(_run("--labelled", pilot, "--cost-human", "0.90", "--cost-judge", "0.01",
                          target, value, "--format", "json"))  # fmt: skip
    inputs = ppi_inputs(read_label_set(pilot), judge="my-judge")[ALL_GROUPS]
    y, yhat = np.array(inputs["human"], float), np.array(inputs["judge"], float)
    want = ppi_mean_power(y, yhat, 0.90, 0.01, **power)
    for key in ("n", "N", "effective_n", "ppi_corr"):
        assert got[key] == want[key], key
    assert got["cost"] == pytest.approx(want["cost"])
    assert {"n", "N", "cost", "effective_n", "ppi_corr", "half_width", "people_only"} <= set(got)
    assert got["people_only"] == {
        "n": want["effective_n"],
        "cost": pytest.approx(0.9 * want["effective_n"]),
    }
    assert got["pilot"] == {"n_labelled": y.size, "n_unlabelled": len(inputs["unlabelled"])}
    assert got["half_width"] == pytest.approx(1.959964 * y.std() / np.sqrt(want["effective_n"]))


def test_text_is_a_sentence_to_act_on(pilot):
    text = _run("--labelled", pilot, "--cost-human", "0.90", "--cost-judge", "0.01",
                "--half-width", "0.05", "--currency", "GBP")  # fmt: skip
    plan = json.loads(_run("--labelled", pilot, "--cost-human", "0.90", "--cost-judge", "0.01",
                           "--half-width", "0.05", "--format", "json"))  # fmt: skip
    first = text.splitlines()[0]
    assert first == (
        f"Label {plan['n']:,} items by people and have the judge label "
        f"{plan['n'] + plan['N']:,} (those {plan['n']:,} and {plan['N']:,} more): "
        f"±{100 * plan['half_width']:.1f} points on How2Score at 95% for {plan['cost']:,.2f} GBP, "
        f"against {plan['people_only']['cost']:,.2f} GBP with people alone "
        f"({plan['people_only']['n']:,} labels)."
    )
    assert plan["half_width"] <= 0.0501
    assert "measured on 60 pilot items labelled by people and the judge" in text


def test_without_a_pilot_the_plan_says_what_it_rests_on():
    text = _run("--ppi-corr", "0.7", "--sigma", "0.4", "--cost-human", "0.5",
                "--cost-judge", "0.01", "--half-width", "0.03")  # fmt: skip
    assert text.startswith("Label ") and "±3.0 points" in text
    assert "rests on the stated judge–human correlation ρ = 0.70" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ppi-corr", "0.7", "--budget", "10"], "--sigma: required without --labelled"),
        (["--ppi-corr", "1.2", "--sigma", "0.4", "--budget", "10"], "--ppi-corr: expected a number strictly between -1 and 1"),
        (["--ppi-corr", "0.5", "--sigma", "0.4", "--half-width", "3"], "--half-width: a half-width on How2Score (0 to 1) below 0.5"),
        (["--ppi-corr", "0.5", "--sigma", "0.4", "--budget", "-3"], "--budget: expected a number above 0"),
        (["--labelled", "PILOT", "--sigma", "0.4", "--budget", "10"], "--ppi-corr/--sigma: give them without --labelled"),
        (["--labelled", "/nowhere.csv", "--budget", "10"], "--labelled /nowhere.csv: no such file"),
        (["--labelled", "BAD", "--budget", "10"], "BAD, line 3, column 'label': PPI takes 0/1 labels"),
        (["--labelled", "PILOT", "--judge", "other", "--budget", "10"], "--labelled no judge 'other'"),
    ],
)  # fmt: skip
def test_refusals_name_the_option_or_the_line(tmp_path, pilot, args, message):
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,source,kind,label\na,x,human,1\na,j,judge,maybe\n")
    args = [{"PILOT": pilot, "BAD": str(bad)}.get(a, a) for a in args]
    message = message.replace("BAD", str(bad))
    with pytest.raises(CommandError) as info:
        _run(*args, "--cost-human", "1", "--cost-judge", "0.01")
    assert message in str(info.value)


def test_cost_refusal_names_the_option(pilot):
    with pytest.raises(CommandError, match="--cost-judge: expected a number above 0"):
        _run("--labelled", pilot, "--cost-human", "1", "--cost-judge", "0", "--budget", "9")
    assert Path(pilot).exists()


@pytest.mark.django_db
def test_the_cost_of_a_human_label_from_a_study_pay_terms(settings):
    from annotation.models import StudyPay
    from tests.annotation.factories import make_study

    settings.PROLIFIC_FEE_RATE = "0.25"
    study = make_study(overlap=3, items_per_participant=20)
    StudyPay.objects.create(study=study, reward="2.00", bonus_per_item="0.05", currency="USD")
    args = ("--ppi-corr", "0.7", "--sigma", "0.4", "--cost-judge", "0.01", "--budget", "300")
    got = json.loads(_run("--study", str(study.pk), *args, "--format", "json"))
    # 3 annotators × (2.00 / 20 items + 0.05 bonus) × (1 + 0.25 fee)
    assert got["cost_human"] == pytest.approx(0.5625)
    want = json.loads(_run("--cost-human", "0.5625", *args, "--format", "json"))
    assert {k: got[k] for k in ("n", "N", "cost")} == {k: want[k] for k in ("n", "N", "cost")}
    text = _run("--study", str(study.pk), *args)
    assert " USD" in text.splitlines()[0]
    assert "3 annotator(s) per item × (2.00 reward / 20 items + 0.05 bonus per item)" in text


@pytest.mark.django_db
def test_a_study_without_a_reward_is_refused_by_name():
    from annotation.models import StudyPay
    from tests.annotation.factories import make_study

    study = make_study()
    StudyPay.objects.create(study=study)
    args = ("--ppi-corr", "0.7", "--sigma", "0.4", "--cost-judge", "0.01", "--budget", "300")
    with pytest.raises(CommandError, match=f"--study: study {study.name!r} has no reward set"):
        _run("--study", str(study.pk), *args)
    with pytest.raises(CommandError, match="--study: no study with id 999999"):
        _run("--study", "999999", *args)
    with pytest.raises(CommandError, match="--cost-human: required"):
        _run(*args)


@pytest.mark.django_db
def test_a_running_study_is_a_pilot_and_the_judge_cost_is_measured():
    from annotation.services.study import study_create
    from tests.annotation.factories import make_annotation, make_generations, regular_items
    from tests.judging.factories import judged_run, make_judge

    gens = make_generations(30)
    judge = make_judge(name="pilot-judge")
    verdicts = [i % 3 == 0 for i in range(30)]
    judged_run(judge, gens, verdicts, cost="0.60")  # 30 judgments: 0.02 each
    study = study_create(name="pilot", generation_ids=[g.pk for g in gens[:12]])
    human = []
    for i, item in enumerate(regular_items(study)):
        says = verdicts[i] != (i in (4, 7))  # the judge wrong on two items
        make_annotation(item=item, annotator="P1", has_failure=says)
        human.append(says)
    args = ("--pilot-study", str(study.pk), "--judge", "pilot-judge", "--cost-human", "0.9")
    got = json.loads(_run(*args, "--budget", "300", "--format", "json"))
    want = ppi_mean_power(
        np.array(human, dtype=float), np.array(verdicts[:12], dtype=float),
        cost_Y=0.9, cost_Yhat=0.02, budget=300.0,
    )  # fmt: skip
    assert (got["n"], got["N"]) == (int(want["n"]), int(want["N"]))
    assert got["pilot"] == {"n_labelled": 12, "n_unlabelled": 18}
    text = _run(*args, "--budget", "300")
    assert "pilot-judge's runs cost 0.60 for 30 judgments" in text
    with pytest.raises(CommandError, match="--judge: required with --pilot-study"):
        _run(
            "--pilot-study",
            str(study.pk),
            "--cost-human",
            "1",
            "--cost-judge",
            "1",
            "--budget",
            "9",
        )
    with pytest.raises(CommandError, match="--pilot-study: no study with id 999999"):
        _run(
            "--pilot-study",
            "999999",
            "--judge",
            "pilot-judge",
            "--cost-human",
            "1",
            "--budget",
            "9",
        )
    with pytest.raises(CommandError, match="--judge: no judge named 'nobody'"):
        _run(
            "--ppi-corr",
            "0.5",
            "--sigma",
            "0.4",
            "--judge",
            "nobody",
            "--cost-human",
            "1",
            "--budget",
            "9",
        )
    with pytest.raises(CommandError, match="--cost-judge: required"):
        _run("--ppi-corr", "0.5", "--sigma", "0.4", "--cost-human", "1", "--budget", "9")
