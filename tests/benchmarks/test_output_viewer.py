"""The long-output viewer and the CustomPlans step diff: access per role, 404s, the aligned
rows and first divergence on an 8K-token pair, folding, modes, and pages that degrade when a
generation has no steps or no output. Assertions do not depend on speed."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from benchmarks.models import Dataset, Generation, Generator, Procedure
from benchmarks.tokens import count_steps_tokens
from tests.benchmarks.packs._scirecipe_cases import GOLD, GROK4

N_LINES = 1500
DIVERGE_AT = 700  # 0-based entry where the prediction first differs


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def long_pair() -> tuple[list[str], list[str]]:
    gold = [f"{k} disk{k % 7} A C" for k in range(N_LINES)]
    pred = list(gold)
    pred[DIVERGE_AT] = pred[DIVERGE_AT].replace(" A C", " A B")
    del pred[1200]
    pred.insert(1300, "An extra line the model added.")
    return gold, pred


@pytest.fixture
def long_generation(db):
    gold, pred = long_pair()
    ds = Dataset.objects.create(name="longproc", version="v1")
    proc = Procedure.objects.create(
        dataset=ds, source_example_id="hanoi-1", goal="Solve Hanoi", steps=gold
    )
    gen = Generator.objects.create(name="long-model")
    return Generation.objects.create(
        procedure=proc,
        generator=gen,
        predicted_steps=pred,
        model_completion="\n".join(pred[:10]) + "\n\n",
        token_count=count_steps_tokens(pred),
    )


@pytest.fixture
def researcher(client, make_user):
    client.force_login(make_user("rita", role="researcher"))
    return client


def _urls(pk: int) -> list[str]:
    return [
        reverse("benchmarks:generation_output", args=[pk]),
        reverse("benchmarks:generation_step_diff", args=[pk]),
    ]


def test_the_pair_is_an_8k_token_output():
    _gold, pred = long_pair()
    assert 7900 <= count_steps_tokens(pred) <= 8100


def test_anonymous_go_to_login_and_annotators_get_403(long_generation, client, make_user):
    for url in _urls(long_generation.pk):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    client.force_login(make_user("ann", role="annotator"))
    for url in _urls(long_generation.pk):
        response = client.get(url)
        assert response.status_code == 403
        assert "peg A" not in response.content.decode()


@pytest.mark.parametrize("role", ["researcher", "admin"])
def test_researchers_and_admins_see_both_pages(long_generation, client, make_user, role):
    client.force_login(make_user("u", role=role))
    for url in _urls(long_generation.pk):
        assert client.get(url).status_code == 200


def test_unknown_generation_is_404(long_generation, researcher):
    for url in _urls(long_generation.pk + 999):
        assert researcher.get(url).status_code == 404


def test_long_output_rows_first_divergence_and_folding(
    long_generation, researcher, django_assert_max_num_queries
):
    url = reverse("benchmarks:generation_output", args=[long_generation.pk])
    with django_assert_max_num_queries(6):
        response = researcher.get(url)
    ctx, html = response.context, response.content.decode()
    assert ctx["mode"] == "steps"
    assert ctx["alignment"].counts == {
        "equal": N_LINES - 2,
        "changed": 1,
        "inserted": 1,
        "deleted": 1,
    }
    assert ctx["first_divergence_row"] == DIVERGE_AT + 1
    # Exactly one row carries the highlight, and it is the changed row with the word marked.
    assert html.count('id="first-divergence"') == 1
    row = re.search(
        r'<tr class="d-changed first-divergence" id="first-divergence"[^>]*>(.*?)</tr>', html, re.S
    )
    assert row and f">{DIVERGE_AT + 1}<" in row.group(1) and "<mark>B</mark>" in row.group(1)
    assert 'href="#first-divergence"' in html and f"row {DIVERGE_AT + 1}" in html
    # Long equal runs are folded (collapsed <details>) but nothing is lost.
    segments = ctx["segments"]
    assert sum(s.count for s in segments) == len(ctx["alignment"].rows)
    folded = [s for s in segments if s.folded]
    assert len(folded) == 4 and sum(s.count for s in folded) > N_LINES - 40
    assert html.count("<details>") == 4 and "<details open" not in html
    assert html.count('data-kind="') < 40  # only the rows around differences are open
    assert "1499 disk1 A C" in html  # the last line, inside a folded run
    assert 'data-kind="inserted"' in html and "An extra line the model added." in html
    assert 'data-kind="deleted"' in html


def test_lines_mode_uses_the_raw_output(long_generation, researcher):
    url = reverse("benchmarks:generation_output", args=[long_generation.pk])
    response = researcher.get(url, {"mode": "lines"})
    ctx = response.context
    assert ctx["mode"] == "lines" and ctx["n_prediction"] == 10  # trailing blank lines dropped
    assert ctx["alignment"].counts["deleted"] == N_LINES - 10
    assert ctx["first_divergence_row"] == 11
    assert researcher.get(url, {"mode": "bogus"}).context["mode"] == "steps"


def test_degrades_without_steps_or_output(db, researcher):
    ds = Dataset.objects.create(name="d", version="v1")
    gen = Generator.objects.create(name="g")
    empty = Procedure.objects.create(dataset=ds, source_example_id="e", goal="Nothing", steps=[])
    bare = Generation.objects.create(procedure=empty, generator=gen, predicted_steps=[])
    response = researcher.get(reverse("benchmarks:generation_output", args=[bare.pk]))
    assert response.status_code == 200 and 'data-testid="empty"' in response.content.decode()
    response = researcher.get(reverse("benchmarks:generation_step_diff", args=[bare.pk]))
    assert response.status_code == 200 and 'data-testid="no-edits"' in response.content.decode()
    # Raw output only: the page falls back to lines; structured steps render as one line.
    proc = Procedure.objects.create(
        dataset=ds,
        source_example_id="s",
        goal="Wash",
        steps=[{"action": "wash", "objects": ["cells"], "parameters": ["1x pbs", "twice"]}],
    )
    raw = Generation.objects.create(
        procedure=proc, generator=gen, model_completion="wash · cells · 1x pbs, twice\nextra"
    )
    response = researcher.get(reverse("benchmarks:generation_output", args=[raw.pk]))
    assert response.context["mode"] == "lines"
    assert [r.kind for r in response.context["alignment"].rows] == ["equal", "inserted"]
    assert "Tokens" not in dict(response.context["meta"])  # no token count stored: not shown


def test_step_diff_applies_edits_and_lists_bad_ones(db, researcher):
    ds = Dataset.objects.create(name="customplans", version="v1")
    gen = Generator.objects.create(name="sequential")
    proc = Procedure.objects.create(
        dataset=ds, source_example_id="c1", goal="Bake bread", steps=["s1", "s2", "s3"]
    )
    completion = 'Revisions:\nreplace(2, "")\ninsert(2, "X")\ninsert(3, "Y")\ninsert(7, "Z")'
    generation = Generation.objects.create(
        procedure=proc, generator=gen, model_completion=completion
    )
    response = researcher.get(reverse("benchmarks:generation_step_diff", args=[generation.pk]))
    ctx, html = response.context, response.content.decode()
    assert ctx["source"] == "edits"
    assert [(r.kind, r.left_index, r.right_index) for r in ctx["alignment"].rows] == [
        ("equal", 1, 1),
        ("deleted", 2, None),
        ("inserted", None, 2),
        ("equal", 3, 3),
        ("inserted", None, 4),
    ]
    assert 'data-testid="dropped"' in html and "insert index must be between 0 and 3" in html
    assert ctx["first_divergence_row"] == 2
    # An E2E rewrite (no edit calls): the predicted steps are aligned with the original.
    e2e = Generation.objects.create(
        procedure=proc,
        generator=Generator.objects.create(name="e2e"),
        predicted_steps=["s1", "s2 on a stovetop", "s3"],
    )
    ctx = researcher.get(reverse("benchmarks:generation_step_diff", args=[e2e.pk])).context
    assert ctx["source"] == "steps"
    assert [r.kind for r in ctx["alignment"].rows] == ["equal", "changed", "equal"]


def test_entries_are_escaped(db, researcher):
    ds = Dataset.objects.create(name="x", version="v1")
    proc = Procedure.objects.create(
        dataset=ds, source_example_id="x", goal="g", steps=["<script>alert(1)</script> a"]
    )
    gen = Generation.objects.create(
        procedure=proc,
        generator=Generator.objects.create(name="g"),
        predicted_steps=["<script>alert(1)</script> b & <i>c</i>"],
    )
    html = researcher.get(reverse("benchmarks:generation_output", args=[gen.pk])).content.decode()
    assert "<script>alert(1)" not in html and "<i>c</i>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; " in html
    assert "<mark>b &amp; &lt;i&gt;c&lt;/i&gt;</mark>" in html


@pytest.mark.e2e
def test_browser_jumps_to_the_first_divergence_and_unfolds(
    live_server, transactional_db, make_user, client, browser
):
    """In chromium: the jump link scrolls the highlighted row into view; a folded run opens."""
    from core.roles import ensure_roles

    ensure_roles()  # a transactional test starts from an emptied database
    gold, pred = long_pair()
    ds = Dataset.objects.create(name="longproc", version="v1")
    proc = Procedure.objects.create(dataset=ds, source_example_id="h", goal="Hanoi", steps=gold)
    gen = Generation.objects.create(
        procedure=proc, generator=Generator.objects.create(name="m"), predicted_steps=pred
    )
    client.force_login(make_user("rita", role="researcher"))
    session = client.cookies["sessionid"].value
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    try:
        context.add_cookies([{"name": "sessionid", "value": session, "url": live_server.url}])
        page = context.new_page()
        page.goto(live_server.url + reverse("benchmarks:generation_output", args=[gen.pk]))
        first = page.locator("#first-divergence")
        expect(first).to_be_in_viewport()  # the 697 equal rows before it are folded
        hidden = page.get_by_text("5 disk5 A C", exact=True).first
        expect(hidden).to_be_hidden()
        page.locator("details summary").first.click()  # unfold them: the row moves far down
        expect(hidden).to_be_visible()
        expect(first).not_to_be_in_viewport()
        page.get_by_role("link", name=f"First divergence: row {DIVERGE_AT + 1}").click()
        expect(first).to_be_in_viewport()
        expect(first.locator("mark")).to_have_text(["C", "B"])
        assert page.url.endswith("#first-divergence")
    finally:
        context.close()


def test_procedure_page_links_each_generation_to_the_viewer(long_generation, researcher):
    html = researcher.get(long_generation.procedure.get_absolute_url()).content.decode()
    assert reverse("benchmarks:generation_output", args=[long_generation.pk]) in html


def test_scirecipe_answer_is_compared_by_its_key_steps(db, researcher):
    ds = Dataset.objects.create(name="scirecipe", version="v1")
    proc = Procedure.objects.create(dataset=ds, source_example_id="bbb", goal="Fix", steps=GOLD)
    gen = Generation.objects.create(
        procedure=proc, generator=Generator.objects.create(name="grok-4"), model_completion=GROK4
    )
    ctx = researcher.get(reverse("benchmarks:generation_output", args=[gen.pk])).context
    assert ctx["mode"] == "steps" and ctx["n_gold"] == 4 and ctx["n_prediction"] == 13
    rows = ctx["alignment"].rows
    assert rows[0].right == "remove · medium"
    assert "wash · spheroids · with 1x pbs, 3 times" in [r.right for r in rows]
    assert "wash · spheroids · 500 µl ice-cold d-pbs(+), twice" in [r.left for r in rows]


def test_very_long_outputs_are_cut_and_say_so(long_generation, researcher, monkeypatch):
    from benchmarks.pages import outputs as output_pages

    monkeypatch.setattr(output_pages, "MAX_ENTRIES", 50)
    response = researcher.get(reverse("benchmarks:generation_output", args=[long_generation.pk]))
    assert response.context["truncated"] and len(response.context["alignment"].rows) == 50
    assert "Only the first 50 entries of each side are aligned." in response.content.decode()


def test_meta_shows_fields_a_generation_has_and_skips_the_rest():
    from types import SimpleNamespace

    from benchmarks.pages import outputs as output_pages

    generator = SimpleNamespace(name="m", model="org/m")
    full = SimpleNamespace(
        generator=generator,
        finish_reason="length",
        token_count=8001,
        prompt_tokens=None,
        completion_tokens=8001,
        model_completion="line 1\nline 2",
    )
    assert dict(output_pages._meta(full)) == {
        "Generator": "m",
        "Model": "org/m",
        "Finish reason": "length",
        "Tokens": 8001,
        "Completion tokens": 8001,
    }
    assert output_pages.raw_output(full) == "line 1\nline 2"
    bare = SimpleNamespace(
        generator=SimpleNamespace(name="m", model=""),
        finish_reason="",
        token_count=None,
        prompt_tokens=None,
        completion_tokens=None,
        model_completion=None,
    )
    assert dict(output_pages._meta(bare)) == {"Generator": "m"}
    assert output_pages.raw_output(bare) == ""


def test_identical_output_says_so(db, researcher):
    ds = Dataset.objects.create(name="same", version="v1")
    proc = Procedure.objects.create(dataset=ds, source_example_id="s", goal="g", steps=["a", "b"])
    gen = Generation.objects.create(
        procedure=proc, generator=Generator.objects.create(name="g"), predicted_steps=["a", " b"]
    )
    response = researcher.get(reverse("benchmarks:generation_output", args=[gen.pk]))
    html = response.content.decode()
    assert response.context["first_divergence_row"] is None
    assert 'data-testid="identical"' in html and 'id="first-divergence"' not in html
