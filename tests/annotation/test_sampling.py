"""Item sampling strategies (``Study.sampling``): least annotated first, a balanced mix of topics,
of generators, or of both at once per participant, a fixed seeded order. Fairness is counted per stratum; race
safety is tested with participants claiming and submitting at once from threads on PostgreSQL
(never an item past k, never one item twice for a participant)."""

from __future__ import annotations

import itertools
import threading
from collections import Counter

import pytest
from django.db import connections

from annotation import rules
from annotation.models import Annotation, Assignment, Participant, StudyItem
from annotation.services import study as study_services
from annotation.services.assignment import participant_current_assignment
from annotation.services.submission import annotation_submit
from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic
from tests.annotation.factories import full_label, working_participant


def make_mixed_generations(*, n_strata: int, per_stratum: int, by: str) -> list[Generation]:
    """``n_strata`` generators (or topics) with ``per_stratum`` generations each, stratum after
    stratum in creation order so that position order alone would not balance them."""
    if by == "topic":
        return make_grid_generations(n_topics=n_strata, n_generators=1, per_cell=per_stratum)
    return make_grid_generations(n_topics=1, n_generators=n_strata, per_cell=per_stratum)


def make_sampled_study(gens, **settings):
    settings.setdefault("min_seconds_per_item", 0)
    return study_services.study_create(
        name="Sampling study", generation_ids=[g.pk for g in gens], **settings
    )


def work_through(participant) -> list[StudyItem]:
    """Claim and submit until the participant is done; the items in the order served."""
    served = []
    while True:
        p = Participant.objects.select_related("study").get(pk=participant.pk)
        a = participant_current_assignment(participant=p)
        if a is None:
            return served
        served.append(a.item)
        a = Assignment.objects.select_related(
            "item__generation__procedure", "participant__study"
        ).get(pk=a.pk)
        annotation_submit(assignment=a, label=full_label())


def stratum_of(item: StudyItem, by: str):
    g = Generation.objects.select_related("procedure").get(pk=item.generation_id)
    return g.procedure.topic_id if by == "topic" else g.generator_id


# --- pure rules -------------------------------------------------------------------------------


def test_seeded_rank_is_stable_and_depends_on_the_seed():
    assert rules.seeded_rank(seed=7, key=42) == rules.seeded_rank(seed=7, key=42)
    order_a = sorted(range(50), key=lambda k: rules.seeded_rank(seed=1, key=k))
    order_b = sorted(range(50), key=lambda k: rules.seeded_rank(seed=2, key=k))
    assert order_a != order_b and sorted(order_a) == list(range(50))
    assert all(0 <= rules.seeded_rank(seed=3, key=k) < rules.SEEDED_RANK_MAX for k in range(100))


def test_seeded_ranks_put_the_first_keys_ahead_each_group_in_seeded_order():
    keys = list(range(100, 130))
    plain = rules.seeded_ranks(seed=4, keys=keys)
    assert plain == {k: rules.seeded_rank(seed=4, key=k) for k in keys}
    first = {101, 107, 120, 129}
    ranks = rules.seeded_ranks(seed=4, keys=keys, first=first)
    order = sorted(keys, key=ranks.__getitem__)
    assert sorted(ranks.values()) == list(range(len(keys)))
    assert set(order[:4]) == first
    assert order[:4] == sorted(first, key=plain.__getitem__)
    assert order[4:] == sorted(set(keys) - first, key=plain.__getitem__)


def test_stratum_next_picks_the_least_seen_open_stratum():
    seen = {(1,): 2, (2,): 1, (3,): 1}
    assert rules.stratum_next(open_strata={(1,), (2,), (3,)}, seen=seen) == (2,)
    assert rules.stratum_next(open_strata={(1,), (3,)}, seen={(1,): 0, (3,): 5}) == (1,)
    assert rules.stratum_next(open_strata=set(), seen={(1,): 0}) is None
    assert rules.stratum_next(open_strata={(None,), (4,)}, seen={(4,): 1}) == (None,)


def test_stratum_next_with_two_dimensions_balances_both():
    # topic "a" seen twice, "b" once; generator 1 seen twice, 2 once, 3 never
    seen = {("a", 1): 2, ("b", 2): 1}
    cells = {(t, g) for t in "ab" for g in (1, 2, 3)}
    assert rules.stratum_next(open_strata=cells, seen=seen) == ("b", 3)  # 1 + 0
    # a cell seen less breaks a tie of the sums: ("a", 3) = 2 + 0 = ("b", 2) = 1 + 1
    assert rules.stratum_next(open_strata={("a", 3), ("b", 2)}, seen=seen) == ("a", 3)
    # six picks over 2 topics x 3 generators: 3 + 3 topics and 2 + 2 + 2 generators
    had: Counter = Counter()
    for _ in range(6):
        had[rules.stratum_next(open_strata=cells, seen=dict(had))] += 1
    assert Counter(t for t, _ in had.elements()) == {"a": 3, "b": 3}
    assert Counter(g for _, g in had.elements()) == {1: 2, 2: 2, 3: 2}


# --- fairness ---------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("by", ["generator", "topic"])
def test_stratified_gives_each_participant_a_balanced_mix(by):
    gens = make_mixed_generations(n_strata=3, per_stratum=6, by=by)
    study = make_sampled_study(
        gens, sampling=f"by_{by}", overlap=2, items_per_participant=6, prolific_study_id=""
    )
    per_participant = {}
    for i in range(6):  # 6 participants x 6 items = 36 = 18 items x k 2: the pool runs dry
        p = working_participant(study, f"STRAT_{by}_{i}")
        served = work_through(p)
        per_participant[p.pk] = Counter(stratum_of(item, by) for item in served)
    strata = {stratum_of(i, by) for i in study.items.filter(kind="regular")}
    assert len(strata) == 3
    for counts in per_participant.values():  # 2 + 2 + 2 for every participant
        assert [counts[s] for s in sorted(strata)] == [2, 2, 2], counts
    n_done = Counter(Annotation.objects.filter(item__study=study).values_list("item_id", flat=True))
    assert set(n_done.values()) == {2} and len(n_done) == 18


_GRIDS = itertools.count()


def make_grid_generations(*, n_topics: int, n_generators: int, per_cell: int) -> list[Generation]:
    """Every topic x generator cell with ``per_cell`` generations, cell after cell in creation
    order (so that position order alone would not balance either dimension)."""
    dataset = Dataset.objects.create(name=f"grid-{next(_GRIDS)}", version="v1")
    topics = list(Topic.objects.order_by("pk")[:n_topics])
    assert len(topics) == n_topics
    generators = [
        Generator.objects.create(name=f"gridgen-{dataset.pk}-{i}", model="m")
        for i in range(n_generators)
    ]
    out = []
    for t, topic in enumerate(topics):
        for g, generator in enumerate(generators):
            for i in range(per_cell):
                proc = Procedure.objects.create(
                    dataset=dataset,
                    source_example_id=f"grid-{t}-{g}-{i}",
                    goal=f"Goal {t}-{g}-{i}",
                    steps=["a", "b", "c", "d"],
                    topic=topic,
                )
                out.append(
                    Generation.objects.create(
                        procedure=proc, generator=generator, predicted_steps=["w", "x", "y", "z"]
                    )
                )
    return out


@pytest.mark.django_db
def test_topic_and_generator_sampling_balances_both_for_each_participant():
    gens = make_grid_generations(n_topics=2, n_generators=3, per_cell=2)
    study = make_sampled_study(
        gens, sampling="by_topic_and_generator", overlap=2, items_per_participant=6
    )
    for i in range(4):  # 4 participants x 6 items = 24 = 12 items x k 2: the pool runs dry
        served = work_through(working_participant(study, f"GRID_{i}"))
        topics = Counter(stratum_of(item, "topic") for item in served)
        generators = Counter(stratum_of(item, "generator") for item in served)
        assert sorted(topics.values()) == [3, 3], topics
        assert sorted(generators.values()) == [2, 2, 2], generators
    n_done = Counter(Annotation.objects.filter(item__study=study).values_list("item_id", flat=True))
    assert set(n_done.values()) == {2} and len(n_done) == 12
    # one dimension at a time is not enough: by topic alone, generators are left to position
    other = make_sampled_study(
        make_grid_generations(n_topics=2, n_generators=3, per_cell=2),
        sampling="by_topic",
        overlap=2,
        items_per_participant=6,
    )
    served = work_through(working_participant(other, "GRID_TOPIC_ONLY"))
    assert sorted(Counter(stratum_of(item, "generator") for item in served).values()) != [2, 2, 2]


@pytest.mark.django_db
def test_least_annotated_first_is_not_balanced_by_stratum_the_contrast():
    gens = make_mixed_generations(n_strata=3, per_stratum=6, by="generator")
    study = make_sampled_study(gens, overlap=2, items_per_participant=6)
    p = working_participant(study, "LEAST_1")
    served = work_through(p)
    # position order, least annotated first: the first generator's six items
    assert len({stratum_of(item, "generator") for item in served}) == 1


@pytest.mark.django_db
def test_seeded_order_is_fixed_by_the_seed():
    gens = make_mixed_generations(n_strata=1, per_stratum=12, by="generator")
    orders = []
    for seed in (11, 11, 12):
        study = make_sampled_study(
            gens, sampling="seeded", sampling_seed=seed, overlap=1, items_per_participant=12
        )
        served = work_through(working_participant(study, f"SEED_{seed}_{len(orders)}"))
        orders.append([item.generation_id for item in served])
    assert orders[0] == orders[1]  # same seed, same order (another study)
    assert orders[0] != orders[2] and sorted(orders[0]) == sorted(orders[2])
    expected = sorted((g.pk for g in gens), key=lambda k: rules.seeded_rank(seed=11, key=k))
    assert orders[0] == expected


@pytest.mark.django_db
def test_seeded_order_fills_each_item_to_k_in_turn():
    gens = make_mixed_generations(n_strata=1, per_stratum=6, by="generator")
    study = make_sampled_study(
        gens, sampling="seeded", sampling_seed=5, overlap=2, items_per_participant=3
    )
    first = [i.generation_id for i in work_through(working_participant(study, "FILL_A"))]
    second = [i.generation_id for i in work_through(working_participant(study, "FILL_B"))]
    third = [i.generation_id for i in work_through(working_participant(study, "FILL_C"))]
    ranked = sorted((g.pk for g in gens), key=lambda k: rules.seeded_rank(seed=5, key=k))
    assert first == second == ranked[:3] and third == ranked[3:]


# --- race safety on PostgreSQL ----------------------------------------------------------------


def _run_threads(fn, args_list):
    barrier = threading.Barrier(len(args_list))
    errors = []

    def worker(args):
        try:
            barrier.wait()
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(a,)) for a in args_list]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "sampling",
    ["least_annotated", "by_generator", "by_topic", "by_topic_and_generator", "seeded"],
)
def test_concurrent_sessions_never_exceed_k_nor_repeat_an_item(sampling):
    if sampling == "by_topic_and_generator":
        gens = make_grid_generations(n_topics=2, n_generators=3, per_cell=2)
    else:
        by = "topic" if sampling == "by_topic" else "generator"
        gens = make_mixed_generations(n_strata=3, per_stratum=4, by=by)
    study = make_sampled_study(
        gens, sampling=sampling, sampling_seed=3, overlap=2, items_per_participant=4
    )
    people = [working_participant(study, f"RACE_{sampling}_{i}") for i in range(10)]
    # 10 participants x 4 items = 40 wanted, 12 items x k 2 = 24 slots: they compete
    _run_threads(work_through, [(p,) for p in people])

    per_item = Counter(Annotation.objects.filter(item__study=study).values_list("item", flat=True))
    assert per_item and max(per_item.values()) <= 2
    assert sum(per_item.values()) == 24  # every slot used, none twice
    pairs = Counter(
        Assignment.objects.filter(item__study=study).values_list("participant_id", "item_id")
    )
    assert max(pairs.values()) == 1
    for item in StudyItem.objects.filter(study=study):
        live = Assignment.objects.filter(item=item, state__in=["active", "submitted"]).count()
        assert item.n_assigned == live <= 2
