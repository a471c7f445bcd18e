"""What the annotator's pages show: the template context of the consent, codebook, item and
final pages, built from the participant, their assignment and :mod:`annotation.rules` (the
minimum time, the attention warning, why a session ended), so templates compute nothing."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import datetime

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from annotation import conf, rules
from annotation.models import Assignment, Participant, Study, StudyItem
from annotation.selectors.codebook import study_codebook
from annotation.selectors.flow import (
    qualification_missed,
    study_has_qualification,
    training_items,
)
from annotation.selectors.forms import form_codebook, form_page_context
from core.templatetags.core_icons import icon_svg


def consent_context(*, study: Study, participant: Participant) -> dict:
    return {
        "study": study,
        "participant": participant,
        "has_qualification": study_has_qualification(study=study),
    }


def training_context(*, study: Study, participant: Participant, review: bool) -> dict:
    """The codebook and worked examples; before a second comprehension attempt (``retry``) also
    the qualification items missed on the first, with their answers explained."""
    attempt = participant.qualification_attempt
    retry = not review and attempt > 1 and participant.stage == Participant.Stage.TRAINING
    return {
        "study": study,
        "participant": participant,
        "codebook": study_codebook(study=study),
        "form_codebook": form_codebook(study=study),
        "review": review,
        "examples": training_items(study=study),
        "has_qualification": study_has_qualification(study=study, attempt=attempt),
        "retry": retry,
        "missed": qualification_missed(participant=participant, attempt=attempt - 1)
        if retry
        else [],
        "attempts_left": rules.QUALIFICATION_MAX_ATTEMPTS - attempt + 1,
    }


def _items_total(study: Study) -> int:
    """The "of n" on the item page: regular items plus the silent gold ones to come."""
    if not study.gold_rate:
        return study.items_per_participant
    n_gold = StudyItem.objects.filter(study=study, kind=StudyItem.Kind.GOLD).count()
    return study.items_per_participant + rules.gold_planned(
        rate=study.gold_rate,
        items_per_participant=study.items_per_participant,
        n_gold_items=n_gold,
    )


def final_context(*, study: Study, participant: Participant, code: str, redirect_url: str) -> dict:
    """The done and screened-out pages: the completion code, where to go, and why it ended."""
    return {
        "study": study,
        "participant": participant,
        "code": code,
        "redirect_url": redirect_url,
        "screened_by_qualification": rules.screened_out_reason(
            qualification_score=participant.qualification_score,
            attention_failures=participant.attention_failures,
        )
        == rules.SCREENED_BY_QUALIFICATION,
    }


def _failure_entry(i: str, n: str, failure: dict, n_l1: int, n_l2: int) -> dict:
    """One failure fieldset, its step numbers already strings (the template engine localizes
    every integer it prints, which costs more than the rest of the page's loops)."""
    l1_on, l2_on = set(failure.get("l1_steps") or ()), set(failure.get("l2_steps") or ())
    return {
        "i": i,
        "n": n,
        "description": failure.get("description", ""),
        "l1": [(str(k), k in l1_on) for k in range(1, n_l1 + 1)],
        "l2": [(str(k), k in l2_on) for k in range(1, n_l2 + 1)],
    }


@functools.lru_cache(maxsize=256)
def _blank_failure_html(n_l1: int, n_l2: int) -> str:
    """The empty failure fieldset the page clones (the same for every item of this shape)."""
    return render_to_string(
        "annotation/_failure.html", {"f": _failure_entry("__i__", "__n__", {}, n_l1, n_l2)}
    )


_CHECK_ICON = mark_safe(icon_svg("check"))  # beside every step
_PK_MARK = 2_147_480_009  # where an assignment's id goes in a URL reversed once


@functools.lru_cache(maxsize=1024)
def study_page_url(name: str, slug: str, with_assignment: bool = False) -> str:
    """The URL of the annotator page ``name`` of study ``slug`` (reversed once per process;
    ``with_assignment``: with :data:`_PK_MARK` where the assignment's id goes)."""
    return reverse(f"annotation:{name}", args=[slug, _PK_MARK] if with_assignment else [slug])


def item_urls(slug: str, assignment_id: int) -> dict[str, str]:
    """The URLs the item page posts to and links to."""
    mark, pk = str(_PK_MARK), str(assignment_id)
    urls = {n: study_page_url(n, slug, True).replace(mark, pk) for n in ("submit", "beat", "draft")}
    urls["codebook"] = study_page_url("codebook_partial", slug)
    urls["training"] = study_page_url("training", slug)
    return urls


@functools.lru_cache(maxsize=64)
def _codebook_question(version_id: int | None) -> str:
    """The codebook's question every item page shows: read once per process and version (a
    codebook version is never edited, :mod:`core.versions`; a change is a new version)."""
    return study_codebook(study=Study(codebook_version_id=version_id))["question"]


def forget_codebook_questions(**_signal) -> None:
    """A codebook version saved or deleted: the questions this process read by version id are
    read again. A live database never gives an id twice, but one emptied and filled again (a
    restore, the test suite's databases) does, and the id would then name other text."""
    _codebook_question.cache_clear()


def steps_html(steps: list[str], read: set[int], *, side: str, clickable: bool) -> SafeString:
    """One step list of the critical-failure item page (``side`` "l1" or "l2"), built here rather
    than by a template loop: the list is the page's largest part and the engine's per-node cost
    (escaping, lookups, localizing) made it ~40% of the page's render. ``clickable``: each step
    is a checkbox the annotator ticks once read (``read``: the steps already ticked)."""
    name = "read_l1" if side == "l1" else "read"
    label_id = "l1-step-" if side == "l1" else "l2-"
    tag = side.upper()
    out = ['<ol class="steps">']
    for n, text in enumerate(steps, 1):
        item_id = f' id="l1-{n}"' if side == "l1" else ""
        if not clickable:
            out.append(
                f'<li{item_id}><span class="num">{tag}.{n}</span>'
                f'<span class="text">{escape(text)}</span></li>'
            )
            continue
        on = n in read
        out.append(
            f'<li{item_id}><label class="step{" is-read" if on else ""}" id="{label_id}{n}">\n'
            f'  <input type="checkbox" name="{name}" value="{n}" class="step-check"'
            f"{' checked' if on else ''}>\n"
            f'  <span class="num">{tag}.{n}</span><span class="text">{escape(text)}</span>'
            f'<span class="tick">{_CHECK_ICON}</span></label></li>'
        )
    out.append("</ol>")
    return mark_safe("".join(out))


def item_timing(*, study: Study, served_at: datetime, now: datetime) -> dict:
    """The item page's clock: seconds spent (rounded down) and seconds left before submission
    opens (rounded up, :func:`annotation.rules.seconds_left`), which the page's countdown
    starts from."""
    waited = rules.waited_seconds(served_at=served_at, now=now)
    return {
        "elapsed": rules.elapsed_seconds(waited=waited),
        "remaining": rules.seconds_left(min_seconds=study.min_seconds_per_item, waited=waited),
    }


def item_page_context(
    *,
    study: Study,
    participant: Participant,
    assignment: Assignment,
    state: dict,
    errors: Iterable[str] = (),
) -> dict:
    """The item page: the goal, both step lists, the saved answers, the clock and warnings."""
    generation = assignment.item.generation
    procedure = generation.procedure
    l1, l2 = list(procedure.steps), list(generation.predicted_steps)
    failures = state.get("failures") or []
    if state.get("choice") == "failure" and not failures:
        failures = [{"description": "", "l1_steps": [], "l2_steps": []}]
    read = set(state.get("read_steps") or [])
    n_l1_to_read = rules.l1_steps_to_read(click_through_l1=study.click_through_l1, n_l1=len(l1))
    read_l1 = set(state.get("read_l1_steps") or []) if n_l1_to_read else set()
    n_read, n_to_read = len(read) + len(read_l1), len(l2) + n_l1_to_read
    timing = item_timing(study=study, served_at=assignment.served_at, now=timezone.now())
    # numbers the page prints go in as text: the template engine localizes every integer
    return {
        "study": study,
        "participant": participant,
        "assignment": assignment,
        "qualification": assignment.item.kind == "qualification",
        "goal": procedure.goal,
        "resources": procedure.resources if study.show_resources else [],
        "click_l1": bool(n_l1_to_read),
        "l1_html": steps_html(l1, read_l1, side="l1", clickable=bool(n_l1_to_read)),
        "l2_html": steps_html(l2, read, side="l2", clickable=True),
        "n_read": str(n_read),
        "n_to_read": str(n_to_read),
        "read_percent": str(round(100 * n_read / n_to_read) if n_to_read else 100),
        "state": state,
        "failures": [
            _failure_entry(str(i), str(i + 1), f, len(l1), len(l2)) for i, f in enumerate(failures)
        ],
        "failure_blank_html": mark_safe(_blank_failure_html(len(l1), len(l2))),
        "errors": list(errors),
        "elapsed": str(timing["elapsed"]),
        "remaining": timing["remaining"],
        "remaining_text": str(timing["remaining"]),
        "heartbeat_seconds": str(conf.heartbeat_seconds()),
        "idle_seconds": str(conf.idle_timeout_seconds()),
        "urls": item_urls(study.slug, assignment.pk),
        "codebook": {"question": _codebook_question(study.codebook_version_id)},
        "position": str(
            rules.item_position(
                regular_done=participant.n_done,
                gold_served=participant.n_gold_served,
                current_is_gold=assignment.item.kind == StudyItem.Kind.GOLD,
            )
        ),
        "items_total": str(_items_total(study)),
        "warning": rules.attention_warning(
            failures=participant.attention_failures,
            warn_after=study.attention_warn_after,
            screen_after=study.attention_screen_after,
        ),
        **form_page_context(study=study, assignment=assignment, state=state),
    }
