"""A plan from a stored label set: its pilot (people's majority and the judge's verdict on the
items both labelled, the count of judge-only items) through :func:`plan_from_pilot`."""

from __future__ import annotations

from typing import Any

from validation.label_sets.adapters import ALL_GROUPS, judge_names, ppi_inputs
from validation.label_sets.reads import parsed
from validation.models import LabelSet
from validation.ppi_plan.stats import plan_from_pilot


def label_set_judges(label_set: LabelSet) -> list[str]:
    return judge_names(parsed(label_set))


def label_set_plan(
    label_set: LabelSet, *, judge: str, cost_human: float, cost_judge: float, target: str,
    value: float,
) -> dict[str, Any]:  # fmt: skip
    """The plan for ``judge`` on the whole label set; raises ``LabelSetError`` (labels that are
    not 0/1, an unknown judge) or ``PlanError``."""
    rows = ppi_inputs(parsed(label_set), judge=judge)[ALL_GROUPS]
    return plan_from_pilot(
        human=rows["human"], judge=rows["judge"], unlabelled=len(rows["unlabelled"]),
        cost_human=cost_human, cost_judge=cost_judge, target=target, value=value,
    )  # fmt: skip


def study_human_cost(study_id: int) -> tuple[float, str, str]:
    """``(cost of one human label, currency, the rule in words)`` from a study's pay terms and
    ``PROLIFIC_FEE_RATE``; a ``LookupError`` naming what is missing."""
    from annotation.conf import prolific_fee_rate
    from annotation.models import Study, StudyPay
    from validation.ppi_plan.costs import cost_words, human_label_cost

    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        raise LookupError(f"no study with id {study_id}")
    pay = StudyPay.objects.filter(study=study).first()
    if pay is None or (pay.reward <= 0 and pay.bonus_per_item <= 0):
        raise LookupError(f"study {study.name!r} has no reward set: give --cost-human")
    terms = {"reward": pay.reward, "items_per_participant": study.items_per_participant,
             "bonus_per_item": pay.bonus_per_item, "overlap": study.overlap,
             "fee_rate": prolific_fee_rate()}  # fmt: skip
    return human_label_cost(**terms), pay.currency, cost_words(**terms, currency=pay.currency)


def study_initial(
    pilot_name: str, plan: dict[str, Any], *, judge: str, currency: str, study=None
) -> dict[str, Any]:
    """The new-study form prefilled from ``plan``: its n, its interval as the target, the app
    judge named like the label set's, and the pay of ``study`` (the study the plan took its
    cost from) or else the reward at which a human label costs what the plan assumed."""
    from annotation.conf import prolific_fee_rate
    from annotation.models import StudyPay
    from judging.models import Judge
    from validation.ppi_plan.costs import reward_for_cost
    from validation.ppi_plan.forms import CURRENCIES
    from validation.ppi_plan.stats import HALF_WIDTH

    target = plan["target"]
    half = target["value"] if target["kind"] == HALF_WIDTH else plan["half_width"]
    initial = {
        "name": f"{pilot_name}: planned study"[:200],
        "judge": Judge.objects.filter(name=judge).first(),
        "n": plan["n"],
        "overlap": 3,
        "items_per_participant": 20,
        "currency": currency if (currency, currency) in CURRENCIES else "GBP",
        "target_points": round(100 * half, 2) if half and half < 0.5 else None,
        "seed": 0,
    }
    pay = StudyPay.objects.filter(study=study).first() if study is not None else None
    if pay is not None:
        initial.update(overlap=study.overlap, items_per_participant=study.items_per_participant,
                       currency=pay.currency, reward=f"{pay.reward:.2f}")  # fmt: skip
    else:
        reward = reward_for_cost(cost=plan["cost_human"], fee_rate=prolific_fee_rate(),
                                 overlap=initial["overlap"],
                                 items_per_participant=initial["items_per_participant"])  # fmt: skip
        initial["reward"] = f"{reward:.2f}" if reward is not None else ""
    return initial


def study_pilot(*, study_id: int, judge_name: str) -> dict[str, Any]:
    """The pilot of a running study: people's majority and the judge's verdict on the study's
    items both labelled (paired), and the number of the judge's other scored generations (the
    judge-only items). A ``LookupError`` naming what is missing."""
    from annotation.models import Study
    from judging.models import Judge
    from judging.selectors.judgments import score_records
    from judging.selectors.verdicts import study_majority

    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        raise LookupError(f"no study with id {study_id}")
    if study.form_type != "critical_failure":
        raise LookupError(f"study {study.name!r} is a {study.form_type} study: no has_failure")
    judge = Judge.objects.filter(name=judge_name).first()
    if judge is None:
        raise LookupError(f"no judge named {judge_name!r}")
    majority, _, _ = study_majority(study)
    human, verdicts, unlabelled = [], [], 0
    for rec in score_records(judge=judge, generator=None, run=None, dataset=None):
        if rec["parse_failed"]:
            continue
        says = majority.get(rec["generation_id"])
        if says is None:
            unlabelled += 1
        else:
            human.append(int(says))
            verdicts.append(int(bool(rec["has_failure"])))
    return {"human": human, "judge": verdicts, "unlabelled": unlabelled}


def study_pilot_judges(study) -> list[str]:
    """The app judges with a verdict on one of ``study``'s items, by name."""
    from judging.selectors.verdicts import judges_with_verdicts, study_item_generations

    generation_ids = set(study_item_generations(study=study).values())
    return sorted(j.name for j in judges_with_verdicts(generation_ids=generation_ids))


def judge_cost_per_verdict(judge_name: str) -> tuple[float, str]:
    """``(the judge's measured cost per judgment, the rule in words)``: the cost of its runs over
    the judgments it holds (reused judgments cost nothing again, as in the leaderboard). A
    ``LookupError`` when the judge is unknown or has no measured cost."""
    from django.db.models import Sum

    from judging.models import Judge, JudgeRun, Judgment

    judge = Judge.objects.filter(name=judge_name).first()
    if judge is None:
        raise LookupError(f"no judge named {judge_name!r}")
    cost = JudgeRun.objects.filter(judge=judge).aggregate(total=Sum("cost"))["total"] or 0
    n = Judgment.objects.filter(judge_key=judge.judge_id).count()
    if not n or cost <= 0:
        raise LookupError(f"judge {judge_name!r} has no measured cost yet: give --cost-judge")
    per = float(cost) / n
    return (
        per,
        f"A judge verdict costs {per:,.6f}: {judge_name}'s runs cost {float(cost):,.2f} for "
        f"{n:,} judgments.",
    )
