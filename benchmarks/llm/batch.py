"""The Batch API of OpenAI-compatible providers (backend mode ``batch``), through the official
``openai`` client: a JSONL of requests uploaded to ``/v1/files`` (``client.files.create``), one
batch per file (``client.batches.create``), polled (``client.batches.retrieve``), cancelled
(``client.batches.cancel``), and its output and error files read back
(``client.files.content``). Providers bill batch requests at a lower rate (OpenAI: half) and
answer within the completion window (OpenAI: 24 h).

Config (the ``openai`` backend's keys, plus)::

    {"backend": "openai", "mode": "batch",           # or "backend": "openai-batch"
     "batch_max_requests": 50000,                    # a provider's limit per input file
     "batch_max_bytes": 200000000,                   # ... and its size limit (OpenAI: 200 MB)
     "batch_completion_window": "24h",
     "batch_price_factor": 0.5}                      # batch rate / online rate

The JSONL is the one vLLM's batch runner reads too (:mod:`benchmarks.llm.vllm_batch`). Runs use
the pieces here through :mod:`benchmarks.services.batch_runs` (submit, poll from beat, store
each output file once); :meth:`OpenAIBatchBackend.complete_iter` is the plain contract (submit,
wait, yield) for callers that have nothing to resume.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from benchmarks.llm.base import Capabilities, LLMError, LLMRequest, LLMResponse, LLMResult
from benchmarks.llm.batch_rate import is_batch, price_factor  # noqa: F401 - re-exported
from benchmarks.llm.openai_compat import OpenAICompatBackend

DEFAULT_MAX_REQUESTS = 50_000
DEFAULT_MAX_BYTES = 200 * 1000 * 1000
# a batch in one of these states changes no more: its output and error files are final
TERMINAL = frozenset({"completed", "expired", "cancelled", "failed"})
# error codes of requests the batch never ran: back to pending, no attempt counted
NOT_RUN = frozenset({"batch_expired", "batch_cancelled"})


@dataclass(frozen=True)
class NotRun:
    """A request its batch did not run (expired or cancelled first): it goes back to pending."""

    reason: str


@dataclass
class BatchState:
    """What ``batches.retrieve`` says of one batch."""

    id: str
    status: str
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _json_escape(match: re.Match) -> str:
    """A character outside ASCII as JSON writes it escaped (a surrogate pair past U+FFFF)."""
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def split_lines(lines: Iterable[str], *, max_requests: int, max_bytes: int) -> Iterator[list[str]]:
    """JSONL lines (each ending with a newline) in files of at most ``max_requests`` lines and
    ``max_bytes`` bytes; a single line over ``max_bytes`` is a ``ValueError``."""
    current: list[str] = []
    size = 0
    for line in lines:
        n = len(line.encode())
        if n > max_bytes:
            raise ValueError(f"one batch request is {n} bytes, over the {max_bytes}-byte limit")
        if current and (len(current) >= max_requests or size + n > max_bytes):
            yield current
            current, size = [], 0
        current.append(line)
        size += n
    if current:
        yield current


def parse_output(text: str) -> dict[str, LLMResult | NotRun]:
    """Output or error file lines by ``custom_id``: a reply (status 200) is an
    :class:`LLMResponse`; an error a retryable-or-not :class:`LLMError` (the online rule: 408,
    429 and 5xx may succeed later); a request the batch never ran :class:`NotRun`."""
    results: dict[str, LLMResult | NotRun] = {}
    for raw in text.splitlines():
        if not raw.strip():
            continue
        line = json.loads(raw)
        custom_id = str(line.get("custom_id"))
        error = line.get("error") or {}
        response = line.get("response") or {}
        status = int(response.get("status_code") or 0) or None
        body = response.get("body") or {}
        if error.get("code") in NOT_RUN:
            results[custom_id] = NotRun(str(error.get("code")))
        elif error or status != 200:
            message = error.get("message") or (body.get("error") or {}).get("message") or body
            retryable = status is None or status in (408, 429) or status >= 500
            results[custom_id] = LLMError(
                f"batch request failed (HTTP {status}): {message}"[:2000],
                retryable=retryable,
                status=status,
            )
        else:
            results[custom_id] = response_of(body)
    return results


def response_of(body: dict[str, Any]) -> LLMResult:
    try:
        choice = body["choices"][0]
    except (KeyError, IndexError, TypeError):
        return LLMError(f"batch reply without choices: {str(body)[:200]}", retryable=True)
    message = choice.get("message")
    text = (message or {}).get("content") if message is not None else choice.get("text")
    usage = body.get("usage") or {}
    return LLMResponse(
        text=text or "",
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        finish_reason=choice.get("finish_reason"),
        model=body.get("model") or "",
    )


class OpenAIBatchBackend(OpenAICompatBackend):
    """The ``openai`` backend's requests, sent as batch files instead of one by one."""

    name = "openai-batch"
    mode = "batch"
    capabilities = Capabilities(structured_output=True, batch=True)

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(config)
        self.max_requests = int(config.get("batch_max_requests") or DEFAULT_MAX_REQUESTS)
        self.max_bytes = int(config.get("batch_max_bytes") or DEFAULT_MAX_BYTES)
        self.window = str(config.get("batch_completion_window") or "24h")
        self.poll_s = float(config.get("batch_poll_s") or 30)

    # -- lines ---------------------------------------------------------------------------
    def url(self) -> str:
        return "/v1/chat/completions" if self.endpoint == "chat" else "/v1/completions"

    def line(self, custom_id: str, request: LLMRequest) -> str:
        """One JSONL line: the body the online backend would POST, with its ``custom_id``."""
        kw = self.wire.kwargs(request)
        body: dict[str, Any] = {k: v for k, v in kw.items() if k != "extra_body"}
        body.update(kw.get("extra_body") or {})
        if self.endpoint == "chat":
            body["messages"] = request.messages or [
                {"role": "user", "content": request.prompt or ""}
            ]
        else:
            body["prompt"] = request.prompt or "\n\n".join(
                m.get("content", "") for m in request.messages or []
            )
        entry = {"custom_id": custom_id, "method": "POST", "url": self.url(), "body": body}
        # ASCII (non-ASCII characters as JSON escapes): a file's lines are held until it is sent,
        # and one curly quote in a prompt would make Python hold its whole line at 2-4 bytes a
        # character. orjson (~6x the standard library's speed here) never escapes: the few
        # characters outside ASCII, all inside JSON strings, are escaped after it.
        line = orjson.dumps(entry)
        if line.isascii():
            return line.decode("ascii") + "\n"
        return _NON_ASCII.sub(_json_escape, line.decode()) + "\n"

    def files(self, lines: Iterable[str]) -> Iterator[list[str]]:
        return split_lines(lines, max_requests=self.max_requests, max_bytes=self.max_bytes)

    # -- the provider --------------------------------------------------------------------
    def _api(self, what: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as exc:
            retryable, status = self._classify(exc)
            raise LLMError(f"batch API, {what}: {exc}", retryable=retryable, status=status) from exc

    def submit(self, lines: list[str], *, metadata: dict[str, str] | None = None) -> BatchState:
        """Upload one file of lines and create its batch. The file is written to a temporary
        file and streamed from there (a provider's file may be 200 MB: no second copy of it is
        held in memory)."""
        with tempfile.TemporaryFile() as fh:
            for line in lines:
                fh.write(line.encode())
            fh.seek(0)
            uploaded = self._api(
                "upload",
                lambda: self.client.files.create(file=("requests.jsonl", fh), purpose="batch"),
            )
        batch = self._api(
            "create",
            lambda: self.client.batches.create(
                input_file_id=uploaded.id,
                endpoint=self.url(),
                completion_window=self.window,
                metadata=metadata or None,
            ),
        )
        return self._state(batch)

    def find(self, *, key: str, value: str, since: float) -> BatchState | None:
        """The provider's batch whose ``metadata[key] == value`` (``client.batches.list``,
        newest first, read back to ``since``, a Unix time): how a batch whose creation was
        never written down (the worker died in between) is found again. None when none."""

        def scan() -> BatchState | None:
            for batch in self.client.batches.list(limit=100):
                if (getattr(batch, "metadata", None) or {}).get(key) == value:
                    return self._state(batch)
                if int(getattr(batch, "created_at", 0) or 0) < since:
                    return None
            return None

        return self._api("list", scan)

    def retrieve(self, batch_id: str) -> BatchState:
        return self._state(self._api("retrieve", lambda: self.client.batches.retrieve(batch_id)))

    def cancel(self, batch_id: str) -> BatchState:
        return self._state(self._api("cancel", lambda: self.client.batches.cancel(batch_id)))

    def results(self, state: BatchState) -> dict[str, LLMResult | NotRun]:
        """The output and error files of a finished batch, by ``custom_id``."""
        out: dict[str, LLMResult | NotRun] = {}
        for file_id in (state.error_file_id, state.output_file_id):
            if file_id:
                text = self._api("download", lambda f=file_id: self.client.files.content(f).text)
                out.update(parse_output(text))
        return out

    @staticmethod
    def _state(batch: Any) -> BatchState:
        counts = getattr(batch, "request_counts", None)
        return BatchState(
            id=batch.id,
            status=batch.status,
            output_file_id=getattr(batch, "output_file_id", None),
            error_file_id=getattr(batch, "error_file_id", None),
            counts={k: int(getattr(counts, k, 0) or 0) for k in ("total", "completed", "failed")},
        )

    # -- the plain contract: submit, wait, yield -------------------------------------------
    def complete_iter(
        self,
        requests: Iterable[LLMRequest],
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, LLMResult]]:
        """All requests as batch files, waited for (``batch_poll_s``); a request the batch did
        not run is a retryable :class:`LLMError`. ``should_stop()`` cancels the batches."""
        lines = (self.line(str(i), r) for i, r in enumerate(requests))
        pending = [self.submit(chunk).id for chunk in self.files(lines)]
        while pending:
            for batch_id in list(pending):
                state = self.retrieve(batch_id)
                if not state.terminal:
                    if should_stop is not None and should_stop():
                        self.cancel(batch_id)
                    continue
                pending.remove(batch_id)
                for custom_id, result in self.results(state).items():
                    if isinstance(result, NotRun):
                        result = LLMError(f"batch {state.status}: not run", retryable=True)
                    yield int(custom_id), result
            if pending:
                time.sleep(self.poll_s)
