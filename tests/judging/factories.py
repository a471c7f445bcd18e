"""Builders for the judging tests: judges, judge-run data, judged runs, judgment records,
scorer-pack metrics and the comparison scenarios, through the real models and services. Plain
functions, options keyword-only, as in every tests/*/factories.py."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from annotation.models import StudyItem
from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic
from benchmarks.topics import topic_name
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
from judging.services.items import item_content_hash
from judging.services.judges import judge_create
from tests.annotation.factories import A_FAILURE, make_annotation, make_generations, make_study

# an OpenAI-compatible judge on a server (the local test server); presets: FAIL_FAST for the
# runs that count requests (four at a time, a short timeout, one retry), PRICED for the API and
# console tests (four at a time, with prices)
SERVER_JUDGE = {"backend": "openai", "model": "m"}
FAIL_FAST = {"concurrency": 4, "timeout_s": 5, "max_retries": 1}
PRICED = {
    "concurrency": 4,
    "price_input_per_mtok": Decimal("1"),
    "price_output_per_mtok": Decimal("4"),
}
# a judge that never calls a server (compared, distilled, analysed from stored judgments)
OFFLINE_JUDGE = {"model": "teacher-model", "decoding": {"temperature": 1.0}}


def make_judge(*, name: str = "judge", base_url: str | None = None, preset=None, **fields) -> Judge:
    """A judge through the real service (``judge_create``). With ``base_url``: an
    OpenAI-compatible judge on that server (``SERVER_JUDGE``); without: one that calls nothing
    (``OFFLINE_JUDGE``). ``preset`` (a dict such as ``FAIL_FAST``) and then ``fields`` override."""
    defaults = OFFLINE_JUDGE if base_url is None else {**SERVER_JUDGE, "base_url": base_url}
    return judge_create(name=name, **{**defaults, **(preset or {}), **fields})


def make_data(
    *,
    n: int = 10,
    generators=("gen-a",),
    dataset: str = "bench",
    bad_every: int = 0,
    garble_every: int = 0,
    topics=("food-dining", "health"),
) -> dict:
    """``n`` procedures of one dataset (topics in turn) and a generation of each by every
    generator; a generation's step 2 says BAD every ``bad_every`` items and its step 3 GARBLE
    every ``garble_every`` (see :func:`tests.judging.support.judge_responder`)."""
    ds = Dataset.objects.create(name=dataset)

    # transactional tests truncate the topics the migration seeded: bring back those we use
    topic_objs = [
        Topic.objects.get_or_create(slug=s, defaults={"name": topic_name(s)})[0] for s in topics
    ]
    procs = Procedure.objects.bulk_create(
        [
            Procedure(
                dataset=ds,
                source_example_id=f"ex-{i:05d}",
                topic=topic_objs[i % len(topic_objs)],
                goal=f"Goal number {i}",
                resources=["r"],
                steps=[f"Ref step {k} of {i}" for k in range(1, 5)],
            )
            for i in range(n)
        ]
    )
    gens = []
    out = {"dataset": ds, "procedures": procs, "generators": []}
    for gname in generators:
        g = Generator.objects.create(name=gname, model=gname)
        out["generators"].append(g)
        for i, p in enumerate(procs):
            steps = [f"{gname} step {k} for {i}" for k in range(1, 5)]
            if bad_every and i % bad_every == 0:
                steps[1] += " BAD"
            if garble_every and i % garble_every == 1:
                steps[2] += " GARBLE"
            gens.append(
                Generation(procedure=p, generator=g, predicted_steps=steps, token_count=10 + i)
            )
    Generation.objects.bulk_create(gens)
    out["generations"] = list(Generation.objects.filter(procedure__dataset=ds).order_by("id"))
    return out


def judged_run(
    judge: Judge,
    generations: list[Generation],
    verdicts: list,
    *,
    cost: str = "0",
    seconds: float = 0.0,
    latency_s: float = 0.0,
) -> JudgeRun:
    """A finished run of ``judge`` over ``generations``; ``verdicts[i]``: True (has_failure),
    False (no_failure), None (parse failed) or "skip" (not judged)."""
    now = timezone.now()
    run = JudgeRun.objects.create(
        judge=judge,
        status=JudgeRun.Status.DONE,
        n_total=len(generations),
        cost=Decimal(cost),
        started_at=now - timedelta(seconds=seconds),
        finished_at=now,
    )
    for g, v in zip(generations, verdicts, strict=True):
        if v == "skip":
            continue
        h = item_content_hash(g)
        failures = (
            [
                {
                    "failure": f"Step 2 of {g.procedure.source_example_id} omits the filter.",
                    "L1_steps": [2],
                    "L2_steps": [2],
                }
            ]
            if v
            else []
        )
        judgment, _ = Judgment.objects.get_or_create(
            judge_key=judge.judge_id,
            content_hash=h,
            defaults={
                "judge": judge,
                "source_example_id": g.procedure.source_example_id,
                "reasoning": f"{judge.name} read {g.procedure.source_example_id}.",
                "critical_failures": failures,
                "has_failure": bool(v),
                "n_failures": len(failures),
                "parse_failed": v is None,
                "raw_output": "not json" if v is None else "{}",
                "latency_s": latency_s,
            },
        )
        JudgeRunItem.objects.create(run=run, generation=g, content_hash=h, judgment=judgment)
    return run


def record(sid, failures=(), parse_failed=False, **over):
    """A judgment record as the reference implementation writes it (``over`` replaces fields)."""
    rec = {
        "schema_version": "how2bench.judgment.v1",
        "judge_id": "abc",
        "source_example_id": sid,
        "judge": {"backend": "deluge", "provider": "openai", "model": "gpt-4.1"},
        "reasoning": "r",
        "critical_failures": [{"failure": f, "L1_steps": [1], "L2_steps": [2]} for f in failures],
        "has_failure": bool(failures) or parse_failed,
        "n_failures": len(failures),
        "parse_failed": parse_failed,
    }
    rec.update(over)
    return rec


def write(tmp_path, records, name="j.jsonl"):
    """The records (dicts, or lines as they are) as a JSONL file in ``tmp_path``; its path."""
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return str(path)


def set_metric(generation: Generation, value, pack="scirecipe", metric="score"):
    """Store ``value`` as the generation's ``metric`` of scorer pack ``pack``."""
    generation.pack_scores = {pack: {"run": 1, "metrics": {metric: value}, "breakdown": {}}}
    generation.save(update_fields=["pack_scores"])


def comparison_scenario() -> dict:
    """A study of 6 items labelled by 3 annotators, and judges A, B (and C, judging nothing).

    Human majority per item: T T T F F (tie); judge A: T T F F F F; judge B: T F F F T parse-failed.
    """
    study = make_study(n_items=6)
    items = list(
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR).order_by(
            "position", "id"
        )
    )
    human = [(1, 1, 0), (1, 1, 1), (1, 0, 1), (0, 0, 0), (0, 0, 1), (1, 0)]
    for item, labels in zip(items, human, strict=True):
        for k, v in enumerate(labels):
            make_annotation(
                item=item,
                annotator=f"P{k}",
                has_failure=bool(v),
                failures=A_FAILURE if v else [],
                active_ms=900,
                wall_ms=1000,
            )
    gens = [i.generation for i in items]
    judge_a = make_judge(name="judge-a", model="gpt-5")
    judge_b = make_judge(name="judge-b", model="how2judge-8b", price_input_per_mtok="1")
    judge_c = make_judge(name="judge-c", model="unused")
    run_a = judged_run(
        judge_a, gens, [True, True, False, False, False, False], cost="0.25", seconds=30
    )
    run_b = judged_run(
        judge_b, gens, [True, False, False, False, True, None], cost="0.05", seconds=10
    )
    return {
        "study": study,
        "items": items,
        "gens": gens,
        "judges": (judge_a, judge_b, judge_c),
        "runs": (run_a, run_b),
    }


def ranking_scenario() -> dict:
    """Three generators over the same 4 procedures, judged by two judges that rank them
    g1 > g2 > g3 (judge X) and g1 > g3 > g2 (judge Y)."""
    base = make_generations(4, prefix="rank")
    gens = {"g1": [], "g2": [], "g3": []}
    for name, out in gens.items():
        gen = Generator.objects.create(name=f"rank-{name}")
        for g in base:
            out.append(
                Generation.objects.create(
                    procedure=g.procedure,
                    generator=gen,
                    predicted_steps=[
                        f"{name} step {s} for {g.procedure.source_example_id}" for s in range(1, 5)
                    ],
                )
            )
    x = make_judge(name="judge-x", model="model-x")
    y = make_judge(name="judge-y", model="model-y")
    verdicts_x = {
        "g1": [False, False, False, True],
        "g2": [False, False, True, True],
        "g3": [True, True, True, False],
    }
    verdicts_y = {
        "g1": [False, False, False, False],
        "g2": [True, True, True, True],
        "g3": [False, True, True, True],
    }
    for name, generations in gens.items():
        judged_run(x, generations, verdicts_x[name])
        judged_run(y, generations, verdicts_y[name])
    return {"judges": (x, y), "gens": gens}


def judged(llm_server, *, n: int, dataset: str = "bench", name: str = "lb-judge") -> Judge:
    """A judge whose run over ``n`` fresh generations is done (on the local LLM server), with
    prices, for the leaderboard tests."""
    from judging.services import runs as services
    from tests.judging.support import judge_responder, work_chunk

    llm_server.responder = judge_responder
    data = make_data(n=n, bad_every=3, dataset=dataset, generators=(f"gen-{dataset}",))
    judge = make_judge(
        name=name,
        base_url=llm_server.base_url,
        price_input_per_mtok=Decimal("1"),
        price_output_per_mtok=Decimal("1"),
    )
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    assert work_chunk(run).status == "done"
    return judge
