"""Runs the reference CLI (``h2e bench judge --config X``) inside its own virtual environment
for ``bench_peers_judge.py``, pointed at the local OpenAI-compatible test server: the only
changes are made from outside, before the CLI starts — the judge model is registered in
lm-deluge's model registry with the server's address (lm-deluge's documented
``register_model``), and lm-deluge's concurrency (fixed at 225 by the reference's
``DelugeLLMConfig``, not a config key) is set to ``--concurrency``.

Usage (with the peer's python): ``python peers_h2e_launcher.py --base-url URL --model NAME
--concurrency 64 --config CONFIG.yaml``; ``--import-only`` imports what the CLI imports and
exits (the start-up cost, measured apart).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--concurrency", type=int, required=True)
    ap.add_argument("--config", default="")
    ap.add_argument("--import-only", action="store_true")
    args = ap.parse_args()

    from lm_deluge.models import register_model

    register_model(
        id=args.model,
        name=args.model,
        api_base=args.base_url,
        api_key_env_var="OPENAI_API_KEY",
        api_spec="openai",
        supports_json=True,
        supports_logprobs=False,
        supports_responses=False,
        input_cost=0.0,
        output_cost=0.0,
    )
    from how2everything.bench import pipeline
    from how2everything.cli import main as h2e_main

    base = pipeline.DelugeLLMConfig

    def with_concurrency(**kw):
        return dataclasses.replace(base(**kw), max_concurrent_requests=args.concurrency)

    pipeline.DelugeLLMConfig = with_concurrency
    if args.import_only:
        from how2everything.bench import aggregate, judge  # noqa: F401 - what bench judge loads

        return 0
    return h2e_main(["bench", "judge", "--config", args.config])


if __name__ == "__main__":
    sys.exit(main())
