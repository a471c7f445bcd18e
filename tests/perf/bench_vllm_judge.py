"""vLLM offline judge throughput: the whole app against bare ``LLM.generate``.

The app: a judge run of N items with a ``vllm`` judge (completions endpoint, guided JSON on the
bounded H.3 schema, greedy) launched through the service, a real Celery worker on a gpu queue
(concurrency 1, engine loaded and warmed by a first small run), PostgreSQL and Redis, until the
run is ``done`` with every judgment stored. Bare: a separate Python process with the same
environment loads the same engine and calls ``LLM.generate`` once on the same N prompts with the
same sampling parameters (warmed the same way). Reported: judgments/s of each and the ratio
app / bare (target >= 0.9).

Run: ``.venv/bin/python tests/perf/bench_vllm_judge.py [--n 400] [--model DIR]`` (default: the tiny
random model of the tests, made on the spot; any local model directory works, e.g. on a GPU).
Environment: ``DATABASE_URL`` (a scratch database ``bench_h2r_vllm`` is created and dropped),
``CELERY_BROKER_URL``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
os.environ["TEST_DATABASE_NAME"] = "bench_h2r_vllm"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from tests.support.tiny_model import VLLM_ENV, make_tiny_model, vllm_env  # noqa: E402

vllm_env()

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

ENGINE = {
    "vllm_dtype": "float32",
    "vllm_max_model_len": 8192,
    "vllm_enforce_eager": True,
    "vllm_structured_outputs_config": {"backend": "guidance", "disable_any_whitespace": True},
}
DECODING = {"temperature": 0.0, "max_tokens": 400, "json_max_string_length": 120}
DECODING["json_max_items"] = 2

BARE = r"""
import json, sys, time
import vllm
from vllm.sampling_params import StructuredOutputsParams
spec = json.load(open(sys.argv[1]))
llm = vllm.LLM(model=spec["model"], **spec["engine"])
params = vllm.SamplingParams(temperature=0.0, max_tokens=spec["max_tokens"],
                             structured_outputs=StructuredOutputsParams(json=spec["schema"]))
llm.generate(spec["warm"], params, use_tqdm=False)
t0 = time.perf_counter()
outs = llm.generate(spec["prompts"], params, use_tqdm=False)
elapsed = time.perf_counter() - t0
print(json.dumps({"elapsed_s": elapsed, "n": len(outs),
                  "completion_tokens": sum(len(o.outputs[0].token_ids) for o in outs)}))
"""


def make_items(n: int, dataset: str) -> None:
    from tests.judging.factories import make_data

    make_data(n=n, dataset=dataset, generators=(f"{dataset}-gen",), bad_every=3)


def app_run(model: str, n: int, tmp: Path) -> dict:
    from django.conf import settings

    from judging.models import JudgeRun, Judgment
    from judging.services import judges as judge_services
    from judging.services import runs as services
    from tests.support.worker import start_worker

    queue = f"gpu-bench-{uuid.uuid4().hex[:8]}"
    settings.CELERY_GPU_QUEUE = queue
    judge = judge_services.judge_create(
        name="bench-vllm",
        backend="vllm",
        model=model,
        endpoint="completions",
        decoding={**ENGINE, **DECODING},
    )
    env = {**VLLM_ENV, "CELERY_GPU_QUEUE": queue}
    worker = start_worker(tmp, queue=queue, concurrency=1, extra_env=env)
    try:

        def finish(run):
            while True:
                run.refresh_from_db()
                if not run.is_active:
                    return run
                time.sleep(0.25)

        warm = finish(services.judge_run_create(judge=judge, selection={"dataset": _ds("warm")}))
        assert warm.status == JudgeRun.Status.DONE, warm.error
        t0 = time.perf_counter()
        run = services.judge_run_create(judge=judge, selection={"dataset": _ds("bench")})
        run = finish(run)
        elapsed = time.perf_counter() - t0
    finally:
        worker.stop()
    assert run.status == JudgeRun.Status.DONE and run.n_done == n, (run.status, run.error)
    assert Judgment.objects.filter(judge=judge).count() == n + 16
    return {
        "elapsed_s": elapsed,
        "run_s": (run.finished_at - run.started_at).total_seconds(),
        "parse_failed": run.n_parse_failed,
        "completion_tokens": run.completion_tokens,
    }


def _ds(name: str) -> int:
    from benchmarks.models import Dataset

    return Dataset.objects.get(name=name).pk


def bare_run(model: str, tmp: Path) -> dict:
    from benchmarks.llm.schema import bounded_schema
    from judging import prompting
    from judging.models import JudgeRunItem
    from judging.services.items import item_input

    def prompts(dataset: str) -> list[str]:
        template = prompting.load_template("judge_h3")
        items = JudgeRunItem.objects.filter(
            run__judge__name="bench-vllm", generation__procedure__dataset__name=dataset
        ).select_related("generation__procedure")
        seen, out = set(), []
        for i in items.order_by("id"):
            if i.content_hash not in seen:
                seen.add(i.content_hash)
                out.append(
                    item_input(
                        item_id=i.id,
                        content_hash=i.content_hash,
                        generation=i.generation,
                        template=template,
                    ).prompt
                )
        return out

    engine = {k.removeprefix("vllm_"): v for k, v in ENGINE.items()}
    spec = {
        "model": model,
        "engine": engine,
        "max_tokens": DECODING["max_tokens"],
        "schema": bounded_schema(prompting.JUDGE_SCHEMA, max_string_length=120, max_items=2),
        "warm": prompts("warm"),
        "prompts": prompts("bench"),
    }
    path = tmp / "bare.json"
    path.write_text(json.dumps(spec))
    out = subprocess.run(
        [sys.executable, "-c", BARE, str(path)],
        env={**os.environ, **VLLM_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--model", default=None, help="a local model directory")
    args = parser.parse_args()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            model = args.model or str(make_tiny_model(tmp / "tiny-llama"))
            make_items(16, "warm")
            make_items(args.n, "bench")
            app = app_run(model, args.n, tmp)
            bare = bare_run(model, tmp)
        app_rate, bare_rate = args.n / app["elapsed_s"], bare["n"] / bare["elapsed_s"]
        ratio = app_rate / bare_rate
        print(
            f"app: {args.n} judgments launch -> done in {app['elapsed_s']:.2f}s = {app_rate:.1f}/s "
            f"(run itself {app['run_s']:.2f}s; parse failures {app['parse_failed']}; "
            f"{app['completion_tokens']} completion tokens)"
        )
        print(
            f"bare LLM.generate: {bare['n']} prompts in {bare['elapsed_s']:.2f}s = "
            f"{bare_rate:.1f}/s ({bare['completion_tokens']} completion tokens)"
        )
        print(
            f"ratio app / bare: {ratio:.3f} (target >= 0.9) {'PASS' if ratio >= 0.9 else 'FAIL'}; "
            f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
        )
        return 0 if ratio >= 0.9 else 1
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
