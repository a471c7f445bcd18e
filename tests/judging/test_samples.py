"""Judge runs with k seeded samples against the local OpenAI-compatible test
server: launched through the API and worked by a real Celery worker, every judged content gets
k samples with distinct seeds; the run's verdict is unchanged; the calibration (ECE, Brier) and
length-bias probes on the validation page and the API equal hand-computed values and a
statsmodels fit made here. Samples are reused by a later run with the same seeds."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import statsmodels.api as sm
from rest_framework.test import APIClient

from benchmarks.tokens import count_steps_tokens
from core.errors import FieldRefusal
from judging.models import JudgeRun, Judgment, JudgmentSample
from judging.services import runs as services
from tests.annotation.factories import A_FAILURE, make_annotation, make_study
from tests.judging.factories import PRICED, make_judge
from tests.judging.support import work_chunk
from tests.support.worker import wait_for
from validation.probes.reads import NO_SAMPLES, judge_probes

pytestmark = pytest.mark.django_db(transaction=True)

N = 12
MAIN_FAIL = {0, 4, 7, 8, 10, 11}  # the run's verdicts (not separable by length or the humans)
GOAL = re.compile(r"Goal (\d+):")


def sampled_responder(req) -> str:
    """Without a seed: the verdict of MAIN_FAIL. With one: items the people call failures (even
    i) get failure from 2 of any 3 consecutive seeds, the others from 1 of 3."""
    i = int(GOAL.search(req.prompt_text).group(1))
    seed = req.body.get("seed")
    if seed is None:
        failure = i in MAIN_FAIL
    elif i % 2 == 0:
        failure = (i + seed) % 3 != 0
    else:
        failure = (i + seed) % 3 == 0
    failures = [{"failure": "step 2 is wrong", "L1_steps": [1], "L2_steps": [2]}]
    return json.dumps({"reasoning": "read it", "critical_failures": failures if failure else []})


def labelled_study():
    """N items, candidates of growing length, three annotators unanimous: failure on even i."""
    study = make_study(n_items=N)
    items = list(study.items.filter(kind="regular").order_by("position", "id"))
    for i, item in enumerate(items):
        g = item.generation
        g.predicted_steps = [
            f"Generated step {s} of item {i}." + " Stir." * (9 * i) for s in (1, 2)
        ]
        g.save(update_fields=["predicted_steps"])
        for annotator in ("P0", "P1", "P2"):
            make_annotation(
                item=item,
                annotator=annotator,
                has_failure=i % 2 == 0,
                failures=A_FAILURE if i % 2 == 0 else [],
                active_ms=900,
            )
    return study, [item.generation for item in items]


def expected_length_bias(gens):
    tokens = np.array([count_steps_tokens(g.predicted_steps) for g in gens], dtype=float)
    judge = np.array([int(i in MAIN_FAIL) for i in range(N)])
    human = np.array([int(i % 2 == 0) for i in range(N)])
    fit = sm.Logit(judge, sm.add_constant(np.column_stack([tokens / 100, human]))).fit(disp=0)
    ci = fit.conf_int(alpha=0.05)
    return math.exp(fit.params[1]), math.exp(ci[1, 0]), math.exp(ci[1, 1])


def probes_section(html: str) -> str:
    return html[html.index('id="probes"') : html.index("</section>", html.index('id="probes"'))]


@pytest.mark.worker
def test_k3_run_launched_by_api_worked_by_a_worker_stores_three_seeded_samples(
    llm_server, make_user, roles, celery_worker_process, client
):
    llm_server.responder = sampled_responder
    study, gens = labelled_study()
    judge = make_judge(name="sampled", base_url=llm_server.base_url, preset=PRICED)
    api = APIClient()
    api.force_authenticate(make_user("ada", role="admin"))
    body = {"judge": judge.name, "selection": {"study": study.pk}, "samples": 3}
    created = api.post("/api/judge-runs/", {**body, "sample_seed": 100}, format="json")
    assert created.status_code == 201, created.content
    assert (created.json()["n_samples"], created.json()["sample_seed"]) == (3, 100)
    run = JudgeRun.objects.get(pk=created.json()["id"])
    wait_for(
        lambda: JudgeRun.objects.get(pk=run.pk).status == "done",
        timeout=120,
        message=f"the run; worker log:\n{celery_worker_process.log()[-3000:]}",
    )
    run.refresh_from_db()
    assert (run.n_total, run.n_done, run.n_failed) == (N, N, 0)
    # the verdicts are the judge's own requests (no seed), unchanged by sampling
    main = [r for r in llm_server.requests if "seed" not in r.body]
    sampled = [r for r in llm_server.requests if "seed" in r.body]
    assert len(main) == N and len(sampled) == 3 * N
    verdicts = dict(Judgment.objects.filter(judge=judge).values_list("id", "has_failure"))
    assert sum(verdicts.values()) == len(MAIN_FAIL)
    for judgment_id in verdicts:
        seeds = sorted(
            JudgmentSample.objects.filter(judgment_id=judgment_id).values_list("seed", flat=True)
        )
        assert seeds == [100, 101, 102]  # three samples, distinct seeds
    by_content = {}
    for r in sampled:
        by_content.setdefault(GOAL.search(r.prompt_text).group(1), []).append(r.body["seed"])
    assert all(sorted(s) == [100, 101, 102] for s in by_content.values()) and len(by_content) == N
    # the samples' tokens are in the run's cost
    asked = JudgmentSample.objects.filter(run=run)
    assert asked.count() == 3 * N and run.prompt_tokens == sum(
        Judgment.objects.filter(judge=judge).values_list("prompt_tokens", flat=True)
    ) + sum(asked.values_list("prompt_tokens", flat=True))

    # calibration by hand: vote share 2/3 on the 6 human failures, 1/3 on the 6 others
    probes = judge_probes(study=study, judge=judge, n_resamples=200)
    calibration = probes["calibration"]
    assert calibration["n_items"] == N and calibration["samples_per_item"] == {"min": 3, "max": 3}
    assert calibration["ece"]["value"] == pytest.approx(6 / 12 * 1 / 3 + 6 / 12 * 1 / 3)
    assert calibration["brier"]["value"] == pytest.approx(1 / 9)
    assert [b["n"] for b in calibration["bins"] if b["n"]] == [6, 6]
    odds, low, high = expected_length_bias(gens)
    bias = probes["length_bias"]
    assert bias["n_items"] == N and bias["odds_ratio"] == pytest.approx(odds, rel=1e-8)
    assert (bias["ci_low"], bias["ci_high"]) == (pytest.approx(low), pytest.approx(high))

    # the page's partial and the API
    client.force_login(make_user("res", role="researcher"))
    html = client.get(
        "/judging/compare/validation/", {"study": study.pk, "judge": judge.name}
    ).content.decode()
    section = probes_section(html)
    assert "Expected calibration error" in section and "<b>0.333</b>" in section
    assert "<b>0.111</b>" in section and 'id="probes-reliability-title"' in section
    assert f"<b>{odds:.2f}</b>" in section and f"95% CI {low:.2f} – {high:.2f}" in section
    assert not re.search(r"\b(None|NaN|nan|null|undefined)\b", section)
    api_body = client.get(
        "/api/validation/probes/", {"study": study.pk, "judge": judge.name, "bootstrap": 200}
    ).json()
    assert api_body["calibration"]["ece"] == calibration["ece"]
    assert api_body["length_bias"]["odds_ratio"] == pytest.approx(odds, rel=1e-8)


def test_samples_are_reused_by_seed_and_failures_stored_without_a_vote(llm_server, monkeypatch):
    monkeypatch.setattr("benchmarks.llm.retry.RetryPolicy.delay", lambda self, attempt, **kw: 0.01)

    def responder(req):  # item 3's sample with seed 0 answers text that does not parse
        if req.body.get("seed") == 0 and "Goal 3:" in req.prompt_text:
            return "I would rather not say {"
        return sampled_responder(req)

    llm_server.responder = responder
    study, _ = labelled_study()
    judge = make_judge(name="sampled", base_url=llm_server.base_url, preset=PRICED, max_retries=1)
    first = services.judge_run_create(
        judge=judge, selection={"study": study.pk}, enqueue=False, n_samples=2
    )
    assert first.sample_seeds == [0, 1]
    # one sample request fails for good (stored with its error), one reply does not parse
    llm_server.add_fault("status", status=400, match=lambda r: r.body.get("seed") == 1)
    assert work_chunk(first).status == "done"
    assert JudgmentSample.objects.count() == 2 * N
    failed = JudgmentSample.objects.exclude(error="").get()
    assert failed.parse_failed and failed.seed == 1 and "400" in failed.error
    unparsed = JudgmentSample.objects.get(parse_failed=True, error="")
    assert unparsed.seed == 0 and unparsed.raw_output == "I would rather not say {"
    assert unparsed.parse_error  # no vote, whatever has_failure the parser set
    # a later run with k = 3 asks the missing seed 2 only (the verdicts are reused)
    llm_server.reset()
    second = services.judge_run_create(
        judge=judge, selection={"study": study.pk}, enqueue=False, n_samples=3
    )
    assert work_chunk(second).status == "done"
    assert sorted(r.body.get("seed") for r in llm_server.requests) == [2] * N
    second.refresh_from_db()
    assert second.n_reused == N and JudgmentSample.objects.filter(run=second).count() == N
    probes = judge_probes(study=study, judge=judge, n_resamples=0)
    assert probes["calibration"]["samples_per_item"] == {"min": 3, "max": 3}
    # the failed and the unparsed samples cast no vote: their items have 2 votes of 3
    assert probes["calibration"]["n_items"] == N
    assert JudgmentSample.objects.filter(parse_failed=False).count() == 3 * N - 2
    assert "ci" not in probes["calibration"]["ece"]


def test_launch_refuses_bad_sample_options(llm_server, make_user, roles, enqueued):
    judge = make_judge(name="sampled", base_url=llm_server.base_url, preset=PRICED)
    study, _ = labelled_study()
    with pytest.raises(FieldRefusal) as info:
        services.judge_run_create(
            judge=judge, selection={"study": study.pk}, enqueue=False, n_samples=0
        )
    assert "samples" in info.value.errors
    api = APIClient()
    api.force_authenticate(make_user("ada", role="admin"))
    base = {"judge": judge.name, "selection": {"study": study.pk}}
    for extra, field in (
        ({"samples": 0}, "samples"),
        ({"samples": 21}, "samples"),
        ({"samples": "three"}, "samples"),
        ({"samples": 3, "sample_seed": -1}, "sample_seed"),
    ):
        refused = api.post("/api/judge-runs/", {**base, **extra}, format="json")
        assert refused.status_code == 400 and field in refused.json(), (extra, refused.content)
    assert enqueued == [] and not JudgeRun.objects.exists()


def test_probes_without_samples_say_what_is_missing(scenario, client, make_user):
    judge = scenario["judges"][0]
    probes = judge_probes(study=scenario["study"], judge=judge, n_resamples=50)
    assert probes["calibration"]["ece"] == {"value": None, "undefined": NO_SAMPLES}
    assert probes["items"]["n_no_samples"] == 5 and probes["items"]["n_tied"] == 1
    assert (
        probes["length_bias"]["odds_ratio"] is None
        and "fewer than" in (probes["length_bias"]["undefined"])
    )
    client.force_login(make_user("res", role="researcher"))
    html = client.get(
        "/judging/compare/validation/", {"study": scenario["study"].pk, "judge": judge.name}
    ).content.decode()
    section = probes_section(html)
    assert '<small class="muted">No judgment of this judge' in section
    assert "No reliability diagram" in section and "<b>—</b>" in section
    assert not re.search(r"\b(None|NaN|nan|null|undefined)\b", section)
    api = client.get("/api/validation/probes/", {"study": scenario["study"].pk, "judge": "x"})
    assert api.status_code in (400, 404)
    for bad in (
        {"judge": judge.name},
        {"study": scenario["study"].pk, "judge": judge.name, "bins": 0},
    ):
        assert client.get("/api/validation/probes/", bad).status_code == 400


def test_console_launch_form_takes_samples(llm_server, make_user, roles, client, enqueued):
    from django.urls import reverse

    study, _ = labelled_study()
    judge = make_judge(name="sampled", base_url=llm_server.base_url, preset=PRICED)
    client.force_login(make_user("root", role="admin", staff=True))
    url = reverse("admin:judging_judgerun_launch")
    form = client.get(url).content.decode()
    assert 'name="samples"' in form and 'name="sample_seed"' in form
    fields = {"judge": judge.pk, "study": study.pk, "confirm": "1"}
    refused = client.post(url, {**fields, "samples": 99})
    assert refused.status_code == 200 and not JudgeRun.objects.exists()
    assert "less than or equal to 20" in refused.content.decode()
    launched = client.post(url, {**fields, "samples": 3, "sample_seed": 7})
    assert launched.status_code == 302
    run = JudgeRun.objects.get()
    assert (run.n_samples, run.sample_seeds, enqueued) == (3, [7, 8, 9], [run.pk])
