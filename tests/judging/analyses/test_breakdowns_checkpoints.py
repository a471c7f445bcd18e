"""Breakdowns, checkpoint series, orderings and the line chart, against hand-computed values."""

import pytest

from benchmarks.checkpoints import CheckpointError, checkpoint_clean
from core.charts import line_chart_svg
from judging.analyses.breakdowns import breakdown, step_bucket
from judging.analyses.checkpoints import (
    checkpoint_summary,
    ordering_correlation,
    parse_value_column,
)
from judging.analyses.export import csv_text


def row(generator, topic, steps, ok, tokens=100, mismatch=0, dup=0, ngram=0.0):
    return {
        "generator": generator,
        "topic": topic,
        "ref_steps": steps,
        "no_failure": ok,
        "gen_tokens": tokens,
        "step_count_mismatch": mismatch,
        "duplicate_steps": dup,
        "dup_ngram_rate": ngram,
    }


ROWS = [
    row("a", "Food", 5, 1, 80),
    row("a", "Food", 8, 1, 120),
    row("a", "Health", 9, 0),
    row("a", "Health", 14, 0),
    row("b", "Food", 6, 1),
    row("b", "Health", 13, 1),
]


def test_step_buckets():
    assert [step_bucket(n) for n in (5, 6, 7, 8, 9, 10, 11, 12, 13, 15)] == [
        "≤ 6", "≤ 6", "7–8", "7–8", "9–10", "9–10", "11–12", "11–12", "≥ 13", "≥ 13"
    ]  # fmt: skip


def test_breakdown_by_topic_and_steps():
    """a on Food: 2 of 2 (100%, tokens (80 + 120)/2 = 100); a on Health: 0 of 2."""
    by_topic = breakdown(ROWS, "topic", n_resamples=200)
    cells = {(c["generator"], c["group"]): c for c in by_topic["cells"]}
    assert by_topic["groups"] == ["Food", "Health"]
    assert cells[("a", "Food")]["how2score"] == 1.0 and cells[("a", "Food")]["n"] == 2
    assert cells[("a", "Food")]["avg_generated_tokens"] == 100
    assert cells[("a", "Health")]["how2score"] == 0.0
    assert cells[("a", "Food")]["ci"]["low"] == 1.0  # every resample is 2 of 2
    by_steps = breakdown(ROWS, "steps", n_resamples=0)
    assert by_steps["groups"] == ["≤ 6", "7–8", "9–10", "≥ 13"]
    cells = {(c["generator"], c["group"]): c for c in by_steps["cells"]}
    assert cells[("b", "≥ 13")]["how2score"] == 1.0 and cells[("a", "≥ 13")]["how2score"] == 0.0
    with pytest.raises(ValueError, match="by must be one of"):
        breakdown(ROWS, "colour")


def test_checkpoint_metadata_is_validated():
    assert checkpoint_clean({"family": "OLMo 2 7B", "step": "1000", "flops": 1e21}) == {
        "family": "OLMo 2 7B",
        "step": 1000,
        "flops": 1e21,
    }
    assert checkpoint_clean({}) == {}
    for bad, message in (
        ({"family": "x", "step": -1}, "checkpoint.step"),
        ({"family": "x", "flops": "lots"}, "checkpoint.flops"),
        ({"step": 3}, "checkpoint.family"),
        ({"family": "x"}, "give step or flops"),
        ({"family": "x", "step": 1, "colour": "red"}, "unknown key"),
    ):
        with pytest.raises(CheckpointError, match=message):
            checkpoint_clean(bad)


def test_checkpoint_series_with_proxies():
    """Family F: c1 at step 100 (1 of 2 = 50%, mismatch rate 1/2), c2 at step 200 (2 of 2)."""
    rows = [
        row("c1", "T", 5, 1, mismatch=1, ngram=0.2),
        row("c1", "T", 5, 0, mismatch=0, ngram=0.0),
        row("c2", "T", 5, 1),
        row("c2", "T", 5, 1),
        row("loose", "T", 5, 1),
    ]
    meta = {"c2": {"family": "F", "step": 200}, "c1": {"family": "F", "step": 100}}
    summary = checkpoint_summary(rows, meta, n_resamples=100)
    (family,) = summary["families"]
    c1, c2 = family["checkpoints"]
    assert (c1["generator"], c1["x"], c1["how2score"]) == ("c1", 100, 0.5)
    assert c1["step_count_mismatch"] == 0.5 and c1["dup_ngram_rate"] == pytest.approx(0.1)
    assert c2["how2score"] == 1.0 and c2["ci"]["n_resamples"] == 100
    assert summary["left_out"] == ["loose"]
    assert checkpoint_summary(rows, meta, axis="flops")["families"] == []
    with pytest.raises(CheckpointError, match="axis"):
        checkpoint_summary(rows, meta, axis="time")


def test_orderings_spearman_hand_computed():
    """How2Score ranks (higher better) a 1, b 2, c 3, d 4; perplexity ranks (lower better)
    a 2, b 1, c 3, d 4: d = (−1, 1, 0, 0), ρ = 1 − 6·2/(4·15) = 0.8."""
    scores = {"a": 0.6, "b": 0.5, "c": 0.4, "d": 0.3}
    column = parse_value_column("generator,perplexity\na,5.1\nb,4.9\nc,6.0\nd,7.5\nzz,1\n")
    result = ordering_correlation(scores, column, lower_is_better=True)
    assert result["n"] == 4 and result["spearman"]["rho"]["value"] == pytest.approx(0.8)
    assert result["missing_scores"] == ["zz"]
    flipped = ordering_correlation(scores, column, lower_is_better=False)
    assert flipped["spearman"]["rho"]["value"] == pytest.approx(-0.8)
    for bad, message in (
        ("a,1\nb,x\n", "line 2: value 'x' is not a number"),
        ("a,1,2\n", "line 1: expected 2 fields"),
        ("a,1\na,2\n", "line 2: generator 'a' appears twice"),
        ("", "no 'generator,value' line"),
    ):
        with pytest.raises(CheckpointError, match=message):
            parse_value_column(bad)


def test_line_chart_and_csv():
    svg = line_chart_svg(
        title="How2Score over training",
        series=[("F", [(100, 50.0, "c1"), (200, 100.0, "c2")]), ("G", [(1e21, 10.0, "g")])],
        x_label="step",
        y_label="How2Score (%)",
        log_x=True,
    )
    assert svg.startswith("<svg") and 'role="img"' in svg and "<polyline" in svg
    assert "F · c2: 100.0" in svg and "(log scale)" in svg
    text = csv_text([{"a": 1, "b": None}], ["a", "b"])
    assert text == "a,b\n1,\n"


def test_breakdown_by_source_domain_pools_beyond_the_top_ten():
    """Table 5 style: the ten domains with most items keep a row, the rest are pooled; the host
    is lower-cased and loses its ``www.``; a procedure without URL has its own row."""
    rows = []
    for d in range(12):  # domain d0 has 12 items, d1 11, …, d11 1
        for k in range(12 - d):
            url = f"https://{'WWW.' if k % 2 else ''}D{d}.example/p{k}"
            rows.append({**row("a", "Food", 6, k % 2), "procedure_id": f"{d}-{k}", "url": url})
    rows.append({**row("a", "Food", 6, 1), "procedure_id": "none", "url": ""})
    report = breakdown(rows, "domain", n_resamples=0)
    top = [f"d{d}.example" for d in range(10)]
    assert report["groups"] == [*sorted(top), "(no URL)", "(other domains)"]
    cells = {c["group"]: c for c in report["cells"]}
    assert cells["d0.example"]["n"] == 12 and cells["d0.example"]["how2score"] == 0.5
    assert cells["(other domains)"]["n"] == 2 + 1  # d10 (2 items) and d11 (1 item)
    assert cells["(no URL)"]["n"] == 1
