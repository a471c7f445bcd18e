"""Creating the study a plan asks for: the planned number of items drawn from the judge's scored
generations (uniformly, seeded; or where the judge's samples disagree, each item keeping its
inclusion probability), the places that give each item its annotators, the reward, the target
and the design; refusals name their field and leave no row behind."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from annotation.models import Study, StudyItem, StudyPay
from annotation.selectors.prolific_study import draft_defaults
from tests.validation.ppi_plan.scenario import K, scored, votes_of
from validation.active.stats import draw, inclusion_probabilities, uncertainty_from_share
from validation.ppi_plan.services import study_from_plan
from validation.ppi_plan.stats import HALF_WIDTH, plan_from_pilot

pytestmark = pytest.mark.django_db


@pytest.fixture
def plan():
    rng = np.random.default_rng(5)
    human = (rng.random(60) < 0.3).astype(int)
    judge = np.where(rng.random(60) < 0.85, human, 1 - human)
    return plan_from_pilot(human=human, judge=judge, unlabelled=500, cost_human=0.9,
                           cost_judge=0.01, target=HALF_WIDTH, value=0.1)  # fmt: skip


@pytest.fixture
def admin(make_user):
    return make_user("boss", role="admin")


def _create(admin, world, plan, **over):
    kwargs = {"user": admin, "name": "Planned", "judge": world["judge"], "dataset": None,
              "n": 10, "overlap": 3, "items_per_participant": 4, "reward": Decimal("1.50"),
              "currency": "GBP", "sampling": "uniform", "seed": 7, "target_half_width": 0.05,
              "plan": plan, **over}  # fmt: skip
    return study_from_plan(**kwargs)


def _regular(study) -> list[StudyItem]:
    return list(study.items.filter(kind=StudyItem.Kind.REGULAR).order_by("generation_id"))


def test_a_uniform_study_has_the_planned_items_places_reward_and_design(admin, plan):
    world = scored(n=40)
    study = _create(admin, world, plan)
    items = _regular(study)
    population = sorted(g.pk for g in world["generations"])
    assert len(items) == 10 and {i.generation_id for i in items} <= set(population)
    assert all(i.inclusion_probability is None for i in items)
    assert study.items.count() == 10  # no known item was added
    assert study.overlap == 3 and study.items_per_participant == 4
    assert study.design["places"] == math.ceil(10 * 3 / 4) == draft_defaults(study=study).places
    pay = StudyPay.objects.get(study=study)
    assert (pay.reward, pay.currency) == (Decimal("1.50"), "GBP")
    assert study.target_half_width == 0.05
    design = study.design
    assert design["judge"] == world["judge"].pk and design["population"] == population
    assert (design["sampling"], design["seed"], design["n_expected"]) == ("uniform", 7, 10)
    assert design["plan"]["n"] == plan["n"] and design["plan"]["ppi_corr"] == plan["ppi_corr"]
    assert design["label_set"] is None and design["dataset"] is None
    assert study.created_by == admin


def test_the_same_seed_draws_the_same_items_another_seed_others(admin, plan):
    world = scored(n=40)
    first = {i.generation_id for i in _regular(_create(admin, world, plan))}
    again = {i.generation_id for i in _regular(_create(admin, world, plan, name="Again"))}
    other = {i.generation_id for i in _regular(_create(admin, world, plan, name="O", seed=8))}
    assert first == again and first != other


def test_parse_failures_and_other_datasets_are_not_in_the_population(admin, plan):
    from tests.judging.factories import judged_run, make_data

    world = scored(n=12, verdicts=[None, None] + [False] * 10)
    other = make_data(n=5, dataset="other", generators=("gen-b",))["generations"]
    judged_run(world["judge"], other, [True] * 5)
    study = _create(admin, world, plan, n=10, dataset=world["dataset"])
    parsed = sorted(g.pk for g in world["generations"][2:])
    assert study.design["population"] == parsed and study.design["dataset"] == world["dataset"].pk
    everywhere = _create(admin, world, plan, name="All", n=15)
    assert everywhere.design["population"] == sorted(parsed + [g.pk for g in other])
    with pytest.raises(ValidationError) as caught:
        _create(admin, world, plan, name="Too many", n=11, dataset=world["dataset"])
    assert "judge 'my-judge' on dataset 'bench' scored 10 generations" in caught.value.messages[0]


def test_where_the_judge_is_unsure_items_keep_their_inclusion_probability(admin, plan):
    world = scored(n=60, samples=True)
    study = _create(admin, world, plan, n=20, sampling="uncertainty", seed=11)
    population = study.design["population"]
    uncertainty = [uncertainty_from_share(sum(votes_of(i)) / K) for i in range(len(population))]
    expected = inclusion_probabilities(uncertainty, n_expected=20)
    drawn = draw(expected, seed=11)
    items = _regular(study)
    assert [i.generation_id for i in items] == [
        g for g, hit in zip(population, drawn, strict=True) if hit
    ]
    by_id = dict(zip(population, expected, strict=True))
    assert [i.inclusion_probability for i in items] == pytest.approx([by_id[i.generation_id]
                                                                      for i in items])  # fmt: skip
    assert study.design["sampling"] == "uncertainty" and 0 < study.design["mix"] < 1
    assert study.design["places"] == math.ceil(len(items) * 3 / 4)
    # the split items (2 of 4 votes) are drawn more often than the sure ones (0 or 4 of 4)
    split = [p for i, p in enumerate(expected) if sum(votes_of(i)) == 2]
    sure = [p for i, p in enumerate(expected) if sum(votes_of(i)) in (0, K)]
    assert min(split) > max(sure) > 0


@pytest.mark.parametrize(
    ("over", "field", "words"),
    [
        (
            {"sampling": "uncertainty"},
            "sampling",
            "40 of the 40 generations scored by judge 'my-judge' have no seeded samples",
        ),
        ({"n": 41}, "n", "41 items asked, but judge 'my-judge' scored 40 generations"),
        ({"reward": Decimal("150")}, "reward", "150 has no decimals"),
        ({"reward": Decimal("0.00")}, "reward", "more than 0.00 GBP"),
        ({"target_half_width": 0.7}, "target_half_width", "less than or equal to 0.5"),
        ({"sampling": "stratified"}, "sampling", "Choose one of uniform, uncertainty"),
    ],
)
def test_refusals_name_their_field_and_leave_nothing(admin, plan, over, field, words):
    world = scored(n=40)
    with pytest.raises(ValidationError) as caught:
        _create(admin, world, plan, **over)
    assert words in " ".join(caught.value.message_dict[field])
    assert not Study.objects.exists() and not StudyItem.objects.exists()
    assert not StudyPay.objects.exists()


def test_a_judge_that_scored_nothing_is_refused_at_the_judge(admin, plan):
    from tests.judging.factories import make_judge

    world = scored(n=5)
    idle = make_judge(name="idle", model="another-model")  # another judge_id: no verdicts
    with pytest.raises(ValidationError) as caught:
        _create(admin, {**world, "judge": idle}, plan, n=2)
    assert "No generation has a parsed verdict of judge 'idle'" in caught.value.messages[0]
    assert not Study.objects.exists()


def test_only_admins_create_the_study(make_user, plan):
    world = scored(n=10)
    with pytest.raises(PermissionDenied):
        _create(make_user("res", role="researcher"), world, plan, n=2)
    assert not Study.objects.exists()
