"""Recorded replies: an LLM backend that answers from a recording, and one that writes it.

``replay`` (:class:`ReplayBackend`) calls no model. It answers each request with the reply
recorded for the same request content, so a mining batch, generation run or judge run can be
run again from recorded outputs — to reproduce a batch, to try other options (heuristics,
stages) on the same replies, to demo the pipeline without an API key::

    {"backend": "replay", "model": "gpt-4.1", "recording": "demo/fixtures/mining/replies.jsonl"}

``record`` (:class:`RecordingBackend`) wraps any other backend and appends every successful
reply to a recording, which ``replay`` can answer from later::

    {"backend": "record", "model": "gpt-4.1", "recording": "var/replies.jsonl",
     "inner": {"backend": "openai", "model": "gpt-4.1", "base_url": "…"}}

The recording is JSON Lines, one reply a line: ``{"key", "text", "model", "prompt_tokens",
"completion_tokens", "finish_reason"}``. ``key`` is :func:`request_key`, the SHA-256 of the
request's content (its chat ``messages`` or ``prompt``, and the structured-output schema
name), so sampling settings and the model name do not change which reply answers. A request
with no recorded reply is a failed request (:class:`LLMError`, not retryable) naming the key
and the file; the rest of the batch goes on. A relative ``recording`` path is taken from the
project directory. A replayed reply says so: its ``model`` is ``replay:<recorded model>`` and
building the backend logs which file it answers from.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from django.conf import settings

from benchmarks.llm.base import (
    Capabilities,
    LLMBackend,
    LLMError,
    LLMRequest,
    LLMResponse,
    LLMResult,
)

logger = logging.getLogger(__name__)

REPLAY_PREFIX = "replay:"
_ANNOUNCED: set[Path] = set()  # recordings this process has said it replays (said once each)


def request_key(request: LLMRequest) -> str:
    """The recording key of a request: SHA-256 of its content (messages or prompt, and the
    structured-output schema name when it asks for one)."""
    content = {
        "messages": request.messages,
        "prompt": request.prompt,
        "schema": request.json_schema_name if request.json_schema else None,
    }
    data = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def recording_path(value: Any, *, backend: str) -> Path:
    if not value or not isinstance(value, str | os.PathLike):
        raise ValueError(f"{backend} backend config: 'recording' (a JSONL file path) is required")
    path = Path(value)
    return path if path.is_absolute() else Path(settings.BASE_DIR) / path


def recording_problem(value: str) -> str:
    """Why ``value`` is not a recording a person may point the replay backend at ("" when it
    is): a JSONL file inside the project, named by a relative path. The one rule of the mining
    form and the judge's ``recording`` field."""
    if not value.strip():
        return "The replay backend needs a recording (a JSONL file of replies)."
    path = PurePosixPath(value.strip())
    if path.is_absolute() or ".." in path.parts:
        return "Give a path inside the project, e.g. demo/fixtures/mining/replies.jsonl."
    if not (Path(settings.BASE_DIR) / path).is_file():
        return f"No recording at {value.strip()} in the project."
    return ""


def read_recording(path: Path) -> dict[str, dict[str, Any]]:
    """key → recorded reply. Raises ValueError naming the file and line of a bad record."""
    if not path.is_file():
        raise ValueError(f"replay backend config: recording {path} does not exist")
    replies: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"recording {path.name} line {number}"
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{where}: not JSON ({exc})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{where}: a record must be a JSON object")
            if not isinstance(row.get("key"), str) or not row["key"]:
                raise ValueError(f"{where}: field 'key' (a string) is required")
            if not isinstance(row.get("text"), str):
                raise ValueError(f"{where}: field 'text' (a string) is required")
            for field in ("prompt_tokens", "completion_tokens"):
                value = row.get(field, 0)
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ValueError(f"{where}: field {field!r} must be a whole number >= 0")
            replies[row["key"]] = row
    return replies


def is_replay(config: dict[str, Any] | None) -> bool:
    """Whether a backend config replays recorded replies (pages mark such work as replayed)."""
    return (config or {}).get("backend") in ("replay", f"{__name__}.ReplayBackend")


class ReplayBackend(LLMBackend):
    """Answers from recorded replies keyed by request content; calls no model."""

    name = "replay"
    # a prefilled request is keyed by its messages, the prefix included
    capabilities: ClassVar[Capabilities] = Capabilities(structured_output=True, prefill=True)

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(config)
        self.path = recording_path(config.get("recording"), backend="replay")
        self.replies = read_recording(self.path)
        if self.path in _ANNOUNCED:
            return
        _ANNOUNCED.add(self.path)
        logger.warning(
            "LLM backend 'replay' for model %s: answering from %d recorded replies in %s "
            "(no model is called)",
            self.model,
            len(self.replies),
            self.path,
        )

    def reply_for(self, request: LLMRequest) -> LLMResult:
        key = request_key(request)
        row = self.replies.get(key)
        if row is None:
            return LLMError(
                f"replay: no recorded reply for this request (key {key[:16]}…) in {self.path.name}",
                retryable=False,
            )
        return LLMResponse(
            text=row["text"],
            prompt_tokens=row.get("prompt_tokens", 0),
            completion_tokens=row.get("completion_tokens", 0),
            finish_reason=row.get("finish_reason") or "stop",
            latency_s=0.0,
            model=REPLAY_PREFIX + str(row.get("model") or self.model),
        )

    def complete_iter(
        self,
        requests: Iterable[LLMRequest],
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, LLMResult]]:
        for index, request in enumerate(requests):
            if should_stop is not None and should_stop():
                return
            yield index, self.reply_for(request)


_WRITE_LOCK = threading.Lock()


def recording_append(path: Path, request: LLMRequest, response: LLMResponse) -> None:
    """Add one reply to a recording (one JSON line, appended under a lock)."""
    row = {
        "key": request_key(request),
        "text": response.text,
        "model": response.model,
        "prompt_tokens": response.prompt_tokens,
        "completion_tokens": response.completion_tokens,
        "finish_reason": response.finish_reason,
    }
    line = json.dumps(row, ensure_ascii=False) + "\n"
    with _WRITE_LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line)


class RecordingBackend(LLMBackend):
    """Sends requests through the ``inner`` backend and records every successful reply."""

    name = "record"
    capabilities: ClassVar[Capabilities] = Capabilities(structured_output=True)
    wraps = True  # ``inner`` is built from ``config["inner"]`` by the registry

    def __init__(self, config: dict[str, Any], *, inner: LLMBackend) -> None:
        self.inner = inner
        super().__init__({"model": self.inner.model, **config})
        self.path = recording_path(config.get("recording"), backend="record")
        self.limits = self.inner.limits

    def complete_iter(
        self,
        requests: Iterable[LLMRequest],
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, LLMResult]]:
        sent: list[LLMRequest] = []

        def remember(items: Iterable[LLMRequest]) -> Iterator[LLMRequest]:
            for request in items:
                sent.append(request)
                yield request

        for index, result in self.inner.complete_iter(remember(requests), should_stop=should_stop):
            if isinstance(result, LLMResponse):
                recording_append(self.path, sent[index], result)
            yield index, result

    def prefill_refusal(self) -> str | None:
        return self.inner.prefill_refusal()

    def prefilled(self, request: LLMRequest, prefix: str) -> LLMRequest:
        return self.inner.prefilled(request, prefix)

    def close(self) -> None:
        self.inner.close()
