"""Studies of every form type through the services on PostgreSQL: items with a second
generation, context and known answers; submissions checked by the form type (refusals write
nothing); solve answers scored by the pack at submission; the form type's agreement report;
the exports carry the answers."""

import pytest
from django.core.exceptions import ValidationError

from annotation.labels import parse_form
from annotation.models import Annotation, AttentionCheckResult, Study
from annotation.selectors.exports import study_item_label_rows
from annotation.selectors.flow import study_export_rows
from annotation.selectors.forms import item_view, study_form
from annotation.selectors.report_forms import form_report_display, study_form_report
from annotation.services import study as study_services
from annotation.services.assignment import participant_current_assignment
from annotation.services.form_items import study_form_items_add
from annotation.services.submission import SubmissionRefused, annotation_submit
from tests.annotation.factories import (
    make_form_study,
    make_generations,
    make_pair_generations,
    submit_form_answer,
    working_participant,
)
from tests.annotation.form_types import packs  # noqa: F401  (registers test-exact)

pytestmark = pytest.mark.django_db


def test_rating_study_submissions_and_report():
    gens = make_generations(2)
    study = make_form_study(
        "rating",
        {"preset": "scirecipe"},
        specs=[{"generation_id": g.pk} for g in gens],
        items_per_participant=2,
    )
    dims = ("granularity", "order", "semantic", "overall")
    p = working_participant(study, "R1")
    assignment = participant_current_assignment(participant=p)
    form = study_form(study=study)
    view = item_view(item=assignment.item, participant_id=p.pk, form=form)
    half = parse_form({"goal_ack": ["1"], "r-granularity": ["3"]}, form=form, item=view)
    with pytest.raises(SubmissionRefused) as refused:
        annotation_submit(assignment=assignment, label=half)
    assert "Operational order: choose a rating from 0 to 4." in refused.value.messages
    assert not Annotation.objects.filter(item__study=study).exists()
    scores = {"R1": (4, 1), "R2": (4, 0), "R3": (3, 1)}
    for pid, (first, second) in scores.items():
        p = p if pid == "R1" else working_participant(study, pid)
        for value in (first, second):
            res, _ = submit_form_answer(p, {f"r-{d}": [str(value)] for d in dims})
            assert res.created and res.annotation.has_failure is False
    stored = Annotation.objects.filter(item__study=study).order_by("id").first()
    assert stored.label == {"ratings": dict.fromkeys(dims, 4)} and stored.failures == []
    report = study_form_report(study=study, n_resamples=50, use_cache=False)
    assert report["form_type"] == "rating" and report["n_annotations"] == 6
    first = {r["name"]: r for r in report["sections"][0]["rows"]}
    assert first["Krippendorff α (ordinal)"]["stat"]["value"] > 0.5
    assert first["Weighted κ (quadratic, mean over pairs)"]["stat"]["value"] > 0.5
    shown = form_report_display(study=study)
    assert shown["sections"][0]["title"] == "Step granularity (0–4)"
    rows = list(study_item_label_rows(study=study))
    assert rows[0]["form_type"] == "rating"
    assert rows[0]["labels"][0]["label"]["ratings"]["overall"] in (3, 4)


def test_customplans_study_known_answers_majority_and_exports():
    gens = make_generations(3)
    study = make_form_study(
        "customplans",
        specs=[
            {"generation_id": gens[0].pk, "context": {"hint": "I only have a stovetop"}},
            {"generation_id": gens[1].pk, "context": {"hint": "I am vegan"}},
            {
                "generation_id": gens[2].pk,
                "kind": "attention",
                "context": {"hint": "Answer Yes and Yes"},
                "expected_label": {"q1": True, "q2": True},
            },
        ],
        items_per_participant=2,
        attention_rate=1.0,
    )
    p = working_participant(study, "C1")
    seen_hints = []
    for _ in range(3):
        assignment = participant_current_assignment(participant=p)
        if assignment is None:
            break
        seen_hints.append(assignment.item.context["hint"])
        res, _ = submit_form_answer(p, {"q1": ["yes"], "q2": ["missing", "vague"]})
        assert res.annotation.label["q2"] == ["missing", "vague"]
        assert res.annotation.has_failure is True
    assert "Answer Yes and Yes" in seen_hints
    check = AttentionCheckResult.objects.get(participant=p)
    assert check.passed is False and "expected {'q1': True, 'q2': True}" in check.detail
    for pid in ("C2", "C3"):
        q = working_participant(study, pid)
        for _ in range(4):
            if participant_current_assignment(participant=q) is None:
                break
            submit_form_answer(q, {"q1": ["yes"], "q2": ["yes"]})
    report = study_form_report(study=study, n_resamples=20, use_cache=False)
    # both regular items: Q1 3×Yes, Q2 2 of 3 Yes → FULLYCORRECT on both
    assert report["summary"]["fully_correct"] == {"count": 2, "n": 2, "percent": 100.0}
    titles = [s["title"] for s in report["sections"]]
    assert titles[:2] == ["Q1 (executable)", "Q2 (customized)"]
    exported = [r for r in study_export_rows(study=study) if r["item_kind"] == "regular"]
    assert {tuple(r["label"]["q2"]) for r in exported} == {("missing", "vague"), ("yes",)}


def test_pairwise_study_order_recorded_and_mapped_to_systems():
    firsts, seconds = make_pair_generations(1)
    study = make_form_study(
        "pairwise",
        specs=[{"generation_id": firsts[0].pk, "generation_b_id": seconds[0].pk}],
        items_per_participant=1,
        overlap=12,
    )
    orders = {}
    for k in range(12):
        p = working_participant(study, f"P{k}")
        res, view = submit_form_answer(p, {"pref": ["A"]})
        label = res.annotation.label
        # "A" is whichever system this participant saw first
        assert label["preferred"] == ("second" if view.swapped else "first")
        assert label["order"] == ("ba" if view.swapped else "ab") and label["shown"] == "A"
        orders[label["order"]] = orders.get(label["order"], 0) + 1
        if len(orders) == 2 and k >= 3:
            break
    assert set(orders) == {"ab", "ba"}  # randomised per participant
    report = study_form_report(study=study, n_resamples=20, use_cache=False)
    rows = {r["name"]: r for r in report["sections"][0]["rows"]}
    assert rows["Pairwise percent agreement"]["stat"]["value"] < 1
    row = next(study_item_label_rows(study=study))
    assert row["generation_b_id"] == seconds[0].pk


def test_pairwise_items_need_a_second_generation_of_the_same_procedure():
    firsts, seconds = make_pair_generations(2)
    study = make_form_study("pairwise", specs=[], items_per_participant=1)
    with pytest.raises(ValidationError, match="item 2: generation_b_id None not found"):
        study_form_items_add(
            study=study,
            items=[
                {"generation_id": firsts[0].pk, "generation_b_id": seconds[0].pk},
                {"generation_id": firsts[1].pk},
            ],
        )
    with pytest.raises(ValidationError, match="item 1: generation_b_id must be a generation of"):
        study_form_items_add(
            study=study, items=[{"generation_id": firsts[0].pk, "generation_b_id": seconds[1].pk}]
        )
    with pytest.raises(ValidationError, match="item 1: expected_label: preferred must be"):
        study_form_items_add(
            study=study,
            items=[
                {
                    "generation_id": firsts[0].pk,
                    "generation_b_id": seconds[0].pk,
                    "kind": "attention",
                }
            ],
        )
    assert not study.items.exists()  # all or nothing


def test_solve_study_scored_at_submission_and_a_missing_pack_is_a_message():
    gens = make_generations(2)
    specs = [
        {
            "generation_id": g.pk,
            "context": {"prompt": f"What is {k} + {k}?", "record": {"id": str(k), "target": 2 * k}},
        }
        for k, g in enumerate(gens, start=1)
    ]
    study = make_form_study("solve", {"pack": "test-exact"}, specs=specs, items_per_participant=2)
    p = working_participant(study, "S1")
    results = []
    for _ in range(2):
        assignment = participant_current_assignment(participant=p)
        target = assignment.item.context["record"]["target"]
        res, _ = submit_form_answer(p, {"answer": [str(target)]})
        results.append(res.annotation.label)
    assert [r["metrics"] for r in results] == [{"correct": 1}, {"correct": 1}]
    assert all(r["scorer"] == "test-exact" for r in results)
    # the pack disappears (an uninstalled pack): the answer is kept, with the reason
    Study.objects.filter(pk=study.pk).update(form_config={"pack": "gone-pack"})
    study.refresh_from_db()
    q = working_participant(study, "S2")
    res, _ = submit_form_answer(q, {"answer": ["41"]})
    assert "scorer pack 'gone-pack' is not available" in res.annotation.label["score_error"]
    assert res.annotation.label["answer"] == "41"
    report = study_form_report(study=study, n_resamples=0, use_cache=False)
    assert report["summary"]["n_scored"] == 2 and report["summary"]["n_errors"] == 1
    empty = participant_current_assignment(participant=q)
    form = study_form(study=study)
    blank = parse_form(
        {"goal_ack": ["1"], "answer": [" "]},
        form=form,
        item=item_view(item=empty.item, participant_id=q.pk, form=form),
    )
    with pytest.raises(SubmissionRefused, match=r"Answer: write your answer\."):
        annotation_submit(assignment=empty, label=blank)


def test_study_settings_refuse_bad_form_config_naming_the_field():
    with pytest.raises(ValidationError) as exc:
        study_services.study_create(
            name="x", generation_ids=[], form_type="rating", form_config={"points": 40}
        )
    assert "form_config.points" in str(exc.value.message_dict["form_config"])
    with pytest.raises(ValidationError) as exc:
        study_services.study_create(
            name="x", generation_ids=[], form_type="solve", form_config={"pack": "nope"}
        )
    assert "not available" in str(exc.value.message_dict["form_config"])
    with pytest.raises(ValidationError) as exc:
        study_services.study_create(name="x", generation_ids=[], form_type="likert")
    assert "unknown form type" in str(exc.value.message_dict["form_type"])
    assert not Study.objects.filter(name="x").exists()


def test_solve_with_the_longproc_countdown_pack_worked_examples():
    """The human baseline scored by the LongProc Countdown validator (notes §1.2): F.5
    [44, 48, 35, 6] → 25 with 48 − 44 = 4, 35 − 4 = 31, 31 − 6 = 25 is correct; G.4's
    "No feasible solution found." for [30, 6, 8, 6] → 27 scores 0."""
    gens = make_generations(2)
    study = make_form_study(
        "solve",
        {"pack": "longproc-countdown"},
        specs=[
            {
                "generation_id": gens[0].pk,
                "context": {"record": {"id": "F5", "numbers": [44, 48, 35, 6], "target": 25}},
            },
            {
                "generation_id": gens[1].pk,
                "context": {"record": {"id": "G4", "numbers": [30, 6, 8, 6], "target": 27}},
            },
        ],
        items_per_participant=2,
    )
    p = working_participant(study, "H1")
    answers = {
        "F5": "<Solution>\n48 - 44 = 4\n35 - 4 = 31\n31 - 6 = 25\n</Solution>",
        "G4": "No feasible solution found.",
    }
    got = {}
    for _ in range(2):
        record = participant_current_assignment(participant=p).item.context["record"]
        res, _ = submit_form_answer(p, {"answer": [answers[record["id"]]]})
        got[record["id"]] = res.annotation.label["metrics"]["correct"]
    assert got == {"F5": 1, "G4": 0}
    report = study_form_report(study=study, n_resamples=0, use_cache=False)
    assert report["summary"]["correct"] == {"value": 0.5}
