"""Validation: a judge measured against people and against other judges.

One layer above judging (``core ← benchmarks ← mining ← annotation ← judging ← validation ←
demo``): it reads judges' verdicts (:mod:`judging.selectors.verdicts`) and studies' labels, and
writes nothing of its own (no models). One folder per feature, each with the same module names:
``stats.py`` (pure math, no Django; a feature with two kinds of math names each), ``formats.py``
(files it reads), ``reads.py`` (queries and the report dicts), ``page.py`` (a page's template
context), ``views.py`` (thin page views), ``api.py`` (thin API views). Commands live in
``management/commands/`` and call the feature.

- :mod:`~validation.comparisons` — judges against a study's human majority, judge↔judge
  agreement, generator rankings and Kendall's τ between judges.
- :mod:`~validation.judge_validation` — one judge against the human majority with CIs,
  baselines, leave-one-out humans and other judges.
- :mod:`~validation.alt_test` — the alternative annotator test and its sample-size planner.
- :mod:`~validation.ppi` — How2Score corrected with human labels (PPI++).
- :mod:`~validation.disagreements` — the items where a judge and people disagree.
- :mod:`~validation.probes` — calibration and length-bias probes of a judge.
- :mod:`~validation.prompt_versions` — a judge family's prompt versions compared on a study.
- :mod:`~validation.metric_validation` — an automatic metric against human ratings.
"""
