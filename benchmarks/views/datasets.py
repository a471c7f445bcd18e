"""Pages: the dataset browser for researchers and admins.

Views are thin: reads come from :mod:`benchmarks.selectors`. The procedure table answers htmx
requests (``HX-Request``) with just the table partial, and plain requests with the whole page,
so filtering works without JavaScript too.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from benchmarks.selectors import catalog as selectors
from benchmarks.tokens import count_steps_tokens
from core.access import researcher_required

PROCEDURES_PER_PAGE = 25


@researcher_required
def dataset_list(request: HttpRequest) -> HttpResponse:
    return render(request, "benchmarks/dataset_list.html", {"datasets": selectors.dataset_list()})


@researcher_required
def dataset_detail(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = selectors.dataset_get(pk=pk)
    topic = request.GET.get("topic", "").strip()
    search = request.GET.get("q", "").strip()[:200]
    procedures = selectors.procedure_list(
        dataset=dataset, topic=topic or None, search=search or None
    )
    page = Paginator(procedures, PROCEDURES_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "dataset": dataset,
        "topics": selectors.dataset_topic_counts(dataset=dataset),
        "page": page,
        "topic": topic,
        "q": search,
        "filtered": bool(topic or search),
        "query": urlencode({k: v for k, v in (("topic", topic), ("q", search)) if v}),
    }
    if request.headers.get("HX-Request") and not request.headers.get("HX-Boosted"):
        response = render(request, "benchmarks/_procedure_table.html", context)
    else:
        response = render(request, "benchmarks/dataset_detail.html", context)
    patch_vary_headers(response, ["HX-Request"])
    return response


@researcher_required
def procedure_detail(request: HttpRequest, pk: int) -> HttpResponse:
    procedure = selectors.procedure_get(pk=pk)
    generations = list(procedure.generations.all())
    columns = [
        {
            "generation": g,
            "steps": g.predicted_steps or [],
            "tokens": g.token_count
            if g.token_count is not None
            else count_steps_tokens(g.predicted_steps or []),
        }
        for g in generations
    ]
    prev_id, next_id = selectors.procedure_neighbours(procedure=procedure)
    context = {
        "procedure": procedure,
        "reference_tokens": count_steps_tokens(procedure.steps or []),
        "columns": columns,
        "prev_id": prev_id,
        "next_id": next_id,
    }
    return render(request, "benchmarks/procedure_detail.html", context)
