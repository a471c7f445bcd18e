"""The home dashboard's Mine card (:mod:`core.dashboard`): batches, those under way, documents
and the yield of kept procedures, in one query."""

from __future__ import annotations

from django.urls import reverse

from core.dashboard import Card, counts
from core.formatting import fmt_percent
from core.roles import is_admin, is_researcher
from core.runs.models import ACTIVE_STATUSES
from mining.models import MiningBatch, MiningDocument


def mine_card(*, user) -> Card | None:
    if not is_researcher(user):
        return None
    row = counts(
        batches=MiningBatch.objects.all(),
        running=MiningBatch.objects.filter(status__in=ACTIVE_STATUSES),
        documents=MiningDocument.objects.all(),
        kept=MiningDocument.objects.filter(outcome=MiningDocument.Outcome.KEPT),
    )
    card = Card(
        key="mine",
        title="Mine",
        blurb="Extract procedures from web documents (How2Mine, six stages).",
        counts=[(str(row["batches"]), "batches"), (str(row["documents"]), "documents")],
        running=row["running"],
        link=reverse("mining:batch_list"),
        link_label="Mining batches",
    )
    if row["documents"]:
        card.figure = fmt_percent(row["kept"] / row["documents"])
        card.figure_label = f"yield: {row['kept']} procedures kept of {row['documents']} documents"
    else:
        card.empty_reason = "no document has been mined yet"
        if is_admin(user):  # starting a batch is an admin's; researchers read
            card.action, card.action_label = reverse("mining:batch_new"), "Start a mining batch"
        else:
            card.action_label = "An admin starts one from the Mining page"
    return card
