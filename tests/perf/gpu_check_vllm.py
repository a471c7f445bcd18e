"""GPU check of the vLLM offline backend, for a machine with a GPU and the ``gpu`` extra
(``pip install -e '.[gpu]'``; it runs on the CPU build too, slowly). Nothing is downloaded: with
no ``--model`` the tests' tiny random Llama and byte-level BPE tokenizer are made on the spot
(``tests/support/tiny_model.py``); ``--model DIR`` checks a real local model (e.g. How2Judge).

Run: ``.venv/bin/python tests/perf/gpu_check_vllm.py [--model DIR] [--keep DIR] [--no-e2e]
[--n 200] [--max-model-len 8192]``

It checks, printing PASS/FAIL per line (exit status 1 on any FAIL):
1. ``VLLMOfflineBackend`` loads the model through ``vllm.LLM`` and answers a batch of
   completions (text, prompt and completion token counts, finish reasons);
2. structured output with ``StructuredOutputsParams(json=schema)``: every reply to an
   enum-constrained schema is valid JSON holding an allowed value;
3. the H.3 judge schema (bounded) on the chat endpoint: every reply parses with
   ``judging.parsing`` without a parse failure;
4. (unless ``--no-e2e``) a judge run of ``--n`` items end to end through ``judging.services`` on
   a scratch SQLite database with a Judge of backend ``vllm``: every item gets a judgment and a
   second run reuses them; prints **judgments/s** of the run (the GPU figure for docs/performance/index.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

RESULTS: list[bool] = []


def check(name: str, ok: bool, detail: str = "") -> None:
    RESULTS.append(bool(ok))
    print(f"{'PASS' if ok else 'FAIL'}  {name}{': ' + detail if detail else ''}", flush=True)


def make_tiny_model(folder: Path) -> Path:
    from tests.support.tiny_model import make_tiny_model as make

    return make(folder)


ARGS: argparse.Namespace | None = None


def engine_options() -> dict:
    return {
        "vllm_max_model_len": ARGS.max_model_len if ARGS else 8192,
        "vllm_gpu_memory_utilization": ARGS.gpu_memory_utilization if ARGS else 0.3,
        "vllm_enforce_eager": True,
        "vllm_seed": 0,
        # llguidance without free whitespace: holds even for random weights
        "vllm_structured_outputs_config": {"backend": "guidance", "disable_any_whitespace": True},
    }


def backend_checks(model_dir: Path) -> None:
    from benchmarks.llm.base import LLMError, LLMRequest, LLMResponse
    from benchmarks.llm.registry import build_backend
    from benchmarks.llm.schema import bounded_schema
    from judging.parsing import parse_judge_output
    from judging.prompting import JUDGE_SCHEMA, load_template, render_judge_prompt

    cfg = {"backend": "vllm", "model": str(model_dir), **engine_options()}
    backend = build_backend({**cfg, "endpoint": "completions"})
    t0 = time.perf_counter()
    out = backend.complete_many([LLMRequest(prompt=f"Step {i}:", max_tokens=16) for i in range(8)])
    ok = all(
        isinstance(r, LLMResponse) and r.completion_tokens > 0 and r.prompt_tokens > 0 for r in out
    )
    check(
        "1. vllm.LLM loads the model and answers a batch of 8 completions",
        ok,
        f"{time.perf_counter() - t0:.1f}s; " + (repr(out[0])[:160] if out else "no output"),
    )

    schema = {
        "type": "object",
        "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}},
        "required": ["verdict"],
        "additionalProperties": False,
    }
    out = backend.complete_many(
        [LLMRequest(prompt=f"Answer {i}: ", max_tokens=32, json_schema=schema) for i in range(8)]
    )
    values = []
    for r in out:
        try:
            values.append(json.loads(r.text)["verdict"] if isinstance(r, LLMResponse) else None)
        except (ValueError, KeyError, TypeError):
            values.append(None)
    check(
        "2. StructuredOutputsParams(json=...) constrains random weights to the schema",
        all(v in ("yes", "no") for v in values),
        f"verdicts {values}",
    )

    chat = build_backend({**cfg, "endpoint": "chat"})
    template = load_template("judge_h3")
    prompts = [
        render_judge_prompt(
            template=template,
            goal=f"Bake bread {i}",
            reference_steps=["Mix.", "Bake."],
            steps=["Mix.", "Burn."],
        )
        for i in range(4)
    ]
    out = chat.complete_many(
        [
            LLMRequest(
                messages=[{"role": "user", "content": p}],
                max_tokens=512,
                json_schema=bounded_schema(JUDGE_SCHEMA, max_string_length=400, max_items=4),
            )
            for p in prompts
        ]
    )
    starts = all(isinstance(r, LLMResponse) and r.text.lstrip().startswith("{") for r in out)
    finished = [r for r in out if isinstance(r, LLMResponse) and r.finish_reason == "stop"]
    parsed_ok = len(finished) == len(out) and all(
        not parse_judge_output(r.text, n_l1=2, n_l2=2).parse_failed for r in finished
    )
    errors = [str(r) for r in out if isinstance(r, LLMError)]
    check(
        "3. bounded H.3 schema on the chat endpoint: every reply finishes and parses",
        starts and parsed_ok and not errors,
        f"{len(finished)}/{len(out)} finished within 512 tokens; errors {errors[:1]}",
    )


def e2e_check(model_dir: Path, folder: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{folder / 'gpu_check.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from benchmarks.models import Dataset, Generation, Generator, Procedure
    from core.runs import engine
    from judging.models import JudgeRun, Judgment
    from judging.services import runs as services
    from judging.services.judges import judge_create

    ds = Dataset.objects.create(name="gpu-check")
    gen = Generator.objects.create(name="gpu-gen")
    n = ARGS.n if ARGS else 6
    for i in range(n):
        p = Procedure.objects.create(
            dataset=ds,
            source_example_id=f"ex-{i}",
            goal=f"Goal {i}",
            steps=["Mix.", "Knead.", "Bake."],
        )
        Generation.objects.create(
            procedure=p, generator=gen, predicted_steps=["Mix.", f"Wait {i}.", "Bake."]
        )
    judge = judge_create(
        name="tiny-vllm",
        backend="vllm",
        model=str(model_dir),
        concurrency=8,
        decoding={
            "max_tokens": 1024,
            "json_max_string_length": 1500,
            "json_max_items": 8,
            **engine_options(),
        },
    )
    run = services.judge_run_create(judge=judge, selection={"dataset": ds.pk}, enqueue=False)
    t0 = time.perf_counter()
    outcome = engine.execute(JudgeRun._meta.label, run.pk, chain=False)
    elapsed = time.perf_counter() - t0
    run.refresh_from_db()
    print(
        f"judge run of {n} items (engine loaded by checks 1-3): {elapsed:.1f}s = {n / elapsed:.1f} "
        f"judgments/s; {run.completion_tokens / elapsed:.0f} completion tokens/s"
    )
    check(
        "4a. judge run with a vllm judge: every item judged (parse failures counted)",
        run.status == JudgeRun.Status.DONE and run.n_done == n and Judgment.objects.count() == n,
        f"outcome {outcome.status}, status {run.status}, done {run.n_done}/{n}, "
        f"parse failed {run.n_parse_failed}, "
        f"tokens {run.prompt_tokens}/{run.completion_tokens}, error {run.error[:200]!r}",
    )
    run2 = services.judge_run_create(judge=judge, selection={"dataset": ds.pk}, enqueue=False)
    engine.execute_inline(run2)
    run2.refresh_from_db()
    check(
        "4b. a second run reuses every judgment",
        run2.n_reused == n and Judgment.objects.count() == n,
        f"reused {run2.n_reused}",
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep the tiny model in this folder"
    )
    parser.add_argument("--no-e2e", action="store_true")
    parser.add_argument("--model", type=Path, default=None, help="a local model directory")
    parser.add_argument("--n", type=int, default=6, help="items of the end-to-end judge run")
    parser.add_argument("--max-model-len", type=int, default=8192)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.3)
    global ARGS
    args = ARGS = parser.parse_args()
    from tests.support.tiny_model import vllm_env

    vllm_env()  # offline; on the CPU build also the in-process engine and a small KV cache
    try:
        import vllm  # noqa: F401
    except ImportError:
        print("vllm is not installed: pip install -e '.[gpu]' on a GPU machine")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        model_dir = args.model or make_tiny_model(folder / "tiny-llama")
        print(f"model: {model_dir}")
        backend_checks(model_dir)
        if not args.no_e2e:
            e2e_check(model_dir, folder)
    print(f"{sum(RESULTS)}/{len(RESULTS)} checks passed")
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
