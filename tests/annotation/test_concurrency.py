"""Concurrent assignment on the real database: participants arriving at once never push an
item past k, and one participant's two tabs never hold two items."""

import threading

import pytest
from django.db import connection, connections

from annotation.models import Assignment, Participant, StudyItem
from annotation.selectors.annotator import participant_for_slug
from annotation.services.assignment import participant_current_assignment
from tests.annotation.factories import make_study, working_participant

pytestmark = pytest.mark.django_db(transaction=True)


def load_plain(p):
    return Participant.objects.get(pk=p.pk)


def load_as_item_page(p):
    """As the item page loads it: with its assignment state, which takes the unlocked claim."""
    return participant_for_slug(slug=p.study.slug, participant_id=p.pk, with_assignment_state=True)


LOADERS = pytest.mark.parametrize(
    "load", [load_plain, load_as_item_page], ids=["locked", "item-page"]
)


def run_at_once(fn, args_list):
    barrier = threading.Barrier(len(args_list))
    results, errors = [None] * len(args_list), []

    def worker(i, args):
        try:
            barrier.wait()
            results[i] = fn(*args)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i, a)) for i, a in enumerate(args_list)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    return results


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
@LOADERS
def test_simultaneous_participants_never_exceed_overlap(load):
    study = make_study(n_items=2, overlap=2)
    people = [working_participant(study, f"P{i}") for i in range(12)]  # 12 arrivals for 4 slots

    def claim(p):
        a = participant_current_assignment(participant=load(p))
        return a.item_id if a else None

    got = run_at_once(claim, [(p,) for p in people])
    claimed = [g for g in got if g is not None]
    for item in StudyItem.objects.filter(study=study):
        live = Assignment.objects.filter(item=item, state="active").count()
        assert live == item.n_assigned == 2
    assert len(claimed) == 4 and got.count(None) == 8


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
@LOADERS
def test_one_participant_two_tabs_get_the_same_item(load):
    study = make_study(n_items=6, overlap=3)
    p = working_participant(study, "TWO_TABS")

    def claim():
        return participant_current_assignment(participant=load(p)).pk

    got = run_at_once(claim, [() for _ in range(6)])
    assert len(set(got)) == 1
    assert Assignment.objects.filter(participant=p).count() == 1
    assert sum(StudyItem.objects.filter(study=study).values_list("n_assigned", flat=True)) == 1
