"""Form types beyond critical failure in a study's next round (every item field copied) and in
the quality page's gold agreement (the form type's known-answer rule)."""

from __future__ import annotations

import pytest

from annotation.services.rounds import ITEM_FIELDS, round_create
from tests.annotation.factories import make_form_study, make_pair_generations, write_answers

pytestmark = pytest.mark.django_db


def _item_rows(study):
    return sorted(
        tuple(getattr(i, f) if f != "context" else sorted(i.context.items()) for f in ITEM_FIELDS)
        for i in study.items.all()
    )


def test_next_round_of_a_pairwise_study_copies_pairs_known_answers_and_context(make_user):
    firsts, seconds = make_pair_generations(3)
    study = make_form_study(
        "pairwise",
        specs=[
            {"generation_id": firsts[0].pk, "generation_b_id": seconds[0].pk},
            {
                "generation_id": firsts[1].pk,
                "generation_b_id": seconds[1].pk,
                "context": {"hint": "use a gas stove"},
            },
            {
                "generation_id": firsts[2].pk,
                "generation_b_id": seconds[2].pk,
                "kind": "gold",
                "expected_label": {"preferred": "second"},
            },
        ],
        items_per_participant=2,
    )
    new = round_create(study=study, user=make_user("round-g", role="researcher"))
    assert new.form_type == "pairwise" and new.pk != study.pk
    assert _item_rows(new) == _item_rows(study)
    gold = new.items.get(kind="gold")
    assert (gold.generation_b_id, gold.expected_label) == (seconds[2].pk, {"preferred": "second"})
    assert new.items.get(generation_id=firsts[1].pk).context == {"hint": "use a gas stove"}
    assert all(i.n_assigned == 0 for i in new.items.all())


def test_quality_figures_of_a_pairwise_study(client, make_user):
    """Regular r0, r1; silent gold g0 (expects second), attention a0 (expects first).
    r0: X first, Y first, Z second; r1: X tie, Y second, Z second.
    Majority of the others: X r0 {first, second} tie → skipped, r1 {second, second} → ✗
    (X said tie): 0/1. Y r0 {first, second} skipped, r1 {tie, second} skipped: 0 compared.
    Z r0 {first, first} ✗, r1 {tie, second} skipped: 0/1.
    Known: X g0 second ✓, a0 first ✓ → 2/2, silent 1/1; Y g0 first ✗, a0 first ✓ → 1/2,
    silent 0/1. With has_failure alone (False for every pairwise answer) all would be right."""
    from django.urls import reverse

    from annotation.selectors.quality import quality_rows

    firsts, seconds = make_pair_generations(4)
    study = make_form_study(
        "pairwise",
        specs=[{"generation_id": firsts[i].pk, "generation_b_id": seconds[i].pk} for i in (0, 1)]
        + [
            {
                "generation_id": firsts[2].pk,
                "generation_b_id": seconds[2].pk,
                "kind": "gold",
                "expected_label": {"preferred": "second"},
            },
            {
                "generation_id": firsts[3].pk,
                "generation_b_id": seconds[3].pk,
                "kind": "attention",
                "expected_label": {"preferred": "first"},
            },
        ],
        items_per_participant=2,
        overlap=3,
    )
    r0, r1 = study.items.filter(kind="regular").order_by("position")
    g0, a0 = study.items.get(kind="gold"), study.items.get(kind="attention")

    def pref(p):
        return {"preferred": p, "shown": "A", "order": "ab", "reason": ""}

    write_answers(
        study,
        "X",
        [(r0, pref("first")), (r1, pref("tie")), (g0, pref("second")), (a0, pref("first"))],
    )
    write_answers(
        study,
        "Y",
        [(r0, pref("first")), (r1, pref("second")), (g0, pref("first")), (a0, pref("first"))],
    )
    write_answers(study, "Z", [(r0, pref("second")), (r1, pref("second"))])
    rows = {r["participant"]: r for r in quality_rows(study=study)}
    got = {
        pid: (
            rows[pid]["majority_agreement"],
            rows[pid]["majority_compared"],
            rows[pid]["gold_agreement"],
            rows[pid]["gold_total"],
            rows[pid]["silent_gold_agreement"],
        )
        for pid in ("X", "Y", "Z")
    }
    assert got == {
        "X": (0.0, 1, 1.0, 2, 1.0),
        "Y": (None, 0, 0.5, 2, 0.0),
        "Z": (0.0, 1, None, 0, None),
    }
    client.force_login(make_user("q-pair", role="researcher"))
    page = client.get(reverse("annotation:quality", args=[study.pk]))
    assert page.status_code == 200 and 'data-participant="Y"' in page.content.decode()


def test_quality_gold_of_a_rating_study_uses_the_expected_ratings():
    from annotation.selectors.quality import quality_rows
    from tests.annotation.factories import make_generations

    gens = make_generations(3)
    study = make_form_study(
        "rating",
        {"preset": "scirecipe"},
        specs=[
            {"generation_id": gens[0].pk},
            {
                "generation_id": gens[1].pk,
                "kind": "gold",
                "expected_label": {"ratings": {"overall": 0}},
            },
            {
                "generation_id": gens[2].pk,
                "kind": "gold",
                "expected_label": {"ratings": {"order": 4}},
            },
        ],
        items_per_participant=1,
    )
    dims = ("granularity", "order", "semantic", "overall")
    r0 = study.items.get(kind="regular")
    g1, g2 = study.items.filter(kind="gold").order_by("generation_id")

    def rating(**over):
        return {"ratings": {d: over.get(d, 2) for d in dims}}

    write_answers(study, "U", [(r0, rating()), (g1, rating(overall=0)), (g2, rating(order=3))])
    write_answers(study, "V", [(r0, rating()), (g1, rating(overall=0)), (g2, rating(order=4))])
    rows = {r["participant"]: r for r in quality_rows(study=study)}
    assert (rows["U"]["gold_agreement"], rows["U"]["gold_total"]) == (0.5, 2)
    assert (rows["V"]["silent_gold_agreement"], rows["V"]["silent_gold_total"]) == (1.0, 2)
    assert (rows["U"]["majority_agreement"], rows["U"]["majority_compared"]) == (1.0, 1)
