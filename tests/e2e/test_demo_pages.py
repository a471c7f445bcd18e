"""From a fresh demo load, every page a role reaches from the navigation, the home dashboard and
the pages they link to, in chromium: no "undefined" in headline type, no empty list where the
demo provides data, no emoji (Debian's chromium here has no emoji font), no server error; and
what a role may not open is not offered to it."""

from __future__ import annotations

import re
from urllib.parse import urldefrag, urlparse

import pytest
from django.core.management import call_command

from annotation.models import Participant, Study
from benchmarks.models import Procedure
from demo.management.commands.load_demo import DEMO_STUDY
from demo.mining import DEMO_BATCH
from demo.studies import SIMULATED_STUDY
from mining.models import MiningBatch

PASSWORDS = {
    "admin": "demo-Admin-pw-1",
    "researcher": "demo-Res-pw-1",
    "annotator": "demo-Ann-pw-1",
}
# Pages not crawled: downloads, the API (JSON), Django admin beyond its index (the console is
# tested elsewhere), sign-out, and the annotator flow (entered through the try link below).
SKIP = re.compile(
    r"(/logout|\.csv$|\.jsonl$|\.json$|/export|/labels\.|/gold\.|^/api/(?!docs/)|^/admin/.+|"
    r"^/study/s/|/partial/|/live/|^/static/|/healthz)"
)
HEADLINES = "h1, h2, h3, .stat b, .figure b, dd, .stats dd, strong, b"
EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2300-\u23ff\u2b00-\u2bff\ufe0f]")
# Where an empty list is right even in the demo: the running study nobody has entered yet, the
# Table 7 procedures, which the paper prints without generations, and the Prolific call log (the
# demo talks to no Prolific account).
EMPTY_ALLOWED: set[str] = set()
MAX_PAGES = 80


@pytest.fixture
def demo(transactional_db, monkeypatch, settings, tmp_path):
    for user, password in PASSWORDS.items():
        monkeypatch.setenv(f"DEMO_{user.upper()}_PASSWORD", password)
    settings.VAR_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("load_demo", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
    call_command("ensure_demo_admin", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
    running = Study.objects.get(name=DEMO_STUDY).pk
    EMPTY_ALLOWED.clear()
    EMPTY_ALLOWED.update(
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
    return {
        "study": Study.objects.get(name=SIMULATED_STUDY),
        "batch": MiningBatch.objects.get(name=DEMO_BATCH),
    }


def log_in(page, base: str, username: str) -> None:
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORDS[username])
    page.click("button[type=submit]")
    page.wait_for_url(base + "/")


def page_problems(page, path: str) -> list[str]:
    problems = []
    for text in page.locator(HEADLINES).all_inner_texts():
        if "undefined" in text.lower():
            problems.append(f"{path}: 'undefined' in headline type: {text[:80]!r}")
    if path not in EMPTY_ALLOWED:
        for sel in (".empty", "td.muted[colspan]", ".compare-empty"):
            for el in page.locator(sel).all():
                if el.is_visible():
                    problems.append(f"{path}: empty list {sel}: {el.inner_text()[:80]!r}")
    body = page.locator("body").inner_text()
    if EMOJI.search(body):
        problems.append(f"{path}: emoji in the page text: {EMOJI.findall(body)[:5]}")
    return problems


def crawl(page, base: str, start: list[str]) -> tuple[list[str], list[str]]:
    """Visit ``start`` and the same-site pages they link to (nav and main), breadth first."""
    seen, queue, problems = [], list(start), []
    while queue and len(seen) < MAX_PAGES:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.append(path)
        response = page.goto(base + path)
        assert response is not None
        if response.status >= 400:
            problems.append(f"{path}: HTTP {response.status}")
            continue
        if path.startswith("/api/docs/"):
            continue
        problems += page_problems(page, path)
        for href in page.locator("nav a[href], main a[href]").evaluate_all(
            "els => els.map(e => e.getAttribute('href'))"
        ):
            href = urldefrag(href)[0]
            parsed = urlparse(href)
            if parsed.netloc or not parsed.path.startswith("/") or SKIP.search(parsed.path):
                continue
            link = parsed.path + (f"?{parsed.query}" if parsed.query else "")
            if link not in seen and link not in queue:
                queue.append(link)
    return seen, problems


@pytest.mark.parametrize("role", ["researcher", "admin"])
def test_every_page_shows_the_demo_data(demo, live_server, page, role, shots):
    base = live_server.url
    log_in(page, base, role)
    cards = page.locator(".stage-card")
    assert cards.count() == 6
    for key in ("mine", "benchmark", "generate", "judge", "annotate", "agree"):
        figure = page.locator(f"#stage-{key} .figure b").inner_text()
        assert figure not in ("", "—"), f"home: stage {key} has no figure"
    assert page.locator("#stage-agree .figure b").inner_text() == "0.603"
    assert page.locator("#stage-mine .figure b").inner_text() == "58.3%"
    study, batch = demo["study"], demo["batch"]
    start = [
        "/",
        f"/study/report/{study.pk}/",
        f"/study/report/{study.pk}/adjudicate/",
        f"/study/manage/{study.pk}/",
        f"/judging/compare/study/{study.pk}/",
        f"/mining/batches/{batch.pk}/",
    ]
    seen, problems = crawl(page, base, start)
    assert not problems, "\n".join(problems)
    for must in ("/data/", "/study/manage/", "/judging/compare/", "/mining/", "/admin/"):
        assert must in seen, f"{must} was not reached from the navigation"
    assert f"/mining/batches/{batch.pk}/documents/" in seen
    item_page = re.compile(rf"^/study/report/{study.pk}/adjudicate/\d+/$")
    assert any(item_page.match(p) for p in seen), "no adjudication item page was reached"
    assert len(seen) >= 20, seen
    # The simulated labels say so where they appear.
    page.goto(f"{base}/study/report/{study.pk}/")
    assert "SIMULATED" in page.locator("#study-description").inner_text()
    assert page.locator("#annotator-table").get_by_text("simulated-1").count() == 1
    # The published verdicts against the simulated humans: the leaderboard opens on that study.
    page.goto(f"{base}/judging/compare/leaderboard/")
    agreement = page.locator("table tbody tr td b").first.inner_text()
    assert re.fullmatch(r"\d+\.\d%", agreement), agreement
    # The mining batch says its replies were replayed.
    page.goto(f"{base}/mining/batches/{batch.pk}/")
    assert "replay" in page.locator("#replay-note").inner_text()
    assert page.locator("#usage-table .badge.replayed").count() == 5


def test_annotator_and_visitor_see_only_what_they_may_open(demo, live_server, page):
    base = live_server.url
    page.goto(base + "/")
    assert page.locator(".stage-card").count() == 0
    assert page.locator("#try-link").count() == 1
    log_in(page, base, "annotator")
    assert page.locator(".stage-card").count() == 0
    nav = page.locator("nav.topnav").inner_text()
    for hidden in ("Datasets", "Studies", "Comparisons", "Mining", "Console"):
        assert hidden not in nav
    _, problems = crawl(page, base, ["/"])
    assert not problems, "\n".join(problems)
    for path in ("/data/", "/study/manage/", "/mining/", "/judging/compare/"):
        assert page.goto(base + path).status in (302, 403) or "/accounts/login/" in page.url


def test_a_visitor_joins_the_running_study_from_home(demo, live_server, page, shots):
    base = live_server.url
    page.goto(base + "/")
    page.click("#try-link")
    page.get_by_role("button", name=re.compile("I agree")).click()
    page.get_by_role("button", name=re.compile("I understand")).click()
    page.wait_for_selector("#item-form")
    problems = page_problems(page, "item page")
    assert not problems, problems
    # The paper's interface: goal, L1 and L2 only (resources are off by default), and every
    # L1 and L2 step clicked through before the progress bar is full.
    assert page.locator(".resources").count() == 0
    n_l1 = page.locator(".proc.l1 .step").count()
    n_l2 = page.locator(".proc.l2 .step").count()
    assert n_l1 > 0 and n_l2 > 0
    for box in page.locator(".step").all():
        box.click()
    assert page.locator("#read-count").inner_text().startswith(f"{n_l1 + n_l2}/{n_l1 + n_l2}")
    assert Participant.objects.filter(prolific_pid__startswith="visitor-").count() == 1
    page.screenshot(path=str(shots / "demo-item.png"), full_page=True)
