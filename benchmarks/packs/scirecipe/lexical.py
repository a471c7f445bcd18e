"""SciRecipe's lexical metrics (Thoth §4.2, "following BioProBench"): BLEU-1..4 and their mean
(BLEU-AVG), ROUGE-L and keyword F1 (KW-F1) of a prediction's text against the reference
protocol's text. Pure: no Django imports.

As BioProBench's protocol-generation evaluation computes them, with the same libraries:

- tokens: the lower-cased text cut into sentences and words by NLTK (``word_tokenize`` needs
  the ``punkt`` data, which is downloaded at run time there; here an untrained Punkt sentence
  splitter and NLTK's word tokenizer, which is what ``word_tokenize`` runs per sentence — they
  differ only where trained Punkt knows an abbreviation such as "e.g.");
- BLEU-n: NLTK's ``sentence_bleu`` with uniform cumulative weights 1/n and smoothing method 1
  (BioProBench's own BLEU is n = 2); BLEU-AVG the mean of n = 1..4;
- ROUGE-L: ``rouge_score``'s F-measure with the Porter stemmer on the raw texts;
- METEOR: NLTK's ``meteor_score([reference tokens], hypothesis tokens)`` with its defaults
  (α 0.9, β 3, γ 0.5; exact, Porter-stem and WordNet-synonym matches), on the same tokens; the
  WordNet 3.0 data is read from an installed PyPI package (:mod:`.wordnet`), never downloaded;
- KW-F1 (opt-in, a model): the top 64 KeyBERT keywords of each text (all-MiniLM-L6-v2, the model
  BioProBench names, run on onnxruntime by :mod:`benchmarks.embeddings`: nothing is fetched), then
  F1 of the two keyword sets (0 when either is empty). KeyBERT is the ``keywords`` extra.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from benchmarks.packs.scirecipe.wordnet import wordnet
from core import extras

BLEU_ORDERS = (1, 2, 3, 4)
LEXICAL_METRICS = (
    "bleu_1",
    "bleu_2",
    "bleu_3",
    "bleu_4",
    "bleu_avg",
    "rouge_l",
    "meteor",
    "kw_f1",
)
KEYWORDS_TOP_N = 64
_lock = threading.Lock()


@lru_cache(maxsize=1)
def _tokenizers():
    from nltk.tokenize import NLTKWordTokenizer, PunktSentenceTokenizer

    return PunktSentenceTokenizer(), NLTKWordTokenizer()


def tokens(text: str) -> list[str]:
    sentences, words = _tokenizers()
    return [w for s in sentences.tokenize(text.lower()) for w in words.tokenize(s)]


def bleu(reference: str, hypothesis: str) -> dict[str, float]:
    """``bleu_1`` … ``bleu_4`` (cumulative, smoothing method 1) and ``bleu_avg``; 0 for an
    empty text."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    ref, hyp = tokens(reference), tokens(hypothesis)
    out: dict[str, float] = {}
    for n in BLEU_ORDERS:
        if not ref or not hyp:
            out[f"bleu_{n}"] = 0.0
            continue
        out[f"bleu_{n}"] = float(
            sentence_bleu(
                [ref],
                hyp,
                weights=tuple([1.0 / n] * n),
                smoothing_function=SmoothingFunction().method1,
            )
        )
    out["bleu_avg"] = sum(out[f"bleu_{n}"] for n in BLEU_ORDERS) / len(BLEU_ORDERS)
    return out


@lru_cache(maxsize=1)
def _rouge():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(reference: str, hypothesis: str) -> float:
    return float(_rouge().score(reference, hypothesis)["rougeL"].fmeasure)


def meteor(reference: str, hypothesis: str) -> float:
    """NLTK's METEOR of the hypothesis against the reference (0 for an empty text); raises
    :class:`~benchmarks.packs.scirecipe.wordnet.WordNetMissing` when the WordNet data is not
    installed."""
    from nltk.translate.meteor_score import meteor_score

    ref, hyp = tokens(reference), tokens(hypothesis)
    if not ref or not hyp:
        return 0.0
    reader = wordnet()
    with _lock:  # the reader fills its caches as it goes: one thread at a time
        return float(meteor_score([ref], hyp, wordnet=reader))


@lru_cache(maxsize=1)
def _keybert():
    feature = "SciRecipe's KW-F1 (kw_f1=keybert)"
    keybert = extras.require("keybert", extra="keywords", feature=feature)
    backend = extras.require("keybert.backend", extra="keywords", feature=feature)

    from benchmarks.embeddings import load_model  # the one home of the offline MiniLM

    class OnnxMiniLM(backend.BaseEmbedder):
        """KeyBERT's embedding backend: the ONNX MiniLM (KeyBERT ranks by cosine)."""

        def embed(self, documents, verbose=False):
            return load_model().encode(list(documents))

    return keybert.KeyBERT(model=OnnxMiniLM())


def keywords(text: str, top_n: int = KEYWORDS_TOP_N) -> set[str]:
    if not text.strip():
        return set()
    with _lock:  # one model, shared by threads
        found = _keybert().extract_keywords(text, top_n=top_n)
    return {kw for kw, _score in found}


def kw_f1(reference: str, hypothesis: str) -> float:
    ref, hyp = keywords(reference), keywords(hypothesis)
    common = len(ref & hyp)
    if not common:
        return 0.0
    precision, recall = common / len(hyp), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def lexical_metrics(reference: str | None, hypothesis: str, *, kw: bool) -> dict[str, Any]:
    """Every lexical metric, ``None`` throughout when the item has no reference text (and
    ``kw_f1`` ``None`` unless ``kw``)."""
    if reference is None:
        return dict.fromkeys(LEXICAL_METRICS)
    out: dict[str, Any] = {
        **bleu(reference, hypothesis),
        "rouge_l": rouge_l(reference, hypothesis),
        "meteor": meteor(reference, hypothesis),
    }
    out["kw_f1"] = kw_f1(reference, hypothesis) if kw else None
    return out


def reference_text(record: Mapping[str, Any], gold_orc: list[str]) -> str | None:
    """The reference protocol's text: the record's ``reference_text`` (a text, or a list of
    step texts joined by spaces as BioProBench joins them), else the ``<orc>`` lines of a gold
    given as a whole answer text; ``None`` when there is neither (the metrics are then not
    applicable). A bad ``reference_text`` is a ``ValueError`` naming the problem."""
    value = record.get("reference_text")
    if value is None:
        return " ".join(gold_orc) if gold_orc else None
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return " ".join(v.strip() for v in value)
    raise ValueError("must be a non-empty text or a non-empty list of step texts")
