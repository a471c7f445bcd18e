"""The paper's analyses on your data (seed 000 §4.2, §6, D.3–D.5, Figure 1b), one folder: the
math is pure functions over analysis rows (no Django); :mod:`~judging.analyses.reads` builds the
rows from stored judgments, :mod:`~judging.analyses.page` formats the pages,
:mod:`~judging.analyses.views` and :mod:`~judging.analyses.api` serve them. One row per judged
generation (parse failures excluded):

``generator``, ``procedure_id``, ``topic``, ``ref_steps`` (|S*|), ``n_resources`` (|R|),
``gen_tokens``, ``ref_tokens`` (o200k, summed per step), ``ratio_pp`` (100·gen/ref, None when
ref is 0), ``no_failure`` (1/0), ``step_count_mismatch``, ``duplicate_steps``,
``dup_ngram_rate`` (the D.3 proxies) and ``checkpoint`` (the generator's metadata).

- :mod:`~judging.analyses.regression` — D.5 / Table 10 logistic regression (statsmodels).
- :mod:`~judging.analyses.breakdowns` — How2Score with CIs by topic and step-count bucket.
- :mod:`~judging.analyses.checkpoints` — checkpoint metadata, scaling series (Figure 1b),
  formatting proxies (D.3), Spearman between two checkpoint orderings (D.4).
- the scaling chart is drawn by :func:`core.charts.line_chart_svg`.
- :mod:`~judging.analyses.export` — rows as CSV.
"""
