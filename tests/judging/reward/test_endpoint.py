"""``POST /api/reward/`` end to end: token auth, the real judge through the real ``openai``
client against the local test server, judgments cached by content in PostgreSQL, per-item
errors, and concurrent calls batched into the judge backend."""

from __future__ import annotations

import json
import threading

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from judging.models import Judgment
from judging.reward import batcher as batchers
from tests.judging.factories import make_judge
from tests.judging.support import judge_responder
from tests.support.llm_fixtures import llm_server  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/reward/"
REF = ["Boil the water in a kettle.", "Pour the water over the coffee grounds."]
GOOD = "1. Boil the water in a kettle.\n2. Pour the water over the coffee grounds."
BAD = "1. Boil the water in a kettle.\n2. Pour BAD water over the coffee grounds."


@pytest.fixture
def setup(llm_server, make_user):  # noqa: F811
    llm_server.responder = judge_responder
    judge = make_judge(name="reward-judge", base_url=llm_server.base_url)
    user = make_user("trainer", role="researcher")
    token = Token.objects.create(user=user)
    yield {"server": llm_server, "judge": judge, "auth": f"Token {token.key}"}
    batchers.close_all()


def post(auth, body, client=None):
    client = client or Client()
    return client.post(
        URL, data=json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=auth
    )


def inline(completion, **extra):
    return {"goal": "Make pour-over coffee", "resources": ["kettle"], "reference_steps": REF,
            "completion": completion, **extra}  # fmt: skip


def test_rewards_with_components_and_cache(setup):
    body = {"judge": "reward-judge", "items": [inline(GOOD, id="g"), inline(BAD, id="b")]}
    first = post(setup["auth"], body)
    assert first.status_code == 200, first.content
    data = first.json()
    assert data["n_items"] == 2 and data["n_judged"] == 2 and data["n_cached"] == 0
    good, bad = data["results"]
    assert good["id"] == "g" and good["components"] == {
        "how2score": 1,
        "step_format": 1,
        "length": 1.0,
    }
    assert good["reward"] == 3.0 and good["verdict"]["has_failure"] is False
    assert bad["components"]["how2score"] == 0 and bad["verdict"]["n_failures"] == 1
    assert bad["reward"] == pytest.approx(1 + bad["components"]["length"])
    assert len(setup["server"].requests) == 2
    assert Judgment.objects.filter(judge=setup["judge"]).count() == 2
    again = post(setup["auth"], {**body, "weights": {"length": 0}}).json()
    assert again["n_cached"] == 2 and again["n_judged"] == 0
    assert again["results"][0]["verdict"]["cached"] and again["results"][0]["reward"] == 2.0
    assert len(setup["server"].requests) == 2  # nothing sent again


def test_stored_examples_and_duplicate_content(setup):
    from tests.judging.factories import make_data

    make_data(n=3)
    from benchmarks.models import Procedure

    proc = Procedure.objects.order_by("id").first()
    completion = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(proc.steps))
    body = {
        "judge": "reward-judge",
        "items": [
            {"example_id": proc.source_example_id, "completion": completion},
            {"example_id": proc.source_example_id, "dataset": "bench@v1", "completion": completion},
        ],
    }
    data = post(setup["auth"], body).json()
    assert data["n_judged"] == 1 and len(setup["server"].requests) == 1  # one content, one call
    assert [r["components"]["how2score"] for r in data["results"]] == [1, 1]
    assert data["results"][0]["n_reference_steps"] == len(proc.steps)


def test_malformed_batches_are_refused_per_item(setup):
    body = {
        "judge": "reward-judge",
        "items": [inline(GOOD), {"completion": ""}, {"example_id": "nope", "completion": GOOD}],
    }
    response = post(setup["auth"], body)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert {e["index"] for e in errors} == {1}
    unknown = post(setup["auth"], {"judge": "reward-judge", "items": [body["items"][2]]})
    assert unknown.status_code == 400
    assert unknown.json()["errors"][0] == {
        "index": 0,
        "field": "items[0].example_id",
        "message": "no example 'nope'",
    }
    assert post(setup["auth"], {"judge": "ghost", "items": [inline(GOOD)]}).status_code == 400
    bad_json = Client().post(
        URL, data="{", content_type="application/json", HTTP_AUTHORIZATION=setup["auth"]
    )
    assert bad_json.status_code == 400 and "not JSON" in bad_json.json()["errors"][0]["message"]
    assert not setup["server"].requests  # nothing was judged


def test_auth(setup, make_user):
    assert Client().post(URL, data="{}", content_type="application/json").status_code == 401
    assert post("Token wrong", {}).status_code == 401
    annotator = make_user("ann", role="annotator")
    token = Token.objects.create(user=annotator)
    assert post(f"Token {token.key}", {}).status_code == 403
    assert Client().get(URL, HTTP_AUTHORIZATION=setup["auth"]).status_code == 405


def test_judge_errors_are_per_item(setup):
    setup["server"].responder = lambda req: "GARBLE not json"
    data = post(setup["auth"], {"judge": "reward-judge", "items": [inline(GOOD)]}).json()
    (result,) = data["results"]
    assert result["reward"] is None and result["components"]["how2score"] is None
    assert "did not parse" in result["error"] and result["components"]["step_format"] == 1


def test_concurrent_calls_are_batched(setup):
    """Eight trainers post 4 completions each at once while the judge answers after 200 ms:
    their 32 requests reach the backend in fewer batches than calls."""
    setup["server"].latency_s = 0.2
    batchers.close_all()
    responses = []

    def call(k):
        items = [inline(GOOD.replace("kettle", f"kettle {k}-{i}")) for i in range(4)]
        responses.append(post(setup["auth"], {"judge": "reward-judge", "items": items}))

    threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status_code for r in responses] == [200] * 8
    (batcher,) = batchers._BATCHERS.values()
    assert batcher.stats.n_requests == 32
    assert batcher.stats.n_batches < 8 and batcher.stats.largest_batch > 4
