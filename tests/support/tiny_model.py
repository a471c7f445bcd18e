"""A tiny random Llama with a byte-level BPE tokenizer and a ChatML chat template, made on
the spot (no download, well under a second): what the vLLM tests run on.

``make_tiny_model(folder)`` writes a Hugging Face model directory (config, safetensors weights
of ~3 MB, tokenizer files) that ``vllm.LLM(model=folder)`` and the vLLM OpenAI server load.
The pytest fixture ``tiny_model_dir`` makes one per test session.

The weights are random: replies are noise, so only guided decoding (structured output) can
make them valid JSON. The tokenizer is trained on the H.3 judge prompt so a judge prompt of
~13,000 characters is a few thousand tokens; ``MAX_MODEL_LEN`` leaves room for it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

VOCAB_SIZE = 2000
MAX_MODEL_LEN = 8192

# What vLLM needs on these machines (CPU build, in-process engine, nothing from the network).
VLLM_ENV = {
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "VLLM_HOST_IP": "127.0.0.1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
    "TOKENIZERS_PARALLELISM": "false",
}

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and not enable_thinking %}<think>\n\n</think>\n\n"
    "{% endif %}{% endif %}"
)


def vllm_env() -> None:
    """Set the environment vLLM needs here (in this process; workers inherit it)."""
    os.environ.update(VLLM_ENV)


def _corpus() -> list[str]:
    from judging.prompting import load_template

    return [
        load_template("judge_h3"),
        '{"reasoning": "The steps are fine.", "critical_failures": []}',
        '{"failure": "missing step", "L1_steps": [1, 2], "L2_steps": [3]}',
        "1. Mix the flour.\n2. Knead the dough.\n3. Bake for 30 minutes.",
    ] * 4


def make_tiny_model(folder: Path, *, seed: int = 0) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<pad>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(), trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|endoftext|>",
        eos_token="<|im_end|>",
        pad_token="<pad>",
        additional_special_tokens=["<|im_start|>"],
    )
    fast.chat_template = CHATML
    fast.model_max_length = MAX_MODEL_LEN
    fast.save_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=MAX_MODEL_LEN,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    LlamaForCausalLM(config).to(torch.float32).save_pretrained(folder, safe_serialization=True)
    return folder


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """One tiny model per test session (and the vLLM environment set for this process)."""
    vllm_env()
    return make_tiny_model(tmp_path_factory.mktemp("tiny-model") / "tiny-llama")
