"""manage.py alt_test and manage.py how2score_ppi: the reference's numbers, the PPI package's
numbers, hand-computed degenerate cases, and clear refusals (no traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import numpy as np
import ppi_py
import pytest
from django.core.management import CommandError, call_command

DATA = Path(__file__).resolve().parent / "data" / "alt_test"
EXPECTED = json.loads((DATA / "expected.json").read_text())
ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.parametrize(
    ("dataset", "scoring"), [("mtbench", "accuracy"), ("cebab_stars", "neg_rmse")]
)
def test_alt_test_json_equals_the_reference(dataset, scoring):
    spec = EXPECTED[dataset]
    got = json.loads(
        _run(
            "alt_test",
            "--humans", str(DATA / dataset / "human_annotations.json"),
            "--llm", str(DATA / dataset / "llm_annotations.json"),
            "--scoring", scoring,
            "--epsilon", str(spec["epsilon"]),
            "--format", "json",
        )
    )  # fmt: skip
    assert list(got) == list(spec["results"])  # every LLM in the file, in its order
    for name, expected in spec["results"].items():
        r = got[name]
        assert r["winning_rate"] == expected["winning_rate"]
        assert r["advantage_probability"] == pytest.approx(
            expected["advantage_probability"], abs=1e-12
        )
        assert r["passed"] is expected["passed"]
        assert set(r) >= {"annotators", "skipped"}
        for ours, ref in zip(r["annotators"], expected["annotators"], strict=True):
            assert ours["annotator"] == ref["annotator"]
            assert ours["p_value"] == pytest.approx(ref["p_value"], abs=1e-9, rel=1e-9)
            assert (ours["rejected"], ours["n_items"]) == (ref["rejected"], ref["n_items"])


def test_alt_test_text_and_plan():
    text = _run(
        "alt_test",
        "--humans", str(DATA / "cebab_stars" / "human_annotations.json"),
        "--llm", str(DATA / "cebab_stars" / "llm_annotations.json"),
        "--scoring", "neg_rmse", "--epsilon", "0.1",
    )  # fmt: skip
    assert "gpt-4o [PASSED]: winning rate ω 0.90" in text
    assert "gpt-4o may replace the annotators: it won against" in text
    plan = json.loads(
        _run("alt_test", "--plan", "--sizes", "30,90", "--datasets", "2", "--boots", "2",
             "--judge-noise", "0", "--format", "json")
    )  # fmt: skip
    assert [r["n_items"] for r in plan["rows"]] == [30, 90]
    assert plan["rows"][1]["winning_rate"]["0.1"] == 1.0


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("humans", "llm", "extra", "message"),
    [
        ("[1, 2]", '{"m": {"a": 1}}', [], "--humans .*h.json: expected a non-empty JSON object"),
        ('{"x": {"a": 1}}', "{oops", [], r"--llm .*l.json: not JSON \(line 1"),
        ('{"x": {"a": [1]}}', '{"m": {"a": 1}}', [], "annotator 'x', instance 'a'"),
        ('{"x": {"a": "yes"}}', '{"m": {"a": 1}}', ["--scoring", "neg_rmse"], "must be a number"),
        ('{"x": 3}', '{"m": {"a": 1}}', [], "annotator 'x' must map instance ids"),
        ('{"x\\u0000": {"a": 1}}', '{"m": {"a": 1}}', [], "control character"),
        ('{"x": {"a": 1}}', '{"m": {"a": 1}}', ["--epsilon", "3"], "--epsilon"),
        ('{"x": {"a": 1}}', '{"m": {"a": 1}}', ["--q", "0"], "--q"),
    ],
)
def test_alt_test_refusals_name_file_and_key(tmp_path, humans, llm, extra, message):
    args = ["--scoring", "accuracy", "--epsilon", "0.1", *extra]
    # the last --scoring / --epsilon given wins (argparse)
    with pytest.raises(CommandError, match=message):
        _run(
            "alt_test",
            "--humans", _write(tmp_path, "h.json", humans),
            "--llm", _write(tmp_path, "l.json", llm),
            *args,
        )  # fmt: skip


def test_alt_test_requires_its_options():
    with pytest.raises(CommandError, match="--humans, --llm, --scoring: required"):
        _run("alt_test")
    with pytest.raises(CommandError, match="n_categories"):
        _run("alt_test", "--plan", "--categories", "1")


# --- how2score_ppi ---------------------------------------------------------------------------


def _csvs(tmp_path, human, judge, unlabelled):
    labelled = "id,human,judge\n" + "".join(
        f"l{i},{h},{j}\n" for i, (h, j) in enumerate(zip(human, judge, strict=True))
    )
    rest = "id,judge\n" + "".join(f"u{i},{j}\n" for i, j in enumerate(unlabelled))
    return _write(tmp_path, "L.csv", labelled), _write(tmp_path, "U.csv", rest)


def test_how2score_ppi_equals_ppi_py(tmp_path):
    rng = np.random.default_rng(7)
    human = rng.integers(0, 2, 150)
    judge = np.where(rng.random(150) < 0.85, human, 1 - human)
    unlabelled = (rng.random(2000) < 0.4).astype(int)
    lab, unl = _csvs(tmp_path, human, judge, unlabelled)
    got = json.loads(
        _run("how2score_ppi", "--labelled", lab, "--unlabelled", unl, "--format", "json")
    )
    y, yhat, yu = human.astype(float), judge.astype(float), unlabelled.astype(float)
    rate = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, yu))[0])
    low, high = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=0.05)
    assert got["failure_rate"] == pytest.approx(rate, abs=1e-12)
    assert got["failure_rate_ci"] == pytest.approx([float(low[0]), float(high[0])], abs=1e-12)
    assert got["how2score"] == pytest.approx(1 - rate, abs=1e-12)
    assert got["ci"] == pytest.approx([1 - float(high[0]), 1 - float(low[0])], abs=1e-12)
    j_low, j_high = ppi_py.classical_mean_ci(np.concatenate([yhat, yu]), alpha=0.05)
    assert got["judge_only_how2score"] == pytest.approx(1 - np.concatenate([yhat, yu]).mean())
    assert got["judge_only_ci"] == pytest.approx([1 - j_high, 1 - j_low])
    assert got["human_only_how2score"] == pytest.approx(1 - y.mean())
    assert (got["n_labelled"], got["n_unlabelled"]) == (150, 2000)
    # PPI narrows the human-only interval with a good judge
    assert got["ci"][1] - got["ci"][0] < got["human_only_ci"][1] - got["human_only_ci"][0]


def test_how2score_ppi_degenerate_cases_are_the_classical_mean(tmp_path):
    """A judge uncorrelated with the labels (human 0 1 0 1, judge 0 0 1 1): ppi_py tunes λ to 0,
    the estimate is the human mean 0.5 and the interval 0.5 ± 1.959964 · 0.5/√4 = [0.01001,
    0.98999] (std with ddof 0). A judge saying "no failure" everywhere: λ is 0/0, we use 0:
    human 1 1 0 0 0 → failure rate 0.4 ± 1.959964 · 0.4899/√5 = [−0.02941, 0.82941]."""
    lab, unl = _csvs(tmp_path, [0, 1, 0, 1], [0, 0, 1, 1], [0, 1, 1])
    got = json.loads(
        _run("how2score_ppi", "--labelled", lab, "--unlabelled", unl, "--format", "json")
    )
    assert got["failure_rate"] == pytest.approx(0.5)
    assert got["failure_rate_ci"] == pytest.approx([0.0100090, 0.9899910], abs=1e-6)
    lab, unl = _csvs(tmp_path, [1, 1, 0, 0, 0], [0] * 5, [0, 0])
    got = json.loads(
        _run("how2score_ppi", "--labelled", lab, "--unlabelled", unl, "--format", "json")
    )
    assert got["how2score"] == pytest.approx(0.6)
    assert got["failure_rate_ci"] == pytest.approx([-0.0294066, 0.8294066], abs=1e-6)
    assert "λ = 0 used" in got["lambda_note"]
    text = _run("how2score_ppi", "--labelled", lab, "--unlabelled", unl)
    assert "How2Score (PPI++): 60.0%" in text and "Human only: 60.0%" in text


@pytest.mark.parametrize(
    ("labelled", "unlabelled", "message"),
    [
        ("id,human\na,1\n", "id,judge\nb,0\n", "--labelled .*L.csv: missing column\\(s\\) judge"),
        ("id,human,judge\na,1,2\n", "id,judge\nb,0\n", "L.csv line 2, column judge: .* got '2'"),
        ("id,human,judge\na,1,1\na,0,0\n", "id,judge\nb,0\n", "line 3: id 'a' appears twice"),
        ("id,human,judge\na,1,1\n", "id,judge\na,0\n", "--unlabelled: 1 id\\(s\\) also in"),
        ("id,human,judge\n", "id,judge\nb,0\n", "L.csv: no data rows"),
    ],
)
def test_how2score_ppi_refusals(tmp_path, labelled, unlabelled, message):
    with pytest.raises(CommandError, match=message):
        _run(
            "how2score_ppi",
            "--labelled", _write(tmp_path, "L.csv", labelled),
            "--unlabelled", _write(tmp_path, "U.csv", unlabelled),
        )  # fmt: skip


def test_refusals_exit_non_zero_without_traceback(tmp_path):
    for args in (
        ["alt_test", "--humans", str(tmp_path / "none.json"), "--llm", "x", "--scoring",
         "accuracy", "--epsilon", "0.1"],
        ["how2score_ppi", "--labelled", str(tmp_path / "none.csv"), "--unlabelled", "u.csv"],
    ):  # fmt: skip
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True
        )
        assert done.returncode != 0
        assert "no such file" in done.stderr and "Traceback" not in done.stderr
