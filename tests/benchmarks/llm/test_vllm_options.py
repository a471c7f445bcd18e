"""vLLM options (pure): checks naming the key, the reference's ``vllm:`` section, the judge's
validation and hash, and the How2Judge preset in the console."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from benchmarks.llm import vllm_options
from benchmarks.llm.schema import bounded_schema
from judging.models import Judge
from judging.presets import HOW2JUDGE_HUB_ID, preset_fields
from judging.prompting import JUDGE_SCHEMA
from judging.services import judges as judge_services
from judging.services.items import judge_request


def test_errors_name_the_key_and_accept_good_values():
    good = {
        "vllm_revision": "stage1-step566000",
        "vllm_dtype": "bfloat16",
        "vllm_max_model_len": 16384,
        "vllm_gpu_memory_utilization": 0.85,
        "vllm_tensor_parallel_size": 2,
        "vllm_quantization": "fp8",
        "vllm_enforce_eager": False,
        "vllm_seed": 0,
        "temperature": 0.6,
        "top_p": 0.95,
        "top_k": 20,
        "min_p": 0.0,
        "max_tokens": 4096,
        "stop": ["\n\n"],
        "seed": 1,
        "chat_template_kwargs": {"enable_thinking": False},
    }
    assert vllm_options.errors(good) == []
    bad = {
        "vllm_dtype": "fp4",
        "vllm_gpu_memory_utilization": 1.5,
        "vllm_tensor_parallel_size": 0,
        "vllm_enforce_eager": "yes",
        "top_k": -3,
        "min_p": 2,
        "stop": [1],
        "chat_template_kwargs": "enable_thinking",
        "vllm_max_modellen": 4,
    }
    problems = "\n".join(vllm_options.errors(bad, prefix="decoding."))
    for key in (
        "decoding.vllm_dtype: must be one of",
        "decoding.vllm_gpu_memory_utilization: must be ≤ 1.0",
        "decoding.vllm_tensor_parallel_size: must be ≥ 1",
        "decoding.vllm_enforce_eager: must be true or false",
        "decoding.top_k: must be ≥ 1",
        "decoding.min_p: must be ≤ 1.0",
        "decoding.stop: must be a string or a list of strings",
        "decoding.chat_template_kwargs: must be a JSON object",
        "decoding.vllm_max_modellen: unknown engine option",
    ):
        assert key in problems, (key, problems)
    # an HTTP backend is not checked for engine options
    assert vllm_options.errors({"vllm_dtype": "fp4"}, engine=False) == []


def test_the_reference_vllm_section_maps_onto_flat_keys(tmp_path):
    template = tmp_path / "t.jinja"
    template.write_text("{{ messages[0]['content'] }}")
    entry = {
        "backend": "vllm",
        "model": "/models/qwen3-8b",
        "temperature": 0.6,
        "max_new_tokens": 2048,
        "vllm": {
            "mode": "chat",
            "engine_kwargs": {"revision": "main", "tensor_parallel_size": 4},
            "sampling_kwargs": {"top_p": 0.95, "top_k": 20, "min_p": 0.0, "stop": ["x"]},
            "chat_template_kwargs": {"enable_thinking": False},
            "chat_template_path": "t.jinja",
            "hf_token_env": "HF_TOKEN",
        },
    }
    out = vllm_options.from_reference(entry, base_dir=tmp_path)
    assert out["endpoint"] == "chat" and out["structured_output"] is True
    assert out["decoding"] == {
        "temperature": 0.6,
        "max_tokens": 2048,
        "top_p": 0.95,
        "top_k": 20,
        "min_p": 0.0,
        "vllm_revision": "main",
        "vllm_tensor_parallel_size": 4,
        "chat_template_kwargs": {"enable_thinking": False},
        "chat_template": "{{ messages[0]['content'] }}",
    }  # stop dropped under guided JSON, as the reference does
    assert vllm_options.from_reference({"model": "m"})["endpoint"] == "completions"
    with pytest.raises(ValueError, match=r"vllm\.mode: must be 'generate' or 'chat'"):
        vllm_options.from_reference({"model": "m", "vllm": {"mode": "serve"}})
    with pytest.raises(ValueError, match=r"vllm\.engine_kwargs\.dtype"):
        vllm_options.from_reference({"model": "m", "vllm": {"engine_kwargs": {"dtype": "x"}}})
    with pytest.raises(ValueError, match=r"vllm\.worker: unknown key"):
        vllm_options.from_reference({"model": "m", "vllm": {"worker": 1}})
    # the backend reads the nested section as it is, too
    nested = {"backend": "vllm", "model": "m", "vllm": entry["vllm"]}
    assert vllm_options.engine_kwargs(nested) == {"revision": "main", "tensor_parallel_size": 4}
    assert vllm_options.sampling_defaults({**nested, "top_k": 5})["top_k"] == 5  # flat wins
    assert vllm_options.endpoint_of(nested) == "chat"


def test_bounded_schema_adds_limits_only_where_none():
    schema = bounded_schema(JUDGE_SCHEMA, max_string_length=100, max_items=3)
    assert schema["properties"]["reasoning"]["maxLength"] == 100
    failures = schema["properties"]["critical_failures"]
    assert (
        failures["maxItems"] == 3 and failures["items"]["properties"]["L1_steps"]["maxItems"] == 3
    )
    assert "maxLength" not in JUDGE_SCHEMA["properties"]["reasoning"]  # the original untouched
    assert bounded_schema(JUDGE_SCHEMA) is JUDGE_SCHEMA


@pytest.mark.django_db
def test_judge_options_validated_stored_and_hashed():
    with pytest.raises(ValidationError) as exc:
        judge_services.judge_create(
            name="bad", backend="vllm", model="/m", decoding={"vllm_dtype": "fp4", "top_k": 0.5}
        )
    text = str(exc.value.message_dict["decoding"])
    assert "decoding.vllm_dtype: must be one of" in text and "decoding.top_k" in text
    assert not Judge.objects.filter(name="bad").exists()
    decoding = {"vllm_max_model_len": 8192, "top_k": 20, "min_p": 0.05, "seed": 1}
    a = judge_services.judge_create(name="a", backend="vllm", model="/m", decoding=decoding)
    b = judge_services.judge_create(
        name="b", backend="vllm", model="/m", decoding={**decoding, "vllm_revision": "r2"}
    )
    c = judge_services.judge_create(
        name="c", backend="vllm", model="/m", decoding={**decoding, "min_p": 0.1}
    )
    assert len({a.judge_id, b.judge_id, c.judge_id}) == 3  # engine and sampling in the hash
    assert a.backend_config()["vllm_max_model_len"] == 8192
    request = judge_request(judge=c, prompt="p")
    assert request.extra == {"top_k": 20, "min_p": 0.1, "seed": 1}  # sampling, not engine


@pytest.mark.django_db
def test_how2judge_preset_in_the_console(make_user, settings, tmp_path):
    settings.HOW2JUDGE_MODEL_DIR = str(tmp_path / "how2judge")
    fields = preset_fields("how2judge")
    assert fields["model"] == settings.HOW2JUDGE_MODEL_DIR and fields["backend"] == "vllm"
    assert fields["prompt_template"] == "judge_h3" and fields["endpoint"] == "completions"
    assert fields["decoding"]["chat_template_kwargs"] == {"enable_thinking": False}
    with pytest.raises(ValueError, match="unknown judge preset"):
        preset_fields("gpt-9")
    client = Client()
    client.force_login(make_user("preset-admin", role="admin"))
    listing = client.get("/admin/judging/judge/").content.decode()
    assert "?preset=how2judge" in listing and "How2Judge (preset)" in listing
    assert HOW2JUDGE_HUB_ID in listing
    form = client.get("/admin/judging/judge/add/?preset=how2judge").content.decode()
    assert settings.HOW2JUDGE_MODEL_DIR in form and "enable_thinking" in form
    # saved from the console as prefilled: a valid judge
    judge = judge_services.judge_create(**fields)
    assert judge.backend_config()["model"] == settings.HOW2JUDGE_MODEL_DIR
