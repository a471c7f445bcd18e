"""The annotator's item path in database round trips: once a participant is working,
one item (its page, then its save) costs a known number of statements, counted as PostgreSQL
receives them: each query, and a BEGIN and a COMMIT for each transaction. Performance
figures: docs/performance/index.md#annotator-flow."""

import re
from contextlib import contextmanager

import pytest
from django.db import connection

from annotation.models import Annotation, Assignment
from tests.annotation.factories import item_page_fields, make_study, to_items, url

_ACTION = re.compile(r'id="item-form" method="post" action="([^"]+)"')


@contextmanager
def round_trips(monkeypatch):
    """Statements sent to the database inside the block: queries, plus BEGIN and COMMIT (or
    ROLLBACK) of each transaction the block opened."""
    seen = {"queries": [], "transactions": 0}

    def count(execute, sql, params, many, context):
        seen["queries"].append(sql)
        return execute(sql, params, many, context)

    for name in ("commit", "rollback"):
        original = getattr(connection, name)

        def ended(original=original):
            seen["transactions"] += 1
            return original()

        monkeypatch.setattr(connection, name, ended)
    with connection.execute_wrapper(count):
        yield seen
    monkeypatch.undo()


def _action(page: str) -> str:
    match = _ACTION.search(page)
    assert match, "no item form on the page"
    return match.group(1)


@pytest.mark.django_db(transaction=True)
def test_an_item_page_and_its_save_take_few_statements(client, monkeypatch):
    study = make_study(n_items=5, items_per_participant=5)
    to_items(client, study)
    page = client.get(url("item", study)).content.decode()  # the first claim sweeps the pool
    assert client.post(_action(page), item_page_fields()).status_code == 302

    with round_trips(monkeypatch) as page_trips:
        r = client.get(url("item", study))
    assert r.status_code == 200
    with round_trips(monkeypatch) as save_trips:
        r = client.post(_action(r.content.decode()), item_page_fields())
    assert r.status_code == 302 and r.url == url("item", study)

    assert Annotation.objects.count() == 2
    assert Assignment.objects.filter(state="submitted").count() == 2
    page_n = len(page_trips["queries"]) + 2 * page_trips["transactions"]
    save_n = len(save_trips["queries"]) + 2 * save_trips["transactions"]
    assert (page_n, save_n) == (2, 4), (page_trips, save_trips)


@pytest.mark.django_db(transaction=True)
def test_a_save_answered_with_the_next_item_takes_the_same_statements_in_one_request(
    client, monkeypatch
):
    """In place (the item page's script): the save and the next item's page in one request
    run exactly the statements of the two requests, no more."""
    study = make_study(n_items=5, items_per_participant=5)
    to_items(client, study)
    page = client.get(url("item", study)).content.decode()
    hx = {"HTTP_HX_REQUEST": "true", "HTTP_HX_BOOSTED": "true"}
    r = client.post(_action(page), item_page_fields(), **hx)
    assert r.status_code == 200 and r["HX-Replace-Url"] == url("item", study)

    with round_trips(monkeypatch) as trips:
        r = client.post(_action(r.content.decode()), item_page_fields(), **hx)
    assert r.status_code == 200 and r["HX-Replace-Url"] == url("item", study)
    assert Annotation.objects.count() == 2
    assert Assignment.objects.filter(state="active").count() == 1  # the next item, claimed
    n = len(trips["queries"]) + 2 * trips["transactions"]
    assert n == 2 + 4, trips
