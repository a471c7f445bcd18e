"""The dataset browser pages: access per role, counts, filters (htmx partial and plain GET),
pagination, the side-by-side procedure page, error pages, query counts, and one real-browser run."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from benchmarks.models import Generation, Generator
from benchmarks.tokens import count_steps_tokens
from tests.benchmarks.factories import make_benchmark


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    # PBKDF2 costs ~0.3 s per user on this machine; the hasher is not what these tests test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def bench(db):
    return make_benchmark(n_procedures=6, n_generators=3)


@pytest.fixture
def researcher(client, make_user):
    client.force_login(make_user("rita", role="researcher"))
    return client


def _pages(b: dict) -> list[str]:
    return [
        reverse("benchmarks:dataset_list"),
        reverse("benchmarks:dataset_detail", args=[b["dataset"].pk]),
        reverse("benchmarks:procedure_detail", args=[b["procedures"][0].pk]),
    ]


def test_anonymous_users_are_sent_to_login(bench, client):
    for url in _pages(bench):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login") + "?next=")


def test_annotators_get_the_403_page(bench, client, make_user):
    client.force_login(make_user("ann", role="annotator"))
    for url in _pages(bench):
        response = client.get(url)
        assert response.status_code == 403
        assert "You can't open this page" in response.content.decode()
        assert "ex-0000" not in response.content.decode()


@pytest.mark.parametrize("role", ["researcher", "admin"])
def test_researchers_and_admins_see_every_page(bench, client, make_user, role):
    client.force_login(make_user("u", role=role))
    for url in _pages(bench):
        assert client.get(url).status_code == 200


def test_dataset_list_shows_counts(bench, researcher):
    response = researcher.get(reverse("benchmarks:dataset_list"))
    rows = {(d.name, d.version): d for d in response.context["datasets"]}
    assert (rows["bench", "v1"].n_procedures, rows["bench", "v1"].n_generations) == (6, 18)
    assert (rows["bench", "v2"].n_procedures, rows["bench", "v2"].n_generations) == (1, 1)
    html = response.content.decode()
    assert bench["dataset"].get_absolute_url() in html
    assert re.search(r'<td class="num">18</td>', html)


def test_dataset_page_topic_counts(bench, researcher):
    response = researcher.get(bench["dataset"].get_absolute_url())
    counts = {t.slug: t.count for t in response.context["topics"]}
    assert counts == {t.slug: 2 for t in bench["topics"]}
    html = response.content.decode()
    assert f"?topic={bench['topics'][0].slug}" in html


def _rows(response) -> list[str]:
    return [p.source_example_id for p in response.context["page"].object_list]


def test_dataset_page_filters_without_javascript(bench, researcher):
    url = bench["dataset"].get_absolute_url()
    slug = bench["topics"][1].slug
    response = researcher.get(url, {"topic": slug})
    assert _rows(response) == ["ex-0001", "ex-0004"]
    html = response.content.decode()
    assert "<html" in html and f'<option value="{slug}" selected>' in html
    assert _rows(researcher.get(url, {"q": "sourdough"})) == ["ex-0000"]
    assert _rows(researcher.get(url, {"q": "number 4", "topic": slug})) == ["ex-0004"]
    empty = researcher.get(url, {"q": "zzz-nothing"})
    assert _rows(empty) == [] and "No procedures match these filters" in empty.content.decode()


def test_htmx_request_gets_only_the_table_partial(bench, researcher):
    url = bench["dataset"].get_absolute_url()
    response = researcher.get(url, {"q": "sourdough"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "<html" not in html and html.lstrip().startswith('<div id="procedure-results"')
    assert "Bake sourdough bread" in html and "Do task number 1" not in html
    assert "HX-Request" in response["Vary"]
    full = researcher.get(url, {"q": "sourdough"})
    assert "<html" in full.content.decode() and "HX-Request" in full["Vary"]


def test_filter_form_is_wired_for_htmx_and_plain_get(bench, researcher):
    html = researcher.get(bench["dataset"].get_absolute_url()).content.decode()
    form = re.search(r"<form class=\"filters\"[^>]*>", html, re.DOTALL).group(0)
    assert 'method="get"' in form and 'hx-get="' in form
    assert 'hx-target="#procedure-results"' in form and 'hx-push-url="true"' in form


def test_pagination_keeps_filters(db, researcher):
    b = make_benchmark(n_procedures=60, n_generators=1)
    url = b["dataset"].get_absolute_url()
    slug = b["topics"][0].slug
    first = researcher.get(url, {"topic": slug})
    assert first.context["page"].paginator.count == 20
    assert len(_rows(first)) == 20
    everything = researcher.get(url)
    assert len(_rows(everything)) == 25
    html = everything.content.decode()
    assert 'href="?page=2"' in html
    second = researcher.get(url, {"page": 3})
    assert len(_rows(second)) == 10
    filtered = researcher.get(url, {"q": "task"}).content.decode()
    assert "?q=task&amp;page=2" in filtered
    assert researcher.get(url, {"page": "junk"}).status_code == 200


def test_procedure_page_shows_every_generation_side_by_side(bench, researcher):
    proc = bench["procedures"][2]
    extra = Generator.objects.create(name="no-count", model="m")
    Generation.objects.create(
        procedure=proc, generator=extra, predicted_steps=["alpha beta", "gamma"]
    )
    response = researcher.get(proc.get_absolute_url())
    html = response.content.decode()
    assert proc.goal in html and "flour" in html and "water" in html
    columns = re.findall(r'<article class="compare-col[^"]*"', html)
    assert len(columns) == 1 + 4  # the reference and every generation
    for name in ("gen-0", "gen-1", "gen-2", "no-count"):
        assert f">{name}</h3>" in html
    ref_steps = re.search(
        r'class="compare-col reference".*?<ol class="steps">(.*?)</ol>', html, re.DOTALL
    ).group(1)
    assert re.findall(r"<li>(.*?)</li>", ref_steps) == proc.steps
    assert f"{count_steps_tokens(proc.steps)} tokens" in html
    assert "12 tokens" in html  # stored token_count of ex-0002
    assert (
        f"{count_steps_tokens(['alpha beta', 'gamma'])} tokens" in html
    )  # counted when not stored
    assert "<li>gen-1 says 2</li>" in html
    assert "<dt>duplicate_steps</dt>" in html and "<summary>Raw model output</summary>" in html


def test_procedure_page_prev_next(bench, researcher):
    procs = bench["procedures"]
    html = researcher.get(procs[1].get_absolute_url()).content.decode()
    assert reverse("benchmarks:procedure_detail", args=[procs[0].pk]) in html
    assert reverse("benchmarks:procedure_detail", args=[procs[2].pk]) in html


def test_missing_objects_give_the_404_page(bench, researcher):
    response = researcher.get(reverse("benchmarks:procedure_detail", args=[999999]))
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()
    assert researcher.get(reverse("benchmarks:dataset_detail", args=[999999])).status_code == 404


def test_pages_run_a_fixed_number_of_queries(db, researcher, django_assert_max_num_queries):
    b = make_benchmark(n_procedures=40, n_generators=8)
    pages = _pages(b)
    researcher.get(pages[0])
    for url, limit in zip(pages, (6, 9, 9), strict=True):
        with django_assert_max_num_queries(limit):
            assert researcher.get(url).status_code == 200


def test_layout_is_local_and_accessible(bench, researcher):
    html = researcher.get(reverse("benchmarks:dataset_list")).content.decode()
    assert '<html lang="en">' in html and 'name="viewport"' in html
    assert "/static/vendor/htmx/htmx-2.0.11.min.js" in html and "/static/css/app.css" in html
    assert 'href="#main"' in html and 'id="main"' in html
    for ref in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert not re.match(r"^(https?:)?//", ref), ref
    assert 'aria-current="page"' in html


def test_home_links_by_role(db, client, make_user):
    assert "Log in" in client.get("/").content.decode()
    client.force_login(make_user("rita", role="researcher"))
    assert reverse("benchmarks:dataset_list") in client.get("/").content.decode()
    client.force_login(make_user("ann", role="annotator"))
    html = client.get("/").content.decode()
    assert reverse("benchmarks:dataset_list") not in html and "annotator" in html


@pytest.mark.e2e
def test_browser_filters_the_table_in_place(
    live_server, transactional_db, make_user, client, browser
):
    """Typing in the search box swaps only the table (htmx), pushes the URL, and keeps the page."""
    from core.roles import ensure_roles

    ensure_roles()  # a transactional test starts from an emptied database
    b = make_benchmark(n_procedures=30, n_generators=1)
    client.force_login(make_user("rita", role="researcher"))
    session = client.cookies["sessionid"].value
    url = live_server.url + b["dataset"].get_absolute_url()
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    try:
        context.add_cookies([{"name": "sessionid", "value": session, "url": live_server.url}])
        page = context.new_page()
        page.goto(url)
        assert page.locator("table.procedures tbody tr").count() == 25
        page.evaluate("window.__marker = 'kept'")
        page.keyboard.press("/")  # app.js: "/" focuses the search box
        assert page.evaluate("document.activeElement.id") == "filter-q"
        page.fill("#filter-q", "sourdough")
        expect(page.locator("table.procedures tbody tr")).to_have_count(1)  # no eval: CSP
        assert page.evaluate("window.__marker") == "kept"  # no full reload
        assert "q=sourdough" in page.url
        page.select_option("#filter-topic", b["topics"][1].slug)
        page.wait_for_selector("text=No procedures match these filters")
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    finally:
        context.close()


def test_login_page_round_trip(bench, client, make_user):
    make_user("rita", role="researcher")
    target = reverse("benchmarks:dataset_list")
    page = client.get(reverse("login"), {"next": target}).content.decode()
    assert 'autocomplete="current-password"' in page and f'value="{target}"' in page
    bad = client.post(reverse("login"), {"username": "rita", "password": "wrong", "next": target})
    assert bad.status_code == 200 and "didn't match" in bad.content.decode()
    good = client.post(
        reverse("login"), {"username": "rita", "password": "pw-Test-12345", "next": target}
    )
    assert good.status_code == 302 and good["Location"] == target
    assert client.get(target).status_code == 200
