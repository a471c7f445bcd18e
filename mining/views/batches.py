"""Pages for mining batches. Researchers read; admins start, cancel, resume and promote."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from benchmarks.topics import TOPICS
from core.access import admin_required, researcher_required
from core.errors import validation_text
from core.middleware import text_gate_exempt
from core.polling import Poll, next_poll
from core.roles import is_admin
from core.streaming import jsonl_lines, streaming_download
from mining.forms import BatchForm, PromoteForm
from mining.models import MiningBatch, MiningDocument
from mining.selectors import batches as selectors
from mining.services import batches as services
from mining.services import promotion
from mining.services.kept_uploads import kept_forget
from mining.stages import STAGES


@researcher_required
def batch_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(selectors.batch_list(), 25).get_page(request.GET.get("page"))
    return render(
        request, "mining/batch_list.html", {"page": page, "can_admin": is_admin(request.user)}
    )


@text_gate_exempt  # BatchForm gates every posted value at its field (core.forms)
@admin_required
def batch_new(request: HttpRequest) -> HttpResponse:
    form = BatchForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            batch = services.batch_create(
                name=d.get("name") or "",
                upload=d["file"],
                stages=d["stages"],
                backends=form.backends(),
                options=form.options(),  # steps, column map, per-topic budgets
                created_by=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, validation_text(exc))
        else:
            kept_forget(d.get("kept_file") or "")  # the batch has its own copy now
            messages.success(
                request, f"Batch {batch.pk} created; its status and progress are below."
            )
            return redirect(batch)
    if request.method == "POST":  # refused: the file sent is kept for the next try
        form.keep_upload()
    return render(request, "mining/batch_new.html", {"form": form})


def _poll(request: HttpRequest, batch: MiningBatch) -> Poll:
    mark = f"{batch.status}:{batch.n_done}:{batch.n_failed}:{int(batch.ingested)}"
    return next_poll(waited=request.GET.get("wait"), seen=request.GET.get("seen"), mark=mark)


def _detail_context(request, batch) -> dict:
    return {
        "batch": batch,
        "yields": selectors.batch_yields(batch=batch),
        "usage": selectors.batch_usage(batch=batch),
        "can_admin": is_admin(request.user),
        "poll": _poll(request, batch),
    }


@researcher_required
def batch_detail(request: HttpRequest, pk: int) -> HttpResponse:
    batch = selectors.batch_get(pk=pk)
    ctx = _detail_context(request, batch)
    ctx["promote_form"] = PromoteForm(initial={"dataset_name": f"mined-{batch.pk}"})
    ctx["promotion"] = promotion.promotion_state(batch)
    return render(request, "mining/batch_detail.html", ctx)


@researcher_required
def batch_progress(request: HttpRequest, pk: int) -> HttpResponse:
    """The progress card htmx polls (with back-off): the batch's row only, one query. The poll
    that finds the batch ended answers the whole live part instead (yields and usage, read
    once), swapped in place of it."""
    batch = selectors.batch_get(pk=pk)
    if batch.is_active:
        context = {
            "batch": batch,
            "can_admin": is_admin(request.user),
            "poll": _poll(request, batch),
        }
        return render(request, "mining/_batch_progress.html", context)
    response = render(request, "mining/_batch_live.html", _detail_context(request, batch))
    response["HX-Retarget"] = "#batch-live"
    response["HX-Reswap"] = "outerHTML"
    return response


def _batch_change(
    request: HttpRequest, pk: int, change: Callable[[MiningBatch], object], done: str
) -> HttpResponse:
    """Apply one service call to the batch, then back to its page with what happened."""
    batch = selectors.batch_get(pk=pk)
    try:
        change(batch)
    except ValidationError as exc:
        messages.error(request, validation_text(exc))
    else:
        messages.success(request, done)
    return redirect(batch)


@require_POST
@admin_required
def batch_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    return _batch_change(
        request,
        pk,
        lambda batch: services.batch_cancel(batch=batch),
        "Cancellation requested; the batch stops after its current chunk.",
    )


@require_POST
@admin_required
def batch_resume(request: HttpRequest, pk: int) -> HttpResponse:
    force = request.POST.get("force") == "1"
    return _batch_change(
        request,
        pk,
        lambda batch: services.batch_resume(batch=batch, force=force),
        "Batch resumed; documents already done are kept.",
    )


@text_gate_exempt  # PromoteForm gates every posted value at its field (core.forms)
@require_POST
@admin_required
def batch_promote(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask for a promotion: a worker embeds and samples; the batch page shows its state."""
    batch = selectors.batch_get(pk=pk)
    form = PromoteForm(request.POST)
    if form.is_valid():
        try:
            state = promotion.batch_promote_request(
                batch=batch, user=request.user, **form.cleaned_data
            )
        except ValidationError as exc:
            messages.error(request, validation_text(exc))
        else:
            messages.success(
                request, f"Promotion into {state['dataset']} queued: a worker is doing it."
            )
    else:  # the page again, each refusal at its field and the typed values kept
        ctx = _detail_context(request, batch)
        ctx["promote_form"] = form
        ctx["promotion"] = promotion.promotion_state(batch)
        return render(request, "mining/batch_detail.html", ctx, status=400)
    return redirect(batch)


@researcher_required
def batch_promotion(request: HttpRequest, pk: int) -> HttpResponse:
    """The promotion card htmx polls (with back-off) while a worker promotes: one query."""
    batch = selectors.batch_get(pk=pk)
    state = promotion.promotion_state(batch)
    poll = next_poll(
        waited=request.GET.get("wait"),
        seen=request.GET.get("seen"),
        mark=(state or {}).get("status", ""),
    )
    return render(
        request, "mining/_promotion.html", {"batch": batch, "promotion": state, "poll": poll}
    )


@researcher_required
def batch_documents(request: HttpRequest, pk: int) -> HttpResponse:
    batch = selectors.batch_get(pk=pk)
    outcome = request.GET.get("outcome", "")
    topic = request.GET.get("topic", "")
    stage = request.GET.get("stage", "")
    qs = selectors.document_list(
        batch=batch, outcome=outcome or None, topic=topic or None, stage=stage or None
    )
    page = Paginator(qs, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "mining/batch_documents.html",
        {
            "batch": batch,
            "page": page,
            "outcome": outcome,
            "topic": topic,
            "stage": stage,
            "outcomes": MiningDocument.Outcome.choices,
            "topics": TOPICS,
            "stages": [("input", "Input")] + [(k, f"{n}. {lbl}") for n, k, lbl, _ in STAGES],
        },
    )


@researcher_required
def batch_export(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    batch = selectors.batch_get(pk=pk)
    lines = jsonl_lines(selectors.export_records(batch=batch))
    return streaming_download(lines, filename=f"how2mine-batch-{batch.pk}.jsonl")
