"""Solve mode's ``pack_options`` (checked against the pack's options, passed to the scorer)
and re-scoring answers stored with ``score_error`` (service and ``manage.py rescore_solve``)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from annotation.models import Annotation, AttentionCheckResult, Study
from annotation.services import study as study_services
from annotation.services.assignment import participant_current_assignment
from annotation.services.solve import solve_answers_rescore
from tests.annotation.factories import (
    make_form_study,
    make_generations,
    submit_form_answer,
    working_participant,
)
from tests.annotation.form_types import packs  # noqa: F401  (registers test-exact)

pytestmark = pytest.mark.django_db

F5 = {"id": "F5", "numbers": [44, 48, 35, 6], "target": 25}
UNTAGGED = "48 - 44 = 4\n35 - 4 = 31\n31 - 6 = 25"  # typed without <Solution> tags


def _countdown_study(options):
    gens = make_generations(1)
    config = {"pack": "longproc-countdown", "pack_options": options}
    specs = [{"generation_id": gens[0].pk, "context": {"record": F5}}]
    return make_form_study("solve", config, specs=specs, items_per_participant=1)


def test_pack_options_fallback_whole_scores_an_untagged_answer():
    strict = _countdown_study({})
    res, _ = submit_form_answer(working_participant(strict, "T1"), {"answer": [UNTAGGED]})
    assert res.annotation.label["metrics"]["correct"] == 0  # no <Solution>: nothing scored
    whole = _countdown_study({"fallback": "whole"})
    assert whole.form_config["pack_options"] == {"fallback": "whole"}
    res, _ = submit_form_answer(working_participant(whole, "T2"), {"answer": [UNTAGGED]})
    assert res.annotation.label["metrics"]["correct"] == 1
    assert res.annotation.has_failure is False


def test_unknown_pack_option_is_refused_naming_the_key():
    with pytest.raises(ValidationError) as exc:
        study_services.study_create(
            name="opts",
            generation_ids=[],
            form_type="solve",
            form_config={"pack": "longproc-countdown", "pack_options": {"fallbak": "whole"}},
        )
    text = str(exc.value.message_dict["form_config"])
    assert "form_config.pack_options.fallbak" in text and "fallback" in text
    with pytest.raises(ValidationError) as exc:
        study_services.study_create(
            name="opts",
            generation_ids=[],
            form_type="solve",
            form_config={"pack": "longproc-countdown", "pack_options": ["fallback"]},
        )
    assert "form_config.pack_options" in str(exc.value.message_dict["form_config"])
    assert not Study.objects.filter(name="opts").exists()


def test_rescore_answers_with_a_score_error_after_the_pack_is_fixed(capsys):
    gens = make_generations(2)
    specs = [
        {"generation_id": g.pk, "context": {"record": {"id": str(k), "target": 2 * k}}}
        for k, g in enumerate(gens, start=1)
    ]
    study = make_form_study("solve", {"pack": "test-exact"}, specs=specs, items_per_participant=2)
    Study.objects.filter(pk=study.pk).update(form_config={"pack": "gone-pack"})
    study.refresh_from_db()
    p = working_participant(study, "S1")
    for _ in range(2):
        res, _view = submit_form_answer(p, {"answer": ["2"]})  # right for item 1 only
        assert "score_error" in res.annotation.label
    with pytest.raises(CommandError, match=r"form_config\.pack"):
        call_command("rescore_solve", "--study", str(study.pk))
    Study.objects.filter(pk=study.pk).update(form_config={"pack": "test-exact"})  # fixed
    study.refresh_from_db()
    call_command("rescore_solve", "--study", str(study.pk))
    assert "2 answer(s) scored, 0 still not scored" in capsys.readouterr().out
    rows = {
        a.item.context["record"]["target"]: a
        for a in Annotation.objects.filter(item__study=study).select_related("item")
    }
    assert rows[2].label["metrics"] == {"correct": 1} and rows[2].has_failure is False
    assert rows[4].label["metrics"] == {"correct": 0} and rows[4].has_failure is True
    assert all("score_error" not in a.label and a.label["answer"] == "2" for a in rows.values())
    assert solve_answers_rescore(study=study) == {
        "rescored": 0,
        "still_failing": 0,
        "errors": [],
        "checks_changed": 0,
        "recheck": [],
    }
    with pytest.raises(CommandError, match="no such study"):
        call_command("rescore_solve", "--study", "999999")
    other = make_form_study("rating", {"preset": "scirecipe"}, specs=[], items_per_participant=1)
    with pytest.raises(CommandError, match="form_type: Only a solve study"):
        call_command("rescore_solve", "--study", str(other.pk))


def test_rescore_judges_again_the_attention_check_an_unscored_answer_failed(capsys):
    gens = make_generations(3)
    specs = [
        {"generation_id": g.pk, "context": {"record": {"id": f"r{k}", "target": k}}}
        for k, g in enumerate(gens[:2], start=1)
    ] + [
        {
            "generation_id": gens[2].pk,
            "kind": "attention",
            "context": {"record": {"id": "a", "target": 7}},
            "expected_label": {"metrics": {"correct": 1}},
        },
    ]
    study = make_form_study(
        "solve", {"pack": "test-exact"}, specs=specs, items_per_participant=2, attention_rate=1.0
    )
    Study.objects.filter(pk=study.pk).update(form_config={"pack": "gone-pack"})
    study.refresh_from_db()
    p = working_participant(study, "S1")
    served = {}
    # two regular items and the planted one between them, each answered right
    while (assignment := participant_current_assignment(participant=p)) is not None:
        target = assignment.item.context["record"]["target"]
        res, _view = submit_form_answer(p, {"answer": [str(target)]})
        assert "score_error" in res.annotation.label
        served[assignment.item.kind] = assignment
    check = AttentionCheckResult.objects.get(assignment=served["attention"])
    p.refresh_from_db()
    assert check.passed is False and p.attention_failures == 1  # failed only for lack of a score
    Study.objects.filter(pk=study.pk).update(form_config={"pack": "test-exact"})  # fixed
    study.refresh_from_db()
    call_command("rescore_solve", "--study", str(study.pk))
    out = capsys.readouterr().out
    assert "3 answer(s) scored" in out and len(served) == 2
    assert f"1 attention/qualification result(s) judged again; review participants {p.pk}" in out
    check.refresh_from_db()
    p.refresh_from_db()
    assert check.passed is True and "expected {'metrics': {'correct': 1}}" in check.detail
    assert p.attention_failures == 0
    # nothing left to score: judging again changes nothing
    assert solve_answers_rescore(study=study)["checks_changed"] == 0
