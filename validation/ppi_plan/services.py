"""Create the study a plan asks for: its items drawn from the generations a judge scored
(uniformly, or where the judge is unsure: validation.active's inclusion probabilities), the
places that give each item its annotators, the reward, the target interval and the design
(how the items were chosen, for the corrected score). One transaction: a refusal leaves no
row behind."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from annotation.models import Study, StudyItem
from annotation.prolific.rules import places_needed
from annotation.services.pay import pay_terms_update
from annotation.services.prolific_study import reward_error
from annotation.services.study import study_create
from benchmarks.models import Dataset
from core.lazy import lazy_module
from core.roles import is_admin
from judging.models import Judge
from validation.active.stats import (
    DEFAULT_MIX,
    draw,
    inclusion_probabilities,
    uncertainty_from_share,
)
from validation.models import LabelSet
from validation.ppi_plan.population import population_ids, vote_shares

np = lazy_module("numpy")

UNIFORM, UNCERTAINTY = "uniform", "uncertainty"
SAMPLINGS = (UNIFORM, UNCERTAINTY)
# the plan's numbers kept in the study's design (what it was planned for)
PLAN_KEYS = ("n", "N", "cost", "effective_n", "ppi_corr", "sigma", "half_width", "confidence",
             "cost_human", "cost_judge", "target", "basis", "people_only")  # fmt: skip


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _where(judge: Judge, dataset: Dataset | None) -> str:
    return f"judge {judge.name!r}" + (f" on dataset {dataset.name!r}" if dataset else "")


def uniform_items(population: list[int], *, n: int, seed: int) -> list[int]:
    """A seeded random ``n`` of ``population`` (same seed, same items)."""
    rng = np.random.default_rng(seed)
    return sorted(int(g) for g in rng.choice(np.asarray(population), size=n, replace=False))


def uncertain_items(
    population: list[int], *, judge: Judge, dataset: Dataset | None, n: int, seed: int
) -> dict[int, float]:
    """``{generation id: its inclusion probability}`` of the items drawn where the judge is
    unsure: each item's vote share of the judge's k samples → its uncertainty → inclusion
    probabilities with ``n`` expected → one seeded Bernoulli draw (validation.active)."""
    shares = vote_shares(judge=judge, generation_ids=population)
    missing = sum(1 for g in population if shares[g] is None)
    if missing:
        raise ValidationError({"sampling": (
            f"{missing:,} of the {len(population):,} generations scored by "
            f"{_where(judge, dataset)} have no seeded samples of the judge, so its uncertainty "
            "is unknown there: launch a judge run with samples k > 1 over them, or sample "
            "uniformly."
        )})  # fmt: skip
    uncertainty = [uncertainty_from_share(shares[g]) for g in population]
    probabilities = inclusion_probabilities(uncertainty, n_expected=n, mix=DEFAULT_MIX)
    chosen = draw(probabilities, seed=seed)
    return {g: float(p) for g, p, hit in zip(population, probabilities, chosen, strict=True) if hit}


@transaction.atomic
def study_from_plan(
    *,
    user,
    name: str,
    judge: Judge,
    dataset: Dataset | None,
    n: int,
    overlap: int,
    items_per_participant: int,
    reward: Decimal,
    currency: str,
    sampling: str,
    seed: int,
    target_half_width: float | None,
    plan: dict[str, Any],
    label_set: LabelSet | None = None,
) -> Study:
    """The study ``plan`` asks for, ``n`` items of the generations ``judge`` scored (of
    ``dataset``); ``sampling`` ``uniform`` (exactly ``n``) or ``uncertainty`` (``n`` expected,
    each item's inclusion probability kept). ``ValidationError`` names the field at fault."""
    if not is_admin(user):
        raise PermissionDenied("Only admins create a study: it sets what people are paid.")
    if sampling not in SAMPLINGS:
        raise ValidationError({"sampling": f"Choose one of {', '.join(SAMPLINGS)}."})
    problem = reward_error(reward, currency)
    if problem:
        raise ValidationError({"reward": problem})
    population = population_ids(judge=judge, dataset=dataset)
    if not population:
        raise ValidationError({"judge": (
            f"No generation has a parsed verdict of {_where(judge, dataset)}: launch a judge "
            "run first, or choose another judge or dataset."
        )})  # fmt: skip
    if n > len(population):
        raise ValidationError({"n": (
            f"{n:,} items asked, but {_where(judge, dataset)} scored {len(population):,} "
            "generations: ask for at most that many."
        )})  # fmt: skip
    probabilities: dict[int, float] = {}
    if sampling == UNIFORM:
        chosen = uniform_items(population, n=n, seed=seed)
    else:
        probabilities = uncertain_items(population, judge=judge, dataset=dataset, n=n, seed=seed)
        chosen = sorted(probabilities)
        if len(chosen) < 2:
            raise ValidationError({"seed": (
                f"The draw with seed {seed} chose {len(chosen)} item(s): a corrected score needs "
                "at least 2; ask for more items or try another seed."
            )})  # fmt: skip
    places = places_needed(n_items=len(chosen), overlap=overlap,
                           items_per_participant=items_per_participant)  # fmt: skip
    design = {
        "judge": judge.pk,
        "dataset": dataset.pk if dataset else None,
        "population": population,
        "sampling": sampling,
        "mix": DEFAULT_MIX if sampling == UNCERTAINTY else None,
        "seed": seed,
        "n_expected": n,
        "places": places,
        "plan": _finite({k: plan[k] for k in PLAN_KEYS if k in plan}),
        "label_set": label_set.pk if label_set else None,
    }
    study = study_create(name=name, generation_ids=chosen, created_by=user, overlap=overlap,
                         items_per_participant=items_per_participant, design=design,
                         target_half_width=target_half_width)  # fmt: skip
    if probabilities:
        items = list(StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR))
        for item in items:
            item.inclusion_probability = probabilities[item.generation_id]
        StudyItem.objects.bulk_update(items, ["inclusion_probability"], batch_size=1000)
    pay_terms_update(study=study, user=user, currency=currency, reward=reward)
    return study
