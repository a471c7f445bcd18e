"""Comparison reads over real models on PostgreSQL."""

import pytest

from benchmarks.models import Generation, Generator
from judging.leaderboard.reads import judge_leaderboard
from judging.selectors.verdicts import verdicts_for_generations
from validation.comparisons.reads import generator_rankings, judge_pair_comparison, study_comparison


def by_judge(report):
    return {j["judge"]: j for j in report["judges"]}


def test_study_comparison_numbers(scenario, django_assert_max_num_queries):
    with django_assert_max_num_queries(10):
        report = study_comparison(study=scenario["study"])
    h = report["human"]
    assert (h["n_items"], h["n_labelled"], h["n_tied"], h["n_has_failure"], h["n_no_failure"]) == (
        6,
        6,
        1,
        3,
        2,
    )
    assert h["n_annotators"] == 3
    judges = by_judge(report)
    assert set(judges) == {"judge-a", "judge-b"}  # judge-c judged nothing here
    a = judges["judge-a"]
    # majority T T T F F (+tie); A says T T F F F: 4/5; has_failure 2/3, no_failure 2/2
    assert (a["n_compared"], a["n_agree"], a["n_tied"]) == (5, 4, 1)
    assert a["agreement"]["value"] == pytest.approx(0.8)
    assert a["per_class"]["has_failure"]["agreement"]["value"] == pytest.approx(2 / 3)
    assert a["per_class"]["no_failure"]["agreement"]["value"] == pytest.approx(1.0)
    # p_o .8; human (.6,.4) judge (.4,.6): p_e .48 -> (.8-.48)/.52
    assert a["kappa"]["value"] == pytest.approx(0.32 / 0.52)
    assert a["confusion"]["counts"] == [[2, 1], [0, 2]]
    b = judges["judge-b"]
    # B: T F F F T (tie item parse-failed): agree items 1, 4 -> 2/5
    assert (b["n_compared"], b["n_agree"]) == (5, 2)
    assert b["agreement"]["value"] == pytest.approx(0.4)
    pair = report["pairs"][0]
    # A vs B over 5 parsed shared items: T/T, T/F, F/F, F/F, F/T -> 3/5; item 6 B parse-failed
    assert (
        pair["judge_a"],
        pair["judge_b"],
        pair["n_shared"],
        pair["n_agree"],
        pair["n_parse_failed"],
    ) == ("judge-a", "judge-b", 5, 3, 1)


def test_study_comparison_for_chosen_judges(scenario):
    c = scenario["judges"][2]
    report = study_comparison(study=scenario["study"], judges=[c])
    only = report["judges"][0]
    assert (
        only["judge"] == "judge-c"
        and only["n_not_judged"] == 5
        and only["agreement"]["value"] is None
    )
    assert report["pairs"] == []


def test_verdicts_matched_by_content(scenario):
    """A generation with the same content as a judged one gets the stored verdict (reuse)."""
    g = scenario["gens"][0]
    other = Generator.objects.create(name="twin-generator")
    twin = Generation.objects.create(
        procedure=g.procedure, generator=other, predicted_steps=list(g.predicted_steps)
    )
    a = scenario["judges"][0]
    verdicts = verdicts_for_generations(judges=[a], generation_ids=[g.pk, twin.pk])
    assert verdicts[a.pk] == {g.pk: True, twin.pk: True}


def test_judge_pair_comparison_over_all_content(scenario):
    a, b, c = scenario["judges"]
    report = judge_pair_comparison(judges=[a, b, c])
    assert report["n_judged"] == {"judge-a": 6, "judge-b": 6, "judge-c": 0}
    ab = next(p for p in report["pairs"] if p["judge_b"] == "judge-b")
    assert ab["agreement"]["value"] == pytest.approx(0.6)
    ac = next(p for p in report["pairs"] if p["judge_b"] == "judge-c")
    assert ac["agreement"]["value"] is None and ac["n_only_a"] == 6


def test_generator_rankings_and_kendall_tau(generators_scenario):
    x, y = generators_scenario["judges"]
    report = generator_rankings(judges=[x, y])
    rx = {j["judge"]: j["ranking"] for j in report["judges"]}
    assert [(r["generator"], r["rank"]) for r in rx["judge-x"]] == [
        ("rank-g1", 1),
        ("rank-g2", 2),
        ("rank-g3", 3),
    ]
    assert rx["judge-x"][0]["how2score"] == pytest.approx(0.75)
    assert [r["generator"] for r in rx["judge-y"]] == ["rank-g1", "rank-g3", "rank-g2"]
    tau = report["kendall_tau"][0]
    # x scores (.75,.5,.25), y (1, 0, .25): pairs g1g2 C, g1g3 C, g2g3 D -> 1/3
    assert tau["n_common"] == 3 and tau["tau"]["value"] == pytest.approx(1 / 3)


def test_leaderboard(scenario, django_assert_max_num_queries):
    a, b, c = scenario["judges"]
    g = scenario["gens"][0]
    g.scores = {"gen_tokens": 30, "ref_tokens": 20}
    g.save(update_fields=["scores"])
    with django_assert_max_num_queries(20):
        report = judge_leaderboard(judges=[a, b, c], study=scenario["study"])
    rows = {r["judge"]: r for r in report["rows"]}
    assert [r["judge"] for r in report["rows"]] == ["judge-a", "judge-b", "judge-c"]
    ra = rows["judge-a"]
    assert ra["agreement"]["value"] == pytest.approx(0.8)
    assert ra["cost"] == pytest.approx(0.25) and ra["time_s"] == pytest.approx(30, abs=0.01)
    assert ra["n_judgments"] == 6 and ra["parse_failure_rate"]["value"] == 0
    assert ra["failure_rate"]["value"] == pytest.approx(2 / 6)
    rb = rows["judge-b"]
    assert rb["parse_failure_rate"]["value"] == pytest.approx(1 / 6)
    assert rb["failure_rate"]["value"] == pytest.approx(2 / 5)
    # verbosity: the factory's generated and reference steps have equal token counts except g (30/20)
    from benchmarks.tokens import count_steps_tokens

    others = scenario["gens"][1:]
    gen_t = 30 + sum(count_steps_tokens(x.predicted_steps) for x in others)
    ref_t = 20 + sum(count_steps_tokens(x.procedure.steps) for x in others)
    assert ra["verbosity"]["value"] == pytest.approx(gen_t / ref_t)
    assert rows["judge-c"]["n_judgments"] == 0 and rows["judge-c"]["verbosity"]["value"] is None


def test_identically_configured_judges_share_verdicts(scenario):
    """Two judge rows with the same configuration have one judge_id, hence the same stored verdicts."""
    from tests.judging.factories import make_judge

    a = scenario["judges"][0]
    twin = make_judge(name="judge-a-twin", model="gpt-5")
    assert twin.judge_id == a.judge_id
    report = study_comparison(study=scenario["study"], judges=[a, twin])
    judges = by_judge(report)
    assert (
        judges["judge-a-twin"]["agreement"]
        == judges["judge-a"]["agreement"]
        == {"value": pytest.approx(0.8)}
    )
    assert report["pairs"][0]["agreement"]["value"] == 1.0
    rows = {r["judge"]: r for r in judge_leaderboard(judges=[a, twin])["rows"]}
    assert rows["judge-a-twin"]["n_judgments"] == rows["judge-a"]["n_judgments"] == 6
