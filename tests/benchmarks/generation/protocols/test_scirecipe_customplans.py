"""SciRecipe and CustomPlans protocol runs: SciRecipe's structured steps stored and the raw
answer scored by the pack; CustomPlans' customized procedures ready for the pack and for a
CustomPlans study."""

from __future__ import annotations

import pytest

from annotation.selectors.forms import item_view, study_form
from benchmarks.models import Generation
from tests.annotation.factories import make_form_study
from tests.benchmarks.factories import make_generation_run
from tests.benchmarks.generation.conftest import drive
from tests.benchmarks.generation.protocols.support import imported, scoring
from tests.benchmarks.packs.test_protocols import SCIRECIPE_GOLD, SCIRECIPE_K

pytestmark = pytest.mark.django_db


def test_scirecipe_run_stores_structured_steps_and_the_pack_scores_the_raw_answer(
    llm_server, generator
):
    items = [
        {
            "id": "k",
            "query": "Fix the wash (k).",
            "gold": SCIRECIPE_GOLD,
            "action_library": ["centrifuge", "remove", "resuspend", "filter"],
        },
        {"id": "bad", "query": "Something else (bad).", "gold": SCIRECIPE_GOLD},
    ]
    llm_server.responder = lambda req: SCIRECIPE_K if "(k)" in req.prompt_text else "Just wash."
    dataset = imported("scirecipe", items, "sr")
    run = drive(make_generation_run(llm_server, dataset, generator, protocol="scirecipe"))
    assert run.status == "done" and run.scores["n_answer"] == 1
    g = Generation.objects.get(procedure__source_example_id="k")
    assert g.payload["protocol"]["steps"][2] == {
        "action": "resuspend",
        "objects": ["nuclei pellet"],
        "parameters": ["1 ml", "wash solution 2"],
    }
    assert g.predicted_steps[0] == "Centrifuge the nuclei suspension at 500xg for 5 min at 4 °C."
    _, scores = scoring("scirecipe", dataset, generator)
    assert scores["k"]["metrics"]["format_gate"] == 1 and scores["k"]["metrics"]["step_m"] == 1
    assert scores["bad"]["metrics"]["format_gate"] == 0 and scores["bad"]["metrics"]["score"] == 0


def test_customplans_run_gives_full_procedures_for_the_study_and_the_pack(llm_server, generator):
    item = {
        "id": "bread",
        "goal": "Bake bread",
        "hint": "I only have a stovetop",
        "steps": ["Mix dough.", "Let it rise.", "Bake in the oven."],
    }

    def responder(req):
        assert req.body["messages"][2]["content"] == (
            "My situation is that I only have a stovetop. List the new set of steps."
        )
        assert (req.body["max_tokens"], req.body["frequency_penalty"]) == (500, 0.1)
        return (
            "Steps:\n1. Mix dough.\n2. Let it rise.\n3. Cook it in a covered pan on the stovetop."
        )

    llm_server.responder = responder
    dataset = imported("customplans", [item], "cp")
    run = drive(make_generation_run(llm_server, dataset, generator, protocol="customplans"))
    assert run.status == "done", run.error
    g = Generation.objects.get(run=run)
    assert g.predicted_steps == [
        "Mix dough.",
        "Let it rise.",
        "Cook it in a covered pan on the stovetop.",
    ]
    assert g.payload["edits"] == [
        {"op": "replace", "index": 3, "text": "Cook it in a covered pan on the stovetop."}
    ]
    _, scores = scoring("customplans", dataset, generator)
    assert scores["bread"]["metrics"]["n_steps_out"] == 3
    assert scores["bread"]["breakdown"]["customized_steps"] == g.predicted_steps
    # ready for the CustomPlans form type's study: the item shows the customized procedure and
    # takes its hint from the imported item
    study = make_form_study("customplans", specs=[{"generation_id": g.pk}])
    view = item_view(item=study.items.get(), participant_id=None, form=study_form(study=study))
    assert (view.goal, list(view.l2), view.context["hint"]) == (
        "Bake bread",
        g.predicted_steps,
        "I only have a stovetop",
    )
