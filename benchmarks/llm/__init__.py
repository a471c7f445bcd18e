"""LLM access shared by generation runs (benchmarks), judges (judging) and mining (benchmarks).

It lives in ``benchmarks`` because of the dependency direction benchmarks ← annotation ← judging:
mining and generation runs need it and cannot import ``judging``.
"""

from benchmarks.llm.base import LLMBackend, LLMError, LLMRequest, LLMResponse

__all__ = ["LLMBackend", "LLMError", "LLMRequest", "LLMResponse"]
