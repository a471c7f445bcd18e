"""The codebook versions page (researchers and admins): each version's statistics and the diff
between a version and any earlier one. Thin: the reads are
:mod:`annotation.selectors.codebook_versions`."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.models import CodebookVersion
from annotation.selectors.codebook_versions import codebook_version_diff, codebook_version_stats
from annotation.tasks import enqueue_study_report
from core.access import researcher_required

MAX_NUMBER = 2**31 - 1


def _number(request: HttpRequest, name: str) -> tuple[int | None, str]:
    raw = request.GET.get(name, "").strip()
    if not raw:
        return None, ""
    if not raw.isdigit() or not 0 < int(raw) <= MAX_NUMBER:
        return None, f"{name}: expected a version number (1, 2, …), got {raw[:40]!r}"
    return int(raw), ""


@researcher_required
def codebook_versions(request: HttpRequest) -> HttpResponse:
    rows = codebook_version_stats(enqueue=enqueue_study_report)
    numbers = [r["version"].number for r in rows]
    errors = []
    shown, problem = _number(request, "version")
    errors += [problem] if problem else []
    against, problem = _number(request, "against")
    errors += [problem] if problem else []
    context = {"rows": rows, "numbers": numbers, "diff": None, "version": None, "against": None}
    if shown is None and numbers:
        shown = numbers[-1]
    if shown is not None and not errors:
        versions = {
            v.number: v for v in CodebookVersion.objects.filter(number__in=[shown, against or 0])
        }
        if shown not in versions:
            errors.append(f"version: there is no codebook v{shown}")
        elif against is not None and against not in versions:
            errors.append(f"against: there is no codebook v{against}")
        else:
            try:
                context["diff"] = codebook_version_diff(
                    version=versions[shown], against=versions.get(against)
                )
                context["version"] = versions[shown]
                context["against"] = versions.get(against) or versions[shown].previous()
            except ValueError as exc:
                errors.append(str(exc))
    context["errors"] = errors
    status = 400 if errors else 200
    return render(request, "annotation/research/codebook_versions.html", context, status=status)
