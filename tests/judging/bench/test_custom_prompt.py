"""``bench`` with a judge prompt file the project does not ship (as the reference accepts any):
the text is stored as the next version of the H.3 prompt, the judge names it, the requests
carry it, and the same file again reuses that version; the shipped text stays version 1."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from judging import prompting
from judging.bench.config import load_suite_config
from judging.models import Judge, PromptVersion

CUSTOM = (
    "CUSTOM RUBRIC. Decide whether L2 has critical failures.\n"
    "Goal: {goal}\nL1:\n{reference_steps}\nL2:\n{steps}\n"
    'Answer as JSON {{"reasoning": ..., "critical_failures": [...]}}.\n'
)


def _suite(tmp_path: Path, base_url: str, prompt: Path) -> Path:
    inputs = tmp_path / "mini.jsonl"
    inputs.write_text(
        "".join(
            json.dumps(
                {
                    "source_example_id": f"c-{i}",
                    "topic": "Health",
                    "goal": f"Goal c-{i}.",
                    "steps": ["a.", "b."],
                    "resources": [],
                }
            )
            + "\n"
            for i in range(3)
        )
    )
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"out_root: {tmp_path / 'out'}\n"
        f"inputs: {{path: {inputs}}}\n"
        f"prompts: {{judge: {prompt}}}\n"
        f"models:\n  - {{model: g, prompt_style: inst, backend: openai, base_url: '{base_url}'}}\n"
        f"evaluator: {{model: j, backend: openai, base_url: '{base_url}'}}\n"
    )
    return suite


def _bench(suite: Path) -> str:
    out = StringIO()
    call_command("bench", "run", "--config", str(suite), "--inline", stdout=out)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_a_custom_judge_prompt_file_runs_as_a_new_prompt_version(tmp_path, llm_server):
    llm_server.responder = lambda req: (
        '{"reasoning": "ok", "critical_failures": []}'
        if "critical failures" in req.prompt_text
        else "1. First.\n2. Second."
    )
    prompt = tmp_path / "my_judge.txt"
    prompt.write_text(CUSTOM, encoding="utf-8")
    suite = _suite(tmp_path, llm_server.base_url, prompt)
    text = _bench(suite)
    assert "how2score: 100.0%  (n=3)" in text

    judge_requests = [r for r in llm_server.requests if "CUSTOM RUBRIC" in r.prompt_text]
    assert len(judge_requests) == 3
    assert "Goal: Goal c-0." in " ".join(r.prompt_text for r in judge_requests)
    assert all(r.prompt_text.endswith("Return only valid json.") for r in judge_requests)

    versions = list(PromptVersion.objects.filter(name="judge_h3").order_by("number"))
    assert [v.number for v in versions] == [1, 2]
    assert versions[0].text == prompting.load_template("judge_h3")  # the shipped one stays 1
    assert versions[1].text == CUSTOM and f"bench: {prompt}" in versions[1].note
    judge = Judge.objects.get(name__startswith="bench:")
    assert judge.prompt_version == versions[1] and judge.prompt_template == "judge_h3"
    assert judge.judge_id == prompting.canonical_judge_id(
        config=judge.identity_config(), prompt_text=CUSTOM
    )
    config = load_suite_config(suite)
    manifest = tmp_path / "out" / f"g_{config.generator_id(config.models[0])}" / "judgments"
    judge_manifest = next(manifest.glob("*/judge_manifest.json"))
    info = json.loads(judge_manifest.read_text())
    assert info["how2review"]["prompt_version"] == 2
    assert info["judge_prompt_sha256"] == prompting.text_sha256(CUSTOM)

    # the same file again: the same version and judge, nothing asked again
    n_requests = len(llm_server.requests)
    _bench(suite)
    assert len(llm_server.requests) == n_requests
    assert PromptVersion.objects.filter(name="judge_h3").count() == 2

    # an edited file: the next version, another judge (its id hashes the new text)
    prompt.write_text(CUSTOM.replace("CUSTOM RUBRIC", "CUSTOM RUBRIC v3"), encoding="utf-8")
    _bench(suite)
    assert [v.number for v in PromptVersion.objects.filter(name="judge_h3")] == [1, 2, 3]
    assert Judge.objects.filter(name__startswith="bench:").count() == 2
    assert len(llm_server.requests) == n_requests + 3  # the new judge judges the 3 again
