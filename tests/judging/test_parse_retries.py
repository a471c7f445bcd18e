"""Parse profiles in judge runs against the local OpenAI-compatible server: the reference's
retries (3 calls, the stricter suffix for API judges), what is not retried, exclusion from
How2Score, and a later run asking again what an earlier one could not parse."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter

import pytest

from judging.models import Judge, JudgeRunItem, Judgment
from judging.parsing import RETRY_SUFFIX
from judging.selectors import judgments as selectors
from judging.services import runs as services
from tests.judging.factories import FAIL_FAST, make_data, make_judge
from tests.judging.support import work_chunk

pytestmark = pytest.mark.django_db(transaction=True)

GOOD = json.dumps({"reasoning": "ok", "critical_failures": []})
FENCED = f"```json\n{GOOD}\n```"
_GOAL = re.compile(r"\nGoal:\n(.*?)\n")
REFERENCE_JUDGE = {**FAIL_FAST, "model": "judge-model", "structured_output": False}


class Script:
    """Replies per goal: the n-th call for a goal gets ``replies[goal][n]`` (the last one
    again once they run out); counts the calls per goal."""

    def __init__(self, default, **by_index):
        self.default = default
        self.by_index = by_index  # "g<i>" -> list of replies for "Goal number <i>"
        self.calls: Counter = Counter()
        self.prompts: dict[str, list[str]] = {}
        self.lock = threading.Lock()

    def __call__(self, req) -> str:
        goal = _GOAL.search(req.prompt_text).group(1)
        key = "g" + goal.rsplit(" ", 1)[1]
        with self.lock:
            n = self.calls[key]
            self.calls[key] += 1
            self.prompts.setdefault(key, []).append(req.prompt_text)
        replies = self.by_index.get(key, self.default)
        return replies[min(n, len(replies) - 1)]


def run_all(judge, data):
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    assert work_chunk(run).status == "done"
    run.refresh_from_db()
    return run


def judgment_of(run, i):
    item = JudgeRunItem.objects.select_related("judgment").get(
        run=run, generation__procedure__goal=f"Goal number {i}"
    )
    return item.judgment


def test_reference_retries_twice_with_the_stricter_suffix(llm_server):
    script = Script(
        [GOOD],
        g1=["not json", FENCED, GOOD],  # parses on the third call
        g2=["not json"],  # never parses: 3 calls, then stored as parse-failed
        g3=["{}"],  # a parse failure that is not retried
        g4=[json.dumps({"critical_failures": [{"failure": "x", "L1_steps": ["step 1"]}]})],
        g5=["[1, 2]", json.dumps({"critical_failures": [{"failure": "f", "L2_steps": ["2"]}]})],
    )
    llm_server.responder = script
    data = make_data(n=6, topics=("food-dining",))
    run = run_all(
        make_judge(name="ref-judge", base_url=llm_server.base_url, preset=REFERENCE_JUDGE), data
    )

    assert dict(script.calls) == {"g0": 1, "g1": 3, "g2": 3, "g3": 1, "g4": 1, "g5": 2}
    # the first call is the plain prompt; each retry appends the stricter reminder once
    first, *retries = script.prompts["g1"]
    assert first.endswith("Return only valid json.") and not first.endswith(RETRY_SUFFIX)
    assert all(p == first + RETRY_SUFFIX for p in retries)

    j = {i: judgment_of(run, i) for i in range(6)}
    assert [j[i].n_calls for i in range(6)] == [1, 3, 3, 1, 1, 2]
    assert not j[1].parse_failed and not j[1].has_failure
    assert j[2].parse_failed and j[2].has_failure and j[2].raw_output == "not json"
    assert j[3].parse_failed and j[3].n_failures == 0
    assert j[4].parse_failed and "int() refuses 'step 1'" in j[4].parse_error
    assert not j[5].parse_failed and j[5].critical_failures == [
        {"failure": "f", "L1_steps": [], "L2_steps": [2]}
    ]
    assert run.n_parse_failed == 3 and run.n_done == 6 and run.status == "done"
    # parse failures are excluded from How2Score and counted apart
    (gen,) = selectors.how2score_report(judge=run.judge)["generators"]
    assert (
        gen["n_parse_failed"] == 3
        and gen["n_examples"] == 3
        and gen["how2score"] == pytest.approx(2 / 3)
    )


def test_tokens_of_retried_calls_are_kept(llm_server):
    llm_server.responder = Script([GOOD], g0=["nope", "nope", GOOD])
    data = make_data(n=1, topics=("food-dining",))
    run = run_all(
        make_judge(name="ref-judge", base_url=llm_server.base_url, preset=REFERENCE_JUDGE), data
    )
    j = judgment_of(run, 0)
    assert j.n_calls == 3
    assert run.prompt_tokens == j.prompt_tokens and run.completion_tokens == j.completion_tokens
    single = len(llm_server.requests[0].body["messages"][0]["content"]) // 4
    assert j.prompt_tokens > 2 * single  # three prompts' worth, not one


def test_lenient_profile_recovers_what_reference_retries(llm_server):
    llm_server.responder = Script([FENCED])
    data = make_data(n=3, topics=("food-dining",))
    lenient = run_all(
        make_judge(
            name="lenient",
            base_url=llm_server.base_url,
            preset=REFERENCE_JUDGE,
            parse_profile="lenient",
        ),
        data,
    )
    assert lenient.n_parse_failed == 0 and len(llm_server.requests) == 3
    reference = run_all(
        make_judge(name="reference", base_url=llm_server.base_url, preset=REFERENCE_JUDGE), data
    )
    assert reference.n_parse_failed == 3 and len(llm_server.requests) == 3 + 9


def test_profile_is_part_of_the_judge_hash_and_validated(llm_server):
    a = make_judge(name="a", base_url=llm_server.base_url, preset=REFERENCE_JUDGE)
    b = make_judge(
        name="b", base_url=llm_server.base_url, preset=REFERENCE_JUDGE, parse_profile="lenient"
    )
    assert a.parse_profile == "reference"
    assert a.identity_config()["parse_profile"] == "reference"
    assert a.judge_id != b.judge_id
    with pytest.raises(Exception, match="parse_profile"):
        make_judge(
            name="c", base_url=llm_server.base_url, preset=REFERENCE_JUDGE, parse_profile="strict"
        )
    assert not Judge.objects.filter(name="c").exists()


def test_defaults_are_temperature_0_and_4096_tokens(llm_server):
    llm_server.responder = Script([GOOD])
    data = make_data(n=1, topics=("food-dining",))
    run_all(
        make_judge(
            name="ref-judge", base_url=llm_server.base_url, preset=REFERENCE_JUDGE, decoding={}
        ),
        data,
    )
    body = llm_server.requests[0].body
    assert body["temperature"] == 0 and body["max_tokens"] == 4096


def test_a_later_run_asks_again_what_an_earlier_run_could_not_parse(llm_server):
    script = Script([GOOD], g0=["garbage"])
    llm_server.responder = script
    data = make_data(n=2, topics=("food-dining",))
    judge = make_judge(name="ref-judge", base_url=llm_server.base_url, preset=REFERENCE_JUDGE)
    first = run_all(judge, data)
    assert first.n_parse_failed == 1 and script.calls["g0"] == 3
    failed = judgment_of(first, 0)
    assert failed.parse_failed

    script.by_index["g0"] = [GOOD]
    second = run_all(judge, data)
    assert script.calls["g0"] == 4 and script.calls["g1"] == 1  # g1 reused, g0 asked again
    assert second.n_reused == 1 and second.n_parse_failed == 0
    again = judgment_of(second, 0)
    assert again.pk == failed.pk and not again.parse_failed and again.n_calls == 1
    assert Judgment.objects.filter(judge=judge).count() == 2


@pytest.mark.parametrize(("backend", "suffixed"), [("openai", True), ("vllm", False)])
def test_only_api_judges_get_the_stricter_suffix_on_a_retry(backend, suffixed):
    from types import SimpleNamespace

    from judging import prompting
    from judging.services.items import item_input, retry_suffix_for

    judge = Judge(name="x", backend=backend, model="m")
    generation = SimpleNamespace(
        procedure=SimpleNamespace(goal="G", steps=["a"], source_example_id="e"),
        predicted_steps=["b"],
    )
    template = prompting.load_template("judge_h3")

    def prompt(tries):
        return item_input(
            item_id=1,
            content_hash="h",
            generation=generation,
            template=template,
            parse_tries=tries,
            retry_suffix=retry_suffix_for(judge),
        ).prompt

    assert retry_suffix_for(judge) is suffixed
    assert not prompt(0).endswith(RETRY_SUFFIX)
    assert prompt(1) == prompt(0) + (RETRY_SUFFIX if suffixed else "")
    assert prompt(2) == prompt(1)  # the suffix once, not once per retry
