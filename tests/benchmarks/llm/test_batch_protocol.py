"""The Batch API through the real ``openai`` client against the local batch server: lines as
the online backend would send them, files split by the provider's request and byte limits,
output and error files parsed (replies, failures by status, requests not run), cancel."""

from __future__ import annotations

import json

import pytest

from benchmarks.llm.base import LLMError, LLMRequest, LLMResponse
from benchmarks.llm.batch import NotRun, OpenAIBatchBackend, parse_output, price_factor, split_lines
from benchmarks.llm.registry import build_backend
from benchmarks.services import batch_runs
from tests.support.batch_server import BatchTestServer


@pytest.fixture
def server():
    with BatchTestServer() as s:
        yield s


def config(server, **extra):
    return {
        "backend": "openai",
        "mode": "batch",
        "base_url": server.base_url,
        "model": "m",
        "batch_poll_s": 0.01,
        **extra,
    }


def test_mode_batch_builds_the_batch_backend_and_prices_at_the_batch_rate(server):
    assert isinstance(build_backend(config(server)), OpenAIBatchBackend)
    assert isinstance(
        build_backend({**config(server), "mode": None, "backend": "openai-batch"}),
        OpenAIBatchBackend,
    )
    assert not isinstance(build_backend({**config(server), "mode": "online"}), OpenAIBatchBackend)
    assert str(price_factor(config(server))) == "0.5"
    assert str(price_factor(config(server, batch_price_factor="0.6"))) == "0.6"
    assert price_factor({"backend": "openai"}) == 1


def test_a_full_batch_answers_every_request_in_order(server):
    server.auto_finish = True
    backend = build_backend(config(server, temperature=0))
    requests = [
        LLMRequest(messages=[{"role": "user", "content": f"q{i}"}], max_tokens=5) for i in range(7)
    ]
    results = backend.complete_many(requests)
    assert [r.text for r in results] == [f"echo: q{i}" for i in range(7)]
    assert all(isinstance(r, LLMResponse) and r.prompt_tokens == 1000 for r in results)
    line = server.input_lines()[0]
    assert line["url"] == "/v1/chat/completions" and line["method"] == "POST"
    assert line["body"] == {
        "model": "m",
        "temperature": 0.0,
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "q0"}],
    }
    assert server.calls["upload"] == server.calls["create"] == 1
    assert next(iter(server.batches.values()))["completion_window"] == "24h"


def test_files_respect_the_request_and_byte_limits(server):
    server.auto_finish = True
    backend = build_backend(config(server, batch_max_requests=3))
    results = backend.complete_many([LLMRequest(prompt=f"p{i}") for i in range(8)])
    assert [r.text for r in results] == [f"echo: p{i}" for i in range(8)]
    assert [len(server._requests(b)) for b in server.batches.values()] == [3, 3, 2]
    lines = [json.dumps({"custom_id": str(i), "pad": "x" * 50}) + "\n" for i in range(5)]
    size = len(lines[0].encode())
    assert [len(f) for f in split_lines(lines, max_requests=100, max_bytes=2 * size)] == [2, 2, 1]
    with pytest.raises(ValueError, match="over the"):
        list(split_lines(lines, max_requests=100, max_bytes=size - 1))


def test_a_line_is_ascii_and_the_server_reads_the_prompt_unchanged(server):
    server.auto_finish = True
    backend = build_backend(config(server))
    prompt = "Étape « une » — 手順"
    line = backend.line("7", LLMRequest(prompt=prompt))
    assert line.isascii()
    assert backend.complete_many([LLMRequest(prompt=prompt)])[0].text == f"echo: {prompt}"


def test_ascii_and_escaped_lines_have_one_form_and_their_custom_id_is_read(server):
    """A line is the standard library's compact ASCII JSON, non-ASCII characters escaped (a
    surrogate pair past U+FFFF), whether or not it had any; the submitting code finds its id."""
    backend = build_backend(config(server))
    wide = 'Étape « une » — 手順 😀 "q" \\ done'
    plain = backend.line("12", LLMRequest(prompt="step one"))
    escaped = backend.line("345", LLMRequest(prompt=wide))
    assert plain.isascii() and escaped.isascii() and "\\u00c9tape" in escaped
    assert "\\ud83d\\ude00" in escaped
    for line, key, prompt in ((plain, "12", "step one"), (escaped, "345", wide)):
        entry = json.loads(line)
        assert line == json.dumps(entry, separators=(",", ":")) + "\n"
        assert entry["custom_id"] == key and batch_runs._custom_id(line) == key
        assert entry["body"]["messages"] == [{"role": "user", "content": prompt}]


def test_output_and_error_files_parse_by_custom_id():
    text = "\n".join(
        json.dumps(x)
        for x in [
            {
                "custom_id": "1",
                "response": {
                    "status_code": 200,
                    "body": {
                        "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
                    },
                },
                "error": None,
            },
            {
                "custom_id": "2",
                "response": {"status_code": 500, "body": {"error": {"message": "boom"}}},
                "error": None,
            },
            {
                "custom_id": "3",
                "response": {"status_code": 400, "body": {"error": {"message": "bad"}}},
                "error": None,
            },
            {
                "custom_id": "4",
                "response": None,
                "error": {"code": "batch_expired", "message": "x"},
            },
        ]
    )
    out = parse_output(text)
    assert out["1"].text == "hi" and out["1"].completion_tokens == 2
    assert isinstance(out["2"], LLMError) and out["2"].retryable and out["2"].status == 500
    assert isinstance(out["3"], LLMError) and not out["3"].retryable and "bad" in str(out["3"])
    assert out["4"] == NotRun("batch_expired")


def test_expired_and_cancelled_batches_give_what_ran_and_name_the_rest(server):
    backend = build_backend(config(server))
    lines = [backend.line(str(i), LLMRequest(prompt=f"p{i}")) for i in range(4)]
    state = backend.submit(lines)
    assert state.status == "validating" and not state.terminal
    server.run(n=1)
    server.expire()
    state = backend.retrieve(state.id)
    assert state.status == "expired" and state.counts["completed"] == 1
    out = backend.results(state)
    assert out["0"].text == "echo: p0" and out["1"] == NotRun("batch_expired") and len(out) == 4
    second = backend.submit(lines)
    server.run(n=2)
    cancelled = backend.cancel(second.id)
    assert cancelled.status == "cancelled"
    out = backend.results(backend.retrieve(second.id))
    assert sorted(out) == ["0", "1"]  # what did not run has no line
