"""Distillation export (seed 000 C.2): consistent kept, inconsistent / parse-failed / human-labelled dropped."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import StudyItem
from annotation.services import study as study_services
from benchmarks.models import Generation, Generator
from judging import prompting
from judging.services.distillation import DistillationError, distill_export
from tests.annotation.factories import A_FAILURE, make_annotation, make_generations
from tests.judging.factories import judged_run, make_judge


@pytest.fixture
def distill(db):
    gens = make_generations(7, prefix="distill")
    other = Generator.objects.create(name="other-generator")
    twin = Generation.objects.create(
        procedure=gens[1].procedure, generator=other, predicted_steps=list(gens[1].predicted_steps)
    )  # same content as gens[1]
    sibling = Generation.objects.create(
        procedure=gens[5].procedure, generator=other, predicted_steps=["A different candidate."]
    )  # humans label this one
    all_gens = [*gens, twin]
    teacher = make_judge(name="teacher", decoding={"temperature": 1.0, "seed": 1})
    second = make_judge(name="teacher-seed2", decoding={"temperature": 1.0, "seed": 2})
    run1 = judged_run(teacher, all_gens, [True, False, True, None, True, False, True, False])
    run2 = judged_run(second, all_gens, [True, False, False, False, True, False, "skip", False])
    study = study_services.study_create(
        name="human set", generation_ids=[gens[4].pk, sibling.pk], min_seconds_per_item=0
    )
    for item in StudyItem.objects.filter(study=study):
        make_annotation(
            item=item,
            annotator="P1",
            has_failure=True,
            failures=A_FAILURE,
            active_ms=900,
            wall_ms=1000,
        )
    return {"gens": gens, "teacher": teacher, "second": second, "runs": (run1, run2)}


def test_rules_and_counts(distill, tmp_path):
    run1, run2 = distill["runs"]
    out = tmp_path / "sft.jsonl"
    report = distill_export(
        teacher=distill["teacher"], run_ids=[run1.pk, run2.pk], path=out
    ).to_json()
    assert report["n_items"] == 8 and report["n_kept"] == 2
    assert report["dropped"] == {
        "not_in_both_runs": 1,
        "parse_failed": 1,
        "inconsistent": 1,
        "human_labelled": 2,
        "duplicate_content": 1,
    }
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    records = [json.loads(line) for line in lines]
    assert all(set(r) == {"prompt", "completion"} for r in records)
    gens = distill["gens"]
    template = prompting.load_template("judge_h3")
    for rec, g, has_failure in zip(records, (gens[0], gens[1]), (True, False), strict=True):
        p = g.procedure
        assert rec["prompt"] == prompting.render_judge_prompt(
            template=template, goal=p.goal, reference_steps=p.steps, steps=g.predicted_steps
        )
        assert p.goal in rec["prompt"] and "1. Generated step 1 of distill" in rec["prompt"]
        assert rec["prompt"].endswith("Return only valid json.")
        completion = json.loads(rec["completion"])
        assert set(completion) == {"reasoning", "critical_failures"}
        assert completion["reasoning"] == f"teacher read {p.source_example_id}."
        assert bool(completion["critical_failures"]) is has_failure
        if has_failure:
            assert completion["critical_failures"][0]["L2_steps"] == [2]


def test_prompt_is_the_judges_exact_prompt(distill, tmp_path):
    """The same text judging's item builder sends to the teacher."""
    from judging.services.items import item_content_hash, item_input

    run1, run2 = distill["runs"]
    out = tmp_path / "sft.jsonl"
    distill_export(teacher=distill["teacher"], run_ids=[run1.pk, run2.pk], path=out)
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    g = distill["gens"][0]
    sent = item_input(
        item_id=0,
        content_hash=item_content_hash(g),
        generation=g,
        template=prompting.load_template("judge_h3"),
    ).prompt
    assert first["prompt"] == sent


@pytest.mark.parametrize(
    "case, message",
    [
        ("same_run", "the same run"),
        ("same_judge", "same judge configuration"),
        ("other_config", "decoding.temperature"),
        ("missing", "no judge run with id 999999"),
        ("not_teacher", "not of the teacher"),
        ("three", "exactly two runs"),
    ],
)
def test_refusals_name_the_problem_and_write_nothing(distill, tmp_path, case, message):
    run1, run2 = distill["runs"]
    teacher = distill["teacher"]
    ids = [run1.pk, run2.pk]
    if case == "same_run":
        ids = [run1.pk, run1.pk]
    elif case == "same_judge":
        again = judged_run(teacher, distill["gens"], [False] * 7)
        ids = [run1.pk, again.pk]
    elif case == "other_config":
        hot = make_judge(name="teacher-hot", decoding={"temperature": 0.2, "seed": 3})
        ids = [run1.pk, judged_run(hot, distill["gens"], [True] * 7).pk]
    elif case == "missing":
        ids = [run1.pk, 999999]
    elif case == "not_teacher":
        ids = [run2.pk, run1.pk]
    elif case == "three":
        ids = [run1.pk, run2.pk, run2.pk]
    out = tmp_path / "sft.jsonl"
    with pytest.raises(DistillationError, match=message):
        distill_export(teacher=teacher, run_ids=ids, path=out)
    assert list(tmp_path.iterdir()) == []


def test_command(distill, tmp_path):
    run1, run2 = distill["runs"]
    out = tmp_path / "sft.jsonl"
    stdout = StringIO()
    call_command(
        "distill_export",
        "--teacher",
        "teacher",
        "--runs",
        f"{run1.pk},{run2.pk}",
        "-o",
        str(out),
        stdout=stdout,
    )
    assert "wrote 2 records" in stdout.getvalue() and "inconsistent 1" in stdout.getvalue()
    assert len(out.read_text().splitlines()) == 2
    with pytest.raises(CommandError, match="no judge named 'nobody'"):
        call_command("distill_export", "--teacher", "nobody", "--runs", "1,2", "-o", str(out))
    with pytest.raises(CommandError, match="integer run ids"):
        call_command("distill_export", "--teacher", "teacher", "--runs", "a,b", "-o", str(out))
    with pytest.raises(CommandError, match="the same run"):
        call_command(
            "distill_export",
            "--teacher",
            "teacher-seed2",
            "--runs",
            f"{run2.pk},{run2.pk}",
            "-o",
            str(out),
        )
