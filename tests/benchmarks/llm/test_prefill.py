"""Prefilling an answer (the LongProc segment analysis): which backends can continue a partial
assistant message, what an OpenAI-compatible vLLM server is sent (through the ``openai`` client
to the local test server), the refusal naming a backend that cannot, and the analysis and its
command end to end against the test server."""

from __future__ import annotations

import itertools
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from benchmarks.llm.base import CONTINUE_FINAL_MESSAGE, LLMRequest, PrefillUnsupported
from benchmarks.llm.registry import build_backend
from benchmarks.services.longproc_segments import segment_analysis, segment_requests

CITIES = ["Austin", "Boston", "Chicago", "Denver", "El Paso", "Fresno", "Gary", "Houston", "Irvine"]
ROUTE = [f"From {a}, take a train to {b}." for a, b in itertools.pairwise(CITIES)]
CONTEXT = "\n".join(
    f"{a} is a lively city. You can travel from {a} to {b} by train."
    for a, b in itertools.pairwise(CITIES)
)
RECORD = {
    "id": "pt-1",
    "level": "0.5k",
    "context": CONTEXT,
    "src_city": "Austin",
    "dst_city": "Irvine",
    "gold": "<Route>\n" + "\n".join(ROUTE) + "\n</Route>",  # 8 hops: 2 a segment
}


def test_which_backends_can_prefill(llm_backend_config, tmp_path):
    request = LLMRequest(messages=[{"role": "user", "content": "Q"}], max_tokens=5)
    plain = build_backend(llm_backend_config)
    refusal = plain.prefill_refusal()
    assert "'openai'" in refusal and llm_backend_config["base_url"] in refusal
    assert "continue_final_message" in refusal
    with pytest.raises(PrefillUnsupported, match="cannot prefill the answer on its chat"):
        plain.prefilled(request, "<Route>\n")
    served = build_backend({**llm_backend_config, "prefill": True})
    assert served.prefill_refusal() is None
    chat = served.prefilled(request, "<Route>\n")
    assert chat.messages[-1] == {"role": "assistant", "content": "<Route>\n"}
    assert chat.extra == CONTINUE_FINAL_MESSAGE and request.extra == {}
    completions = build_backend({**llm_backend_config, "endpoint": "completions"})
    raw = completions.prefilled(request, "<Route>\n")
    assert (raw.prompt, raw.messages) == ("Q<Route>\n", None)
    batch = build_backend({**llm_backend_config, "mode": "batch", "prefill": True})
    assert "cannot prefill the answer in batch mode" in batch.prefill_refusal()
    vllm = build_backend({"backend": "vllm", "model": str(tmp_path)})  # no engine loaded
    assert vllm.prefill_refusal() is None
    assert vllm.prefilled(request, "x").extra["continue_final_message"] is True
    recording = tmp_path / "r.jsonl"
    recording.write_text("")
    assert (
        build_backend(
            {"backend": "replay", "model": "m", "recording": str(recording)}
        ).prefill_refusal()
        is None
    )
    recorder = build_backend(
        {"backend": "record", "recording": str(recording), "inner": llm_backend_config}
    )
    assert "'openai'" in recorder.prefill_refusal()  # the inner backend decides


def _continuation(req) -> str:
    """A server that knows the route: right for segments 1 and 2, wrong from segment 3 on."""
    messages = req.body["messages"]
    if messages[-1]["role"] != "assistant":
        return "Thinking.\n<Route>\n" + "\n".join(ROUTE) + "\n</Route>"
    done = messages[-1]["content"].count("\n") - 1  # the opener's line, then one a hop
    if done < 4:
        return "\n".join(ROUTE[done:]) + "\n</Route>"
    return "From Nowhere, take a boat to Mars.\n</Route>"


def test_segment_analysis_sends_the_gold_prefix_as_vllm_expects(llm_server, llm_backend_config):
    llm_server.responder = _continuation
    result = segment_analysis(
        backend={**llm_backend_config, "prefill": True},
        task="path-traversal",
        records=[RECORD, {**RECORD, "id": "pt-2"}, {"id": "bad", "gold": "one line"}],
    )
    assert result.refused == [
        {"id": "bad", "reason": "field 'gold': has 1 entries; 4 segments need at least 4"}
    ]
    bodies = sorted(
        (r.body for r in llm_server.requests), key=lambda b: len(b["messages"][-1]["content"])
    )
    assert len(bodies) == 8
    firsts = [b for b in bodies if b["messages"][-1]["role"] == "user"]
    assert len(firsts) == 2 and all("continue_final_message" not in b for b in firsts)
    prefilled = [b for b in bodies if b["messages"][-1]["role"] == "assistant"]
    for body in prefilled:  # the extra_body keys reached the server, the gold prefix last
        assert body["continue_final_message"] is True and body["add_generation_prompt"] is False
        assert body["messages"][0]["role"] == "user" and "Irvine" in body["messages"][0]["content"]
        assert body["max_tokens"] == 1500  # 0.5k + the 1K buffer
    prefixes = sorted({b["messages"][-1]["content"] for b in prefilled}, key=len)
    assert prefixes == ["<Route>\n" + "".join(f"{line}\n" for line in ROUTE[:n]) for n in (2, 4, 6)]
    assert [r["mean"] for r in result.table] == [1.0, 1.0, 0.0, 0.0]
    assert [r["n"] for r in result.table] == [2, 2, 2, 2]
    row = next(r for r in result.rows if r["id"] == "pt-1" and r["segment"] == 3)
    assert row["first_divergence"] == 1 and row["output"].startswith("From Nowhere")


def test_a_backend_that_cannot_prefill_is_refused_before_sending(llm_server, llm_backend_config):
    with pytest.raises(ValidationError) as exc:
        segment_analysis(backend=llm_backend_config, task="path-traversal", records=[RECORD])
    assert "'openai'" in exc.value.message_dict["backend"][0]
    with pytest.raises(ValidationError) as exc:
        segment_analysis(
            backend={**llm_backend_config, "prefill": True}, task="countdown", records=[RECORD]
        )
    assert "validator" in exc.value.message_dict["task"][0]
    assert llm_server.requests == []


def test_command_writes_table_json_and_plot(llm_server, llm_backend_config, tmp_path, capsys):
    llm_server.responder = _continuation
    source = tmp_path / "records.jsonl"
    source.write_text(json.dumps(RECORD) + "\n")
    out = tmp_path / "out"
    backend = json.dumps({**llm_backend_config, "prefill": True})
    call_command(
        "longproc_segments", "path-traversal", str(source), "--backend", backend, "--out", str(out)
    )
    table = (out / "segments.csv").read_text().splitlines()
    assert table[0] == "segment,n,mean,ci_low,ci_high,n_failed"
    assert table[1].startswith("1,1,1.0000,") and table[3].startswith("3,1,0.0000,")
    data = json.loads((out / "segments.json").read_text())
    assert data["metric"] == "correct" and len(data["rows"]) == 4
    svg = (out / "segments.svg").read_text()
    assert svg.startswith("<svg") and "Segment 4 (n=1)" in svg
    assert "segment,n,mean" in capsys.readouterr().out
    with pytest.raises(CommandError, match="cannot prefill"):
        call_command(
            "longproc_segments",
            "path-traversal",
            str(source),
            "--backend",
            json.dumps(llm_backend_config),
        )


@pytest.mark.django_db
def test_command_reads_the_items_of_an_imported_dataset(llm_server, llm_backend_config, tmp_path):
    llm_server.responder = _continuation
    source = tmp_path / "items.jsonl"
    source.write_text(json.dumps(RECORD) + "\n")
    call_command("import_pack", "longproc-path-traversal", str(source), "--dataset", "pt@1")
    out = tmp_path / "out"
    backend = json.dumps({**llm_backend_config, "prefill": True})
    call_command(
        "longproc_segments",
        "path-traversal",
        "--dataset",
        "pt@1",
        "--backend",
        backend,
        "--out",
        str(out),
    )
    data = json.loads((out / "segments.json").read_text())
    assert [r["mean"] for r in data["per_segment"]] == [1.0, 1.0, 0.0, 0.0]
    assert {r["id"] for r in data["rows"]} == {"pt-1"} and data["refused"] == []
    with pytest.raises(CommandError, match="either FILE or --dataset"):
        call_command("longproc_segments", "path-traversal", "--backend", backend)


def test_requests_for_tom_and_tsv_records_and_a_record_without_level(tmp_path):
    backend = build_backend({"backend": "vllm", "model": str(tmp_path)})  # no engine loaded
    steps = [f"- Step {k}: (Anne location changed) {{Anne location: room {k}}}" for k in (1, 2, 3)]
    tom = {"story": "Anne walks.", "question": "Where is Anne?", "level": "2k"}
    tom["gold"] = "\n".join([*steps, "Final Answer: room 3"])
    _, requests = segment_requests(backend=backend, task="tom-tracking", record=tom)
    assert [prefix for prefix, _ in requests] == [
        "",
        steps[0] + "\n",
        steps[0] + "\n" + steps[1] + "\n",
        "".join(s + "\n" for s in steps),
    ]
    assert "Where is Anne?" in requests[3][1].messages[0]["content"]
    assert requests[3][1].max_tokens == 3000  # 2k + the 1K buffer
    tsv = {
        "html": "<table><tr><td>A</td></tr></table>",
        "task_topic": "books",
        "target_information": "(1) Title",
        "tsv_header": "Title",
        "gold": "Title\nA\nB\nC\nD\nE",
        "level": "0.5k",
    }
    _, requests = segment_requests(backend=backend, task="html-to-tsv", record=tsv)
    assert requests[2][0] == "```tsv\nTitle\nA\nB\nC\n"  # 5 rows: 2, 1, 1, 1
    assert requests[2][1].messages[-1] == {"role": "assistant", "content": requests[2][0]}
    result = segment_analysis(
        backend=backend, task="tom-tracking", records=[{**tom, "id": "t", "level": None}]
    )
    assert result.refused == [
        {
            "id": "t",
            "reason": "field 'level': is required (0.5k, 2k or 8k) on the record or as --level",
        }
    ]
    assert result.rows == [] and [r["n"] for r in result.table] == [0, 0, 0, 0]


def test_the_level_option_serves_records_without_one(tmp_path):
    backend = build_backend({"backend": "vllm", "model": str(tmp_path)})
    record = {**RECORD, "level": None}
    _, requests = segment_requests(
        backend=backend, task="path-traversal", record=record, level="2k"
    )
    assert requests[0][1].max_tokens == 3000
    _, requests = segment_requests(
        backend=backend, task="path-traversal", record=RECORD, level="2k"
    )
    assert requests[0][1].max_tokens == 1500  # the record's own 0.5k wins
