"""The home dashboard's Mine card (:mod:`core.dashboard`): batches, those under way, documents
and the yield of the latest finished batch, named."""

from __future__ import annotations

from django.db.models import Case, Exists, OuterRef, When
from django.urls import reverse

from core.dashboard import Card, count_of, counts
from core.formatting import fmt_percent
from core.roles import is_admin, is_researcher
from core.runs.models import ACTIVE_STATUSES, RunStatus
from mining.models import MiningBatch, MiningDocument


def shown_batch() -> MiningBatch | None:
    """The batch whose yield the card shows, with every count of the card (one query): the
    latest finished batch with documents, else the latest batch with documents (a test batch
    under way does not move a finished figure)."""
    own = MiningDocument.objects.filter(batch=OuterRef("pk"))
    return (
        MiningBatch.objects.filter(Exists(own))
        .annotate(
            n_documents=count_of(own),
            n_kept=count_of(own.filter(outcome=MiningDocument.Outcome.KEPT)),
            n_batches=count_of(MiningBatch.objects.all()),
            n_running=count_of(MiningBatch.objects.filter(status__in=ACTIVE_STATUSES)),
            n_all_documents=count_of(MiningDocument.objects.all()),
        )
        .order_by(Case(When(status=RunStatus.DONE, then=0), default=1), "-created_at", "-id")
        .only("pk", "name", "status")
        .first()
    )


def mine_card(*, user) -> Card | None:
    if not is_researcher(user):
        return None
    batch = shown_batch()
    if batch is not None:
        row = {
            "batches": batch.n_batches,
            "running": batch.n_running,
            "documents": batch.n_all_documents,
        }
    else:
        row = counts(
            batches=MiningBatch.objects.all(),
            running=MiningBatch.objects.filter(status__in=ACTIVE_STATUSES),
            documents=MiningDocument.objects.all(),
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
    if batch is not None:
        state = "finished" if batch.status == RunStatus.DONE else batch.status
        card.figure = fmt_percent(batch.n_kept / batch.n_documents)
        card.figure_label = (
            f"yield of batch “{batch.name}” (#{batch.pk}, {state}): {batch.n_kept} procedures "
            f"kept of {batch.n_documents} documents"
        )
    else:
        card.empty_reason = "no document has been mined yet"
        if is_admin(user):  # starting a batch is an admin's; researchers read
            card.action, card.action_label = reverse("mining:batch_new"), "Start a mining batch"
        else:
            card.action_label = "An admin starts one from the Mining page"
    return card
