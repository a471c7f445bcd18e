"""The replay backend: keyed by request content, answers recorded replies, fails a request it
has no reply for (not retryable), names the file and line of a bad recording; the record
backend appends replies that replay then answers with (real HTTP to the local server)."""

from __future__ import annotations

import json

import pytest

from benchmarks.llm.base import LLMError, LLMRequest, LLMResponse
from benchmarks.llm.registry import build_backend, queue_for
from benchmarks.llm.replay import REPLAY_PREFIX, read_recording, request_key


def chat(text: str, **kw) -> LLMRequest:
    return LLMRequest(messages=[{"role": "user", "content": text}], **kw)


def write(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_the_key_is_the_request_content_not_its_sampling_settings():
    assert request_key(chat("a")) == request_key(chat("a", temperature=0.7, max_tokens=9))
    assert request_key(chat("a")) != request_key(chat("b"))
    assert request_key(chat("a")) != request_key(LLMRequest(prompt="a"))
    schema = {"type": "object"}
    assert request_key(chat("a", json_schema=schema, json_schema_name="x")) != request_key(
        chat("a", json_schema=schema, json_schema_name="y")
    )
    assert len(request_key(chat("a"))) == 64


def test_replay_answers_recorded_replies_and_fails_unknown_requests(tmp_path):
    path = tmp_path / "r.jsonl"
    write(
        path,
        [
            {
                "key": request_key(chat("hi")),
                "text": "hello",
                "model": "gpt-x",
                "prompt_tokens": 3,
                "completion_tokens": 1,
            }
        ],
    )
    backend = build_backend({"backend": "replay", "model": "gpt-x", "recording": str(path)})
    assert queue_for({"backend": "replay", "model": "m", "recording": str(path)}) is None
    hit, miss = backend.complete_many([chat("hi"), chat("bye")])
    assert isinstance(hit, LLMResponse) and hit.text == "hello"
    assert (hit.prompt_tokens, hit.completion_tokens) == (3, 1)
    assert hit.model == REPLAY_PREFIX + "gpt-x"
    assert isinstance(miss, LLMError) and not miss.retryable
    assert "no recorded reply" in str(miss) and "r.jsonl" in str(miss)


def test_replay_stops_sending_when_asked(tmp_path):
    path = tmp_path / "r.jsonl"
    write(path, [])
    backend = build_backend({"backend": "replay", "model": "m", "recording": str(path)})
    got = list(backend.complete_iter([chat("a"), chat("b")], should_stop=lambda: True))
    assert got == []


@pytest.mark.parametrize(
    "line,needle",
    [
        ("not json", "line 2: not JSON"),
        ("[1]", "line 2: a record must be a JSON object"),
        ('{"text": "x"}', "line 2: field 'key'"),
        ('{"key": "k"}', "line 2: field 'text'"),
        ('{"key": "k", "text": "x", "prompt_tokens": -1}', "line 2: field 'prompt_tokens'"),
    ],
)
def test_a_bad_recording_names_the_file_and_line(tmp_path, line, needle):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"key": "a", "text": "ok"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=needle) as exc:
        read_recording(path)
    assert "bad.jsonl" in str(exc.value)


def test_config_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="'recording'"):
        build_backend({"backend": "replay", "model": "m"})
    with pytest.raises(ValueError, match="does not exist"):
        build_backend({"backend": "replay", "model": "m", "recording": str(tmp_path / "no")})
    with pytest.raises(ValueError, match="'inner'"):
        build_backend({"backend": "record", "recording": str(tmp_path / "r.jsonl")})


def test_record_then_replay_over_real_http(llm_server, llm_backend_config, tmp_path):
    llm_server.responder = lambda req: {"text": "reply to " + req.prompt_text, "prompt_tokens": 5}
    path = tmp_path / "rec" / "replies.jsonl"
    recorder = build_backend(
        {"backend": "record", "recording": str(path), "inner": llm_backend_config}
    )
    requests = [chat(f"question {i}") for i in range(5)]
    live = recorder.complete_many(requests)
    recorder.close()
    assert len(llm_server.requests) == 5
    assert len(read_recording(path)) == 5
    replay = build_backend({"backend": "replay", "model": "test-model", "recording": str(path)})
    again = replay.complete_many(list(reversed(requests)))
    assert [r.text for r in again] == [r.text for r in reversed(live)]
    assert len(llm_server.requests) == 5  # nothing sent
