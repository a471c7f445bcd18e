"""The pack results pages, their exports and their API on the demo's worked examples
(imported and scored by real scoring runs, PostgreSQL): roles, what the page shows, the
CSV/JSON content, choosing runs, and bad queries refused with the parameter named."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from benchmarks.models import ScoringRun
from demo.pack_results import demo_pack_results_ensure, split_name

pytestmark = pytest.mark.django_db

PAGES = ["/packs/", "/packs/procbench/results/", "/packs/longproc/results/"]
PLACEHOLDERS = re.compile(r"\b(None|null|NaN|undefined|nan)\b")


@pytest.fixture
def demo():
    return demo_pack_results_ensure()


@pytest.fixture
def researcher(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    return client


def visible_text(html: str) -> str:
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


@pytest.mark.parametrize("url", PAGES)
def test_access_by_role(demo, client, make_user, url):
    anonymous = client.get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(url).status_code == 403
    assert client.get("/api/packs/procbench/results/").status_code == 403
    for role in ("researcher", "admin"):
        client.force_login(make_user(role[:3], role=role))
        assert client.get(url).status_code == 200


def test_demo_runs_and_file_names(demo):
    assert split_name("longproc-countdown-gold-reference", ["longproc", "longproc-countdown"]) == (
        "longproc-countdown",
        "gold-reference",
    )
    with pytest.raises(ValueError, match="<pack>-<generator>"):
        split_name("nothing-here", ["procbench"])
    runs = ScoringRun.objects.filter(dataset__name__endswith="-results-demo")
    mine = {
        (r.pack, r.generator.name) for r in runs if r.pack.startswith(("procbench", "longproc"))
    }
    assert mine == {
        (p, g)
        for p in ("procbench", "longproc-countdown", "longproc-travel")
        for g in ("paper-worked-examples", "gold-reference")
    }
    assert all(r.status == "done" and r.n_failed == 0 for r in runs)
    count = ScoringRun.objects.count()
    demo_pack_results_ensure()  # idempotent
    assert ScoringRun.objects.count() == count


@pytest.mark.parametrize("pack", ["procbench", "longproc"])
def test_page_shows_tables_plots_and_worked_examples(demo, researcher, pack):
    html = researcher.get(f"/packs/{pack}/results/").content.decode()
    text = visible_text(html)
    assert not PLACEHOLDERS.search(text), PLACEHOLDERS.search(text)
    assert "Worked examples" in text and "not a model" in text
    assert "paper-worked-examples" in text and "gold-reference" in text
    assert html.count("<svg") >= 2  # the headline bar chart and the curve
    assert "95% bootstrap" in text and "Holm p" in text
    if pack == "procbench":
        assert 'id="table-bins-pa"' in html and 'id="table-tasks-pa"' in html
        assert "0.614" in text  # PA overall of the worked examples, 4.3 / 7
        assert "Mean PML against problem length N" in html
    else:
        assert 'id="table-levels"' in html and 'id="table-termination-countdown-0.5K"' in html
        assert "50.0" in text and "Average score against output length" in html


def test_csv_and_json_exports(demo, researcher):
    response = researcher.get("/packs/procbench/results/export.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    cell = next(
        r
        for r in rows
        if r["section"] == "bins-pa"
        and r["generator"] == "paper-worked-examples"
        and r["column"] == "Overall"
    )
    assert float(cell["value"]) == pytest.approx(4.3 / 7)
    assert float(cell["ci_low"]) <= float(cell["value"]) <= float(cell["ci_high"])
    top = next(
        r for r in rows if r["section"] == "bins-pa" and r["generator"] == "gold-reference"
        and r["column"] == "Overall"
    )  # fmt: skip
    assert top["vs_next"] == "paper-worked-examples" and top["p_holm"]
    assert any(r["section"] == "pml-length" for r in rows)
    for row in rows:
        assert "None" not in row.values() and "nan" not in row.values()
    data = json.loads(researcher.get("/packs/longproc/results/export.json").content)
    api = researcher.get("/api/packs/longproc/results/").json()
    assert data == api
    assert api["worked_examples"]["n"] == 10
    assert {t["id"] for t in api["tables"]} >= {"levels", "level-2K", "termination-travel-8K"}
    assert researcher.get("/packs/procbench/results/export.xml").status_code == 404


def test_choosing_runs_and_the_dataset(demo, researcher):
    run = ScoringRun.objects.get(pack="procbench", generator__name="gold-reference")
    api = researcher.get("/api/packs/procbench/results/", {"run": run.pk}).json()
    assert api["generators"] == ["gold-reference"] and [r["id"] for r in api["runs"]] == [run.pk]
    html = researcher.get("/packs/procbench/results/", {"run": run.pk}).content.decode()
    assert f'value="{run.pk}" checked' in html
    other = ScoringRun.objects.filter(pack="longproc-travel").first()
    api = researcher.get(
        "/api/packs/longproc/results/", {"dataset": other.dataset_id, "bootstrap": "0"}
    ).json()
    assert {r["pack"] for r in api["runs"]} == {"longproc-travel"}
    assert api["bootstrap"]["n_resamples"] == 0


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"run": "abc"}, "run"),
        ({"run": "999999"}, "run"),
        ({"dataset": "x1"}, "dataset"),
        ({"dataset": "999999"}, "dataset"),
        ({"bootstrap": "20000"}, "bootstrap"),
        ({"seed": "-1"}, "seed"),
    ],
)
def test_bad_queries_are_4xx_naming_the_parameter(demo, researcher, params, field):
    page = researcher.get("/packs/procbench/results/", params)
    assert page.status_code == 400 and f"{field}:" in page.content.decode()
    api = researcher.get("/api/packs/procbench/results/", params)
    assert api.status_code == 400 and field in api.json()


def test_another_familys_run_and_unknown_pack(demo, researcher):
    travel = ScoringRun.objects.filter(pack="longproc-travel").first()
    page = researcher.get("/packs/procbench/results/", {"run": travel.pk})
    assert (
        page.status_code == 400 and f"no ProcBench scoring run {travel.pk}" in page.content.decode()
    )
    assert researcher.get("/packs/nope/results/").status_code == 404
    assert researcher.get("/api/packs/nope/results/").status_code == 404


def test_empty_page_says_so(researcher):
    html = researcher.get("/packs/procbench/results/").content.decode()
    assert "No scored instances" in html
    assert not PLACEHOLDERS.search(visible_text(html))


def test_report_is_cached_until_a_run_of_the_family_changes(demo):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from judging.pack_results import PAGES
    from judging.pack_results.page import results_report
    from judging.pack_results.reads import parse_selection

    page, selection = PAGES["procbench"], parse_selection({})
    first = results_report(page=page, selection=selection)
    with CaptureQueriesContext(connection) as cached:
        assert results_report(page=page, selection=selection) == first
    assert not any("benchmarks_generation" in q["sql"] for q in cached.captured_queries)
    ScoringRun.objects.filter(pack="procbench").first().save()  # a run changed: read again
    with CaptureQueriesContext(connection) as fresh:
        assert results_report(page=page, selection=selection)["tables"] == first["tables"]
    assert any("benchmarks_generation" in q["sql"] for q in fresh.captured_queries)


def _axis_texts(svg: str) -> list[str]:
    return re.findall(r"<text [^>]*>([^<]*)</text>", svg)


def _svg(html: str, curve_id: str) -> str:
    start = html.rfind("<svg", 0, html.index(f'id="pack-curve-{curve_id}'))
    return html[start : html.index("</svg>", start)]


def test_longproc_axis_ticks_and_runs_in_no_table(demo, researcher):
    """The score-against-length plot says "log scale" once and reads its ticks as token counts;
    a run whose instances have no level is in no table, so it is not listed as shown but named
    in the notes with why (the packs' demo run of Countdown has no levels)."""
    import io as _io

    from demo.packs import demo_packs_ensure

    demo_packs_ensure(stdout=_io.StringIO())
    untabled = ScoringRun.objects.get(
        pack="longproc-countdown", dataset__name="longproc-countdown-demo"
    )
    html = researcher.get("/packs/longproc/results/").content.decode()
    svg = _svg(html, "score-length")
    texts = _axis_texts(svg)
    assert "output length level (tokens, log scale)" in texts
    assert "(log scale) (log scale)" not in html and "e+0" not in " ".join(texts)
    assert {"500", "1K", "2K", "8K"} <= set(texts), texts
    text = " ".join(visible_text(html).split())
    shown = text[text.index("Shown:") : text.index(".", text.index("Shown:"))]
    assert f"run #{untabled.pk} " not in shown + " " and "run #" in shown
    assert f"run #{untabled.pk}: all 3" in text and "are in no table" in text
    alone = researcher.get("/packs/longproc/results/", {"run": untabled.pk}).content.decode()
    assert "Shown: no run in a table (the notes say why)." in " ".join(visible_text(alone).split())


def test_procbench_length_plot_ticks_whole_steps(demo, researcher):
    html = researcher.get("/packs/procbench/results/").content.decode()
    svg = _svg(html, "pml-length")
    y_ticks = re.findall(r'<text x="58" y="[^"]+" [^>]*text-anchor="end">([^<]*)</text>', svg)
    assert len(y_ticks) >= 2 and all(t.lstrip("-").isdigit() for t in y_ticks), y_ticks
