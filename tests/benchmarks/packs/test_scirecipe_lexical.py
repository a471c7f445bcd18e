"""SciRecipe's lexical metrics (benchmarks.packs.scirecipe.lexical): BLEU-1..4 / BLEU-AVG and
ROUGE-L computed by hand on small texts, the reference text's sources, not applicable without
one, a bad ``reference_text`` named, KW-F1 on the real MiniLM through KeyBERT, and the
``manage.py score`` line and summary."""

import json
import math
import sys
from io import StringIO

import pytest
from django.core.management import call_command

from benchmarks.packs.registry import RecordError
from benchmarks.packs.scirecipe import lexical, score_record

GOLD = [
    {"action": "wash", "objects": ["cells"], "parameters": ["twice"]},
    {"action": "spin", "objects": ["tube"], "parameters": []},
]


def test_tokens_are_lower_case_words_and_sentence_final_points():
    assert lexical.tokens("Wash the Cells. Then spin at 37 °C, 5 min.") == [
        "wash", "the", "cells", ".", "then", "spin", "at", "37", "°c", ",", "5", "min", ".",
    ]  # fmt: skip


def test_bleu_by_hand_brevity_penalty_and_smoothing():
    # hypothesis 3 tokens, reference 4: every 1/2/3-gram of the hypothesis matches, so BLEU-1..3
    # are the brevity penalty exp(1 - 4/3); it has no 4-gram, whose precision smoothing method 1
    # takes as 0.1 / 1, so BLEU-4 = BP · (1 · 1 · 1 · 0.1)^(1/4)
    bp = math.exp(1 - 4 / 3)
    got = lexical.bleu("wash the cells twice", "Wash the cells")
    assert got["bleu_1"] == pytest.approx(bp)
    assert got["bleu_2"] == pytest.approx(bp)
    assert got["bleu_3"] == pytest.approx(bp)
    assert got["bleu_4"] == pytest.approx(bp * 0.1**0.25)
    assert got["bleu_avg"] == pytest.approx((3 * bp + bp * 0.1**0.25) / 4)
    same = lexical.bleu("wash the cells twice now", "wash the cells twice now")
    assert all(v == pytest.approx(1.0) for v in same.values())
    assert lexical.bleu("wash the cells", "")["bleu_avg"] == 0.0


def test_rouge_l_by_hand_with_the_stemmer():
    # LCS "wash the cell" (cells/cell stem alike) = 3; P = 3/3, R = 3/4 → F = 6/7
    assert lexical.rouge_l("wash the cells twice", "washing the cell") == pytest.approx(6 / 7)
    assert lexical.rouge_l("wash the cells", "spin tube") == 0.0


def test_reference_from_reference_text_or_gold_orc_else_not_applicable():
    prediction = [{**GOLD[0]}, {**GOLD[1]}]
    orc = ["Wash the cells twice.", "Spin the tube."]
    listed = score_record(
        {"gold": GOLD, "prediction": prediction, "prediction_orc": orc, "reference_text": orc}
    ).metrics
    assert listed["bleu_avg"] == pytest.approx(1.0) and listed["rouge_l"] == pytest.approx(1.0)
    assert listed["kw_f1"] is None  # asked for only (a model)

    gold_text = (
        '<key>Step 1: {"action": "wash", "objects": ["cells"], "parameters": ["twice"]}\n'
        'Step 2: {"action": "spin", "objects": ["tube"], "parameters": []}</key>'
        "<orc>Step 1: Wash the cells twice.\nStep 2: Spin the tube.</orc>"
    )
    from_gold = score_record({"gold": gold_text, "prediction": prediction}).metrics
    # hypothesis: the structured steps' words "wash cells twice spin tube"
    assert 0 < from_gold["rouge_l"] < 1
    assert from_gold["rouge_l"] == pytest.approx(
        lexical.rouge_l("Wash the cells twice. Spin the tube.", "wash cells twice spin tube")
    )

    none = score_record({"gold": GOLD, "prediction": prediction}).metrics
    assert all(none[k] is None for k in lexical.LEXICAL_METRICS)
    assert none["step_m"] == 1  # the structural metrics are unaffected


def test_raw_answer_without_sections_is_compared_after_its_reasoning():
    record = {
        "gold": GOLD,
        "prediction": "<think>hmm</think>Wash the cells twice. Spin the tube.",
        "reference_text": "Wash the cells twice. Spin the tube.",
    }
    got = score_record(record).metrics
    assert got["format_gate"] == 0 and got["score"] == 0  # the gate still fails it
    assert got["bleu_avg"] == pytest.approx(1.0)


@pytest.mark.parametrize("bad", ["", "  ", [], [1, 2], {"text": "x"}, 3])
def test_bad_reference_text_names_the_field(bad):
    with pytest.raises(RecordError) as err:
        score_record({"gold": GOLD, "prediction": GOLD, "reference_text": bad})
    assert err.value.field == "reference_text"
    assert "non-empty" in str(err.value)


def test_kw_f1_with_keybert_on_the_local_minilm():
    ref = "Centrifuge the lysate at 12000 g, then quantify the protein with a BCA assay."
    same = score_record(
        {"gold": GOLD, "prediction": "x", "reference_text": ref}, kw_f1="off"
    ).metrics
    assert same["kw_f1"] is None
    assert lexical.kw_f1(ref, ref) == pytest.approx(1.0)
    assert lexical.kw_f1(ref, "Sing a song about the weather in spring.") == 0.0
    # two of the hypothesis's keywords are the reference's: F1 from the two sets, by hand
    hyp = "Quantify the protein and freeze the lysate."
    r, h = lexical.keywords(ref), lexical.keywords(hyp)
    common = len(r & h)
    assert common >= 2, (r, h)
    p, rec = common / len(h), common / len(r)
    got = score_record(
        {"gold": GOLD, "prediction": hyp, "reference_text": ref}, kw_f1="keybert"
    ).metrics["kw_f1"]
    assert got == pytest.approx(2 * p * rec / (p + rec))


def test_score_command_prints_lexical_metrics_and_their_means(tmp_path):
    lines = [
        {
            "id": "a",
            "gold": GOLD,
            "prediction": GOLD,
            "reference_text": "wash cells twice spin tube",
        },
        {"id": "b", "gold": GOLD, "prediction": GOLD},  # no reference: not averaged
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = StringIO()
    call_command("score", "scirecipe", str(path), stdout=out)
    rows = [json.loads(x) for x in out.getvalue().splitlines()]
    assert rows[0]["bleu_avg"] == pytest.approx(1.0) and rows[0]["rouge_l"] == pytest.approx(1.0)
    assert rows[1]["bleu_avg"] is None
    summary = rows[-1]["summary"]
    assert summary["bleu_avg"] == pytest.approx(1.0) and summary["n"] == 2
    assert summary["kw_f1"] is None


def test_kw_f1_without_the_keywords_extra_names_the_extra(monkeypatch):
    from core.extras import ExtraMissing

    lexical._keybert.cache_clear()
    monkeypatch.setitem(sys.modules, "keybert", None)  # as in an install without the extra
    try:
        with pytest.raises(ExtraMissing) as err:
            lexical.kw_f1("Centrifuge the lysate.", "Freeze the lysate.")
    finally:
        lexical._keybert.cache_clear()
    assert "KW-F1 (kw_f1=keybert) needs the optional extra 'keywords'" in str(err.value)
    assert "pip install -e '.[keywords]'" in str(err.value)
