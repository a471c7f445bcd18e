"""The ONNX sentence embedder (benchmarks.embeddings) against all-MiniLM-L6-v2 in fp32 as
sentence-transformers ran it: vectors recorded once (data/minilm_fp32_reference.json) for the
mining tests' procedures. The int8 export must give the same vectors up to a cosine of 0.998 and
the same near-duplicate decision at mining's threshold."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import embeddings
from mining import dedup

REFERENCE = json.loads(
    (Path(__file__).parent / "data" / "minilm_fp32_reference.json").read_text(encoding="utf-8")
)


def test_the_texts_are_the_mining_tests_procedures():
    from tests.mining.factories import BREAD, BREAD_PARAPHRASE, TIRE

    texts = [dedup.procedure_text(*p) for p in (BREAD, BREAD_PARAPHRASE, TIRE)]
    assert texts == REFERENCE["texts"]


def test_onnx_vectors_match_the_recorded_fp32_vectors():
    got = embeddings.load_model().encode(REFERENCE["texts"])
    want = np.asarray(REFERENCE["vectors"], dtype=np.float32)
    assert got.shape == want.shape == (3, embeddings.DIMENSION)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() > 0.998, cosines
    # pairwise similarities (what de-duplication thresholds) within 0.01 of fp32's
    assert np.abs(got @ got.T - want @ want.T).max() < 0.01
    # the paraphrase is a near duplicate of the bread recipe, the tyre change is not
    sims = want @ want.T
    assert sims[0, 1] > dedup.DEFAULT_THRESHOLD > sims[0, 2]
    hits = dedup.near_duplicates(REFERENCE["texts"][1:], REFERENCE["texts"][:1])
    assert [(h.index, h.ref_index) for h in hits] == [(0, 0)]
    assert hits[0].similarity == pytest.approx(float(sims[0, 1]), abs=0.01)


def test_a_text_gets_the_same_vector_alone_or_in_a_padded_batch():
    model = embeddings.load_model()
    texts = [*REFERENCE["texts"], "Short.", "word " * 400]  # the last one is cut at 256 tokens
    batched = model.encode(texts, batch_size=2)
    alone = np.stack([model.encode([t])[0] for t in texts])
    assert np.abs(batched - alone).max() < 1e-5
    assert model.encode([]).shape == (0, embeddings.DIMENSION)


def test_a_missing_model_package_is_named():
    with pytest.raises(embeddings.EmbeddingModelMissing, match="'no-such-model-package'"):
        embeddings.packaged_file("no-such-model-package", "model.onnx")
    with pytest.raises(embeddings.EmbeddingModelMissing, match=r"no_such_file\.onnx"):
        embeddings.packaged_file(embeddings.MODEL_FILE[0], "no_such_file.onnx")
