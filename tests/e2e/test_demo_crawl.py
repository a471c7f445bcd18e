"""A crawl of the demo as each role — a visitor, an annotator, a researcher and an
admin — following the links of every page reached (bounded: at most two pages of each address
shape, e.g. ``/study/report/N/``), finds no error page, no placeholder word ("undefined",
"None", "null", "NaN" as whole words in the visible text or a text box), no page wider than a
1280 px window, no "undefined" in headline type, no empty list where the demo has data and no
emoji; the researcher's and the admin's crawls reach every part of the navigation."""

from __future__ import annotations

import re
from urllib.parse import urldefrag, urlparse

import pytest

from annotation.models import Study
from benchmarks.models import Procedure
from demo.management.commands.load_demo import DEMO_STUDY
from demo.mining import DEMO_BATCH
from demo.studies import SIMULATED_STUDY
from mining.models import MiningBatch
from tests.support.browser_roles import (
    demo_data_problems,
    load_demo,
    log_in,
    placeholders,
    too_wide,
)

pytestmark = pytest.mark.django_db(transaction=True)

# Not followed: sign-out, downloads and exports, the JSON API (its docs are crawled), the
# console's delete and history pages, polled partials and static files.
SKIP = re.compile(
    r"(/logout|\.csv$|\.jsonl$|\.json$|/export|/labels\.|/gold\.|^/api/(?!docs/)|/delete/$|"
    r"/history/$|/partial/|/live/|^/static/|^/healthz|^/favicon)"
)
PER_SHAPE = 2
MAX_PAGES = {"visitor": 20, "annotator": 20, "researcher": 60, "admin": 70}


def shape(path: str) -> str:
    return re.sub(r"\d+", "N", path.split("?")[0])


def empty_allowed() -> set[str]:
    """Where an empty list is right even in the demo: the running study nobody has entered yet,
    the Table 7 procedures, which the paper prints without generations, and the Prolific page
    (the demo talks to no Prolific account)."""
    running = Study.objects.get(name=DEMO_STUDY).pk
    return (
        {f"/study/report/{running}/", f"/study/report/{running}/adjudicate/"}
        | {f"/study/manage/{running}/", f"/judging/compare/study/{running}/"}
        | {f"/judging/compare/leaderboard/?study={running}"}
        | {f"/study/manage/{running}/{page}/" for page in ("quality", "pay", "rounds")}
        | {f"/study/manage/{pk}/prolific/" for pk in Study.objects.values_list("pk", flat=True)}
        | {
            f"/data/procedures/{pk}/"
            for pk in Procedure.objects.filter(generations=None).values_list("pk", flat=True)
        }
    )


def crawl(page, base: str, role: str, start: list[str], allowed: set[str]):
    seen: list[str] = []
    shapes: dict[str, int] = {}
    queue, problems = list(start), []
    while queue and len(seen) < MAX_PAGES[role]:
        path = queue.pop(0)
        if path in seen or shapes.get(shape(path), 0) >= PER_SHAPE:
            continue
        shapes[shape(path)] = shapes.get(shape(path), 0) + 1
        seen.append(path)
        response = page.goto(base + path)
        if response is None:
            continue
        if response.status >= 400:
            problems.append(f"{role} {path}: HTTP {response.status}")
            continue
        if "html" not in response.headers.get("content-type", ""):
            continue
        problems += [f"{role} {path}: placeholder in {text!r}" for text in placeholders(page)]
        if not path.startswith("/api/docs/"):
            problems += [
                f"{role} {problem}"
                for problem in demo_data_problems(page, path, empty_allowed=path in allowed)
            ]
        width = too_wide(page)
        if width:
            problems.append(f"{role} {path}: {width} px wide at 1280")
        for href in page.locator("a[href]").evaluate_all(
            "els => els.map(e => e.getAttribute('href'))"
        ):
            parsed = urlparse(urldefrag(href)[0])
            if parsed.netloc or not parsed.path.startswith("/") or SKIP.search(parsed.path):
                continue
            link = parsed.path + (f"?{parsed.query}" if parsed.query else "")
            if link not in seen and link not in queue:
                queue.append(link)
    return seen, problems


def test_the_demo_as_each_role(live_server, browser, settings, tmp_path, monkeypatch):
    load_demo(settings, tmp_path, monkeypatch)
    study = Study.objects.get(name=SIMULATED_STUDY)
    batch = MiningBatch.objects.get(name=DEMO_BATCH)
    # the researcher and the admin start from the home page and the demo's main pages
    main_pages = [
        "/",
        f"/study/report/{study.pk}/",
        f"/study/report/{study.pk}/adjudicate/",
        f"/study/manage/{study.pk}/",
        f"/judging/compare/study/{study.pk}/",
        f"/mining/batches/{batch.pk}/",
    ]
    allowed = empty_allowed()
    base, problems, reached = live_server.url, [], {}
    for role in ("visitor", "annotator", "researcher", "admin"):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.set_default_timeout(30_000)
        if role != "visitor":
            log_in(page, base, role)
        start = main_pages if role in ("researcher", "admin") else ["/"]
        seen, found = crawl(page, base, role, start, allowed)
        reached[role], problems = seen, problems + found
        context.close()
    assert not problems, "\n".join(problems)
    item_page = re.compile(rf"^/study/report/{study.pk}/adjudicate/\d+/$")
    for role in ("researcher", "admin"):
        seen = reached[role]
        assert len(seen) >= 30, seen
        for must in ("/data/", "/study/manage/", "/judging/compare/", "/mining/", "/admin/"):
            assert must in seen, f"{role}: {must} was not reached from the navigation"
        assert f"/mining/batches/{batch.pk}/documents/" in seen, seen
        assert any(item_page.match(p) for p in seen), f"{role}: no adjudication item page"
    assert any(p.startswith("/admin/") for p in reached["admin"])
