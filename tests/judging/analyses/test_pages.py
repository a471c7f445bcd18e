"""The analyses pages on real models: rows from the database, the four pages, their CSV and
JSON exports, bad parameters, and the checkpoint command."""

from __future__ import annotations

import csv
import io
import math
from io import StringIO

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from django.core.management import CommandError, call_command

from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic
from benchmarks.tokens import count_steps_tokens
from judging.analyses.reads import analysis_rows
from tests.judging.factories import judged_run, make_judge

N = 80


@pytest.fixture
def judged(db):
    """80 procedures over two topics with 5–14 steps, two generators (early, late checkpoints of
    one family) judged by one judge; no_failure gets rarer with more steps (not separable)."""
    dataset = Dataset.objects.create(name="analyses", version="v1")
    topics = list(Topic.objects.order_by("name")[:2])
    judge = make_judge(name="judge-an", model="m")
    gens = {}
    for name, step in (("ckpt-early", 1000), ("ckpt-late", 5000)):
        gens[name] = Generator.objects.create(
            name=name, checkpoint={"family": "Fam", "step": step, "size": "7B"}
        )
    procedures = []
    all_verdicts = {}
    for i in range(N):
        n_steps = 5 + i % 10
        procedures.append(
            Procedure.objects.create(
                dataset=dataset,
                source_example_id=f"p{i}",
                topic=topics[i % 2],
                goal=f"Goal {i}",
                resources=[f"r{k}" for k in range(i % 4)],
                steps=[f"Reference step {s} for item {i}." for s in range(n_steps)],
            )
        )
    for name, gen in gens.items():
        shift = 2 if name == "ckpt-early" else 0
        generations = [
            Generation.objects.create(
                procedure=p,
                generator=gen,
                predicted_steps=[
                    f"{name} step {s} of {i} " + "word " * (i % 5) for s in range(len(p.steps))
                ],
            )
            for i, p in enumerate(procedures)
        ]
        rng = np.random.default_rng(7)
        verdicts = [
            bool(rng.random() > 1 / (1 + math.exp(-(4.5 - 0.45 * len(p.steps) - shift))))
            for p in procedures
        ]
        judged_run(judge, generations, verdicts)
        all_verdicts[name] = verdicts
    return {
        "judge": judge,
        "dataset": dataset,
        "procedures": procedures,
        "verdicts": all_verdicts,
    }


@pytest.fixture
def researcher(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    return client


def test_rows_from_the_database(judged):
    rows = analysis_rows(judge=judged["judge"])
    assert len(rows) == 2 * N
    first = next(
        r
        for r in rows
        if r["generator"] == "ckpt-late" and r["procedure_id"] == judged["procedures"][3].pk
    )
    proc = judged["procedures"][3]
    gen = Generation.objects.get(procedure=proc, generator__name="ckpt-late")
    assert first["ref_steps"] == 8 and first["n_resources"] == 3
    assert first["ref_tokens"] == count_steps_tokens(proc.steps)
    assert first["gen_tokens"] == count_steps_tokens(gen.predicted_steps)
    assert first["ratio_pp"] == pytest.approx(100 * first["gen_tokens"] / first["ref_tokens"])
    assert first["step_count_mismatch"] == 0 and first["duplicate_steps"] == 0


def test_difficulty_page_and_exports_match_statsmodels(judged, researcher):
    url = "/judging/analyses/difficulty/"
    params = {"judge": "judge-an"}
    report = researcher.get(url, {**params, "format": "json"}).json()
    df = pd.DataFrame(analysis_rows(judge=judged["judge"]))
    ref = smf.logit("no_failure ~ ref_steps + n_resources + ratio_pp + C(topic)", data=df).fit(
        disp=0
    )
    overall = report["overall"]
    assert overall["n"] == 2 * N
    steps = overall["covariates"][0]
    assert steps["coef"] == pytest.approx(ref.params["ref_steps"], rel=1e-6)
    assert steps["odds_ratio"] < 1
    html = researcher.get(url, params).content.decode()
    assert 'id="difficulty-table"' in html and "Overall" in html and "<svg" in html
    rows = list(
        csv.DictReader(
            io.StringIO(researcher.get(url, {**params, "format": "csv"}).content.decode())
        )
    )
    overall_steps = [r for r in rows if r["generator"] == "Overall" and r["term"] == "ref_steps"]
    assert float(overall_steps[0]["odds_ratio"]) == pytest.approx(steps["odds_ratio"])
    assert researcher.get(url, {**params, "format": "xml"}).status_code == 400


def test_breakdowns_page(judged, researcher):
    url = "/judging/analyses/breakdowns/"
    report = researcher.get(url, {"judge": "judge-an", "by": "steps", "format": "json"}).json()
    cells = {(c["generator"], c["group"]): c for c in report["cells"]}
    # ckpt-late, ≤ 6 steps: the 16 items with 5 or 6 reference steps
    late = cells[("ckpt-late", "≤ 6")]
    verdicts = judged["verdicts"]["ckpt-late"]
    expected = [not verdicts[i] for i in range(N) if 5 + i % 10 <= 6]
    assert late["n"] == len(expected) and late["how2score"] == pytest.approx(
        sum(expected) / len(expected)
    )
    html = researcher.get(url, {"judge": "judge-an", "by": "topic"}).content.decode()
    assert 'id="breakdown-table"' in html and html.count("<svg") == 2
    assert researcher.get(url, {"judge": "judge-an", "by": "colour"}).status_code == 400


def test_checkpoints_page_and_command(judged, researcher):
    url = "/judging/analyses/checkpoints/"
    report = researcher.get(url, {"judge": "judge-an", "format": "json"}).json()
    (family,) = report["families"]
    assert [c["generator"] for c in family["checkpoints"]] == ["ckpt-early", "ckpt-late"]
    assert family["checkpoints"][0]["how2score"] < family["checkpoints"][1]["how2score"]
    html = researcher.get(url, {"judge": "judge-an"}).content.decode()
    assert 'id="checkpoint-table"' in html and "<polyline" in html and "Formatting proxies" in html
    flops = researcher.get(url, {"judge": "judge-an", "axis": "flops"}).content.decode()
    assert 'id="no-checkpoints"' in flops
    out = StringIO()
    call_command(
        "generator_checkpoint",
        "--generator",
        "ckpt-early",
        "--family",
        "Fam",
        "--flops",
        "1e21",
        stdout=out,
    )
    assert Generator.objects.get(name="ckpt-early").checkpoint == {"family": "Fam", "flops": 1e21}
    with pytest.raises(CommandError, match="--step: must be a whole number"):
        call_command(
            "generator_checkpoint", "--generator", "ckpt-late", "--family", "F", "--step", "x"
        )
    with pytest.raises(CommandError, match="no generator named 'nope'"):
        call_command("generator_checkpoint", "--generator", "nope", "--clear")


def test_orderings_page(judged, researcher):
    url = "/judging/analyses/orderings/"
    params = {"judge": "judge-an", "column": "generator,ppl\nckpt-early,9.5\nckpt-late,8.0\n"}
    html = researcher.get(url, params).content.decode()
    assert 'id="orderings-table"' in html and "over 2 generators" in html
    report = researcher.get(url, {**params, "format": "json"}).json()
    assert report["rows"][0]["rank_value"] == 2.0 and report["spearman"]["n"] == 2
    bad = researcher.get(url, {**params, "column": "ckpt-early,1\nckpt-late,x"})
    assert bad.status_code == 400
    assert "column: line 2: value &#x27;x&#x27; is not a number" in bad.content.decode()


def test_access_and_unknown_judge(judged, client, make_user):
    for path in ("", "difficulty/", "breakdowns/", "checkpoints/", "orderings/"):
        url = f"/judging/analyses/{path}"
        assert client.get(url).status_code in (302, 401, 403)
    client.force_login(make_user("ann", role="annotator"))
    assert client.get("/judging/analyses/").status_code == 403
    client.force_login(make_user("res", role="researcher"))
    assert client.get("/judging/analyses/").status_code == 200
    assert client.get("/judging/analyses/difficulty/", {"judge": "ghost"}).status_code == 404


def test_api(judged, client, make_user):
    from rest_framework.authtoken.models import Token

    user = make_user("script", role="researcher")
    auth = {"HTTP_AUTHORIZATION": f"Token {Token.objects.create(user=user).key}"}
    body = client.get("/api/analyses/difficulty/", {"judge": "judge-an"}, **auth).json()
    assert body["overall"]["n"] == 2 * N
    steps = client.get("/api/analyses/breakdowns/", {"judge": "judge-an", "by": "steps"}, **auth)
    assert steps.json()["by"] == "steps"
    ck = client.get("/api/analyses/checkpoints/", {"judge": "judge-an"}, **auth).json()
    assert ck["families"][0]["family"] == "Fam"
    column = "ckpt-early,2\nckpt-late,1"
    order = client.get("/api/analyses/orderings/", {"judge": "judge-an", "column": column}, **auth)
    assert order.json()["n"] == 2
    bad = client.get("/api/analyses/orderings/", {"judge": "judge-an", "column": "a,b,c"}, **auth)
    assert bad.status_code == 400 and "line 1" in bad.json()["column"]
    assert client.get("/api/analyses/colour/", {"judge": "judge-an"}, **auth).status_code == 404
    assert client.get("/api/analyses/difficulty/", {}, **auth).status_code == 400
    assert (
        client.get(
            "/api/analyses/breakdowns/", {"judge": "judge-an", "by": "x"}, **auth
        ).status_code
        == 400
    )
    assert client.get("/api/analyses/difficulty/", {"judge": "judge-an"}).status_code in (401, 403)
