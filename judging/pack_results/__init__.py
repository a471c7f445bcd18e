"""Per-pack results pages: for one scorer-pack family, the scored generators side
by side, every number with a 95% bootstrap CI over instances, neighbours compared with a paired
test (as the How2Score rankings), CSV/JSON export and inline SVG plots.

Page ``/packs/<name>/results/`` (researchers and admins), API ``/api/packs/<name>/results/``,
both choosing scoring runs (``run=<id>`` repeated) or a dataset (``dataset=<id>``); without a
choice, the latest done scoring run of each (pack, generator, dataset) of the family.

It lives in ``judging``, the lowest app that can hold it: its tables reuse :mod:`judging.stats`
(bootstrap, McNemar, Holm) and CustomPlans' page reads a human study (``annotation``), and
benchmarks may not import either (tests/core/test_layers.py). One folder per pack family
(``customplans/``, ``longproc/``, ``procbench/``, ``scirecipe/``: its ``tables.py``, and
CustomPlans' ``study.py``); beside them what every page shares: :mod:`.common` (table and
curve math), :mod:`.registry` (:class:`PackPage`), :mod:`.reads` (the scoring runs chosen),
:mod:`.page` (context and export), :mod:`.views` and :mod:`.api`.

How to add a pack's page (e.g. ``scirecipe``)
---------------------------------------------
1. Write ``judging/pack_results/<name>/tables.py`` (and its ``__init__.py``) with a **pure**
   builder ``build(instances: Sequence[Instance], boot: Bootstrap) -> dict`` returning
   ``{"tables": [...], "curves": [...], "notes": [str], "headline": <table id>}``:

   - an :class:`~judging.pack_results.common.Instance` is one scored generation:
     ``generator``, ``item`` (pairs generators), ``pack``, ``metrics``, ``breakdown``, ``attrs``
     (the item's gold fields named in ``PackPage.attrs``, e.g. ``task``, ``level``);
   - build tables with :func:`~judging.pack_results.common.comparison_table`
     (``data[generator][column] = {stratum: {item: value}}``; one stratum ``"all"`` for a
     plain mean; several strata give the unweighted mean of their means, resampled within
     each), ranked on ``rank_by`` with the neighbour tests; ``scale=100`` for percentages;
   - curves with :func:`~judging.pack_results.common.curve` (``data[generator][x]``);
   - never format numbers there: the page layer (:mod:`.page`) does, through core.formatting.

2. Register it below in ``PAGES`` (one line):
   ``"scirecipe": PackPage(name="scirecipe", title="SciRecipe", prefix="scirecipe",
   attrs=("level",), build=scirecipe.build, description="…")`` and import its ``tables`` module.
   ``prefix`` matches the pack names (``p == prefix`` or ``p.startswith(prefix + "-")``).

3. Optional template ``templates/judging/pack_results/<name>.html``
   (``{% extends "judging/pack_results/base.html" %}``; set ``template=`` on the PackPage).
   Blocks: ``pack_intro`` (the paper's framing, under the heading), ``pack_tables`` (default:
   every table through ``judging/pack_results/_table.html``), ``pack_plots`` (default: every
   chart), ``pack_notes`` (default: the builder's notes). The default template shows everything.

4. Tests: builder numbers against hand-computed worked examples (tests/judging/pack_results/);
   the page test crawls every registered page for "None"/"NaN".
"""

from __future__ import annotations

from judging.pack_results.customplans import study as customplans_study
from judging.pack_results.customplans import tables as customplans
from judging.pack_results.longproc import tables as longproc
from judging.pack_results.procbench import tables as procbench
from judging.pack_results.registry import PackPage
from judging.pack_results.scirecipe import tables as scirecipe

PAGES: dict[str, PackPage] = {
    "procbench": PackPage(
        name="procbench",
        title="ProcBench",
        prefix="procbench",
        attrs=("task",),
        build=procbench.build,
        template="judging/pack_results/procbench.html",
        description="PA, SM, FM and PML by problem length (Table 2), PA per task, PML against N.",
    ),
    "longproc": PackPage(
        name="longproc",
        title="LongProc",
        prefix="longproc",
        attrs=("level",),
        build=longproc.build,
        template="judging/pack_results/longproc.html",
        description=(
            "Score per task × level with the level averages (Table 3), termination (Table 5), "
            "score against output length."
        ),
    ),
    "scirecipe": PackPage(
        name="scirecipe",
        title="SciRecipe",
        prefix="scirecipe",
        build=scirecipe.build,
        template="judging/pack_results/scirecipe.html",
        description="Table 1's nine metrics and their average, SCORE and its parts, BLEU-1…4, "
        "the level split.",
    ),
    "customplans": PackPage(
        name="customplans",
        title="CustomPlans",
        prefix="customplans",
        attrs=tuple(customplans.SLICES),
        build=customplans.build,
        studies=customplans_study.customplans_studies,
        study_instances=customplans_study.study_reader,
        template="judging/pack_results/customplans.html",
        description="Customized, executable and fully correct (Table 2), the problems raters "
        "flagged (Fig. 9), and the outcomes by the hint's type and expertise (Figs. 10–12).",
    ),
}


def get_page(name: str) -> PackPage | None:
    return PAGES.get(name)
