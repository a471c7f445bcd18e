"""A crawl of the demo as each role — a visitor, an annotator, a researcher and an
admin — following the links of every page reached (bounded: at most two pages of each address
shape, e.g. ``/study/report/N/``), finds no server error, no placeholder word ("undefined",
"None", "null", "NaN" as whole words in the visible text or a text box) and no page wider than
a 1280 px window."""

from __future__ import annotations

import re
from urllib.parse import urldefrag, urlparse

import pytest

from tests.support.browser_roles import load_demo, log_in, placeholders, too_wide

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


def crawl(page, base: str, role: str) -> tuple[list[str], list[str]]:
    seen: list[str] = []
    shapes: dict[str, int] = {}
    queue, problems = ["/"], []
    while queue and len(seen) < MAX_PAGES[role]:
        path = queue.pop(0)
        if path in seen or shapes.get(shape(path), 0) >= PER_SHAPE:
            continue
        shapes[shape(path)] = shapes.get(shape(path), 0) + 1
        seen.append(path)
        response = page.goto(base + path)
        if response is None:
            continue
        if response.status >= 500:
            problems.append(f"{role} {path}: HTTP {response.status}")
            continue
        if "html" not in response.headers.get("content-type", ""):
            continue
        problems += [f"{role} {path}: placeholder in {text!r}" for text in placeholders(page)]
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
    base, problems, reached = live_server.url, [], {}
    for role in ("visitor", "annotator", "researcher", "admin"):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.set_default_timeout(30_000)
        if role != "visitor":
            log_in(page, base, role)
        seen, found = crawl(page, base, role)
        reached[role], problems = seen, problems + found
        context.close()
    assert not problems, "\n".join(problems)
    assert len(reached["researcher"]) >= 30 and len(reached["admin"]) >= 30, reached
    assert any(p.startswith("/admin/") for p in reached["admin"])
