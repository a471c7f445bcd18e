"""Judge ↔ human disagreements item by item (pure: no Django).

- :func:`kind_of` — which cell of the judge-versus-majority table an item falls in, or why it
  is outside it: :data:`KINDS`, the four disagreement kinds first.
- :func:`l2_links` — the L2 (generated) steps a list of failures links.
- :func:`jaccard` — the step-level overlap of two step sets (undefined when both are empty).
- :func:`overlap_summary` — the mean overlap over the items where judge and people both say
  "failure", with its percentile bootstrap CI (:func:`judging.stats.bootstrap.bootstrap_mean_ci`).

The overlap of one item (docs/statistics.md#step-overlap): J = |A ∩ B| / |A ∪ B|, A = the L2
steps the judge's critical failures link, B = the *union* of the L2 steps linked by the
annotators who said "failure". An item where neither side links an L2 step (only L1 steps, or
none) has no defined overlap; it is counted in ``n_no_l2_links`` and left out of the mean.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from annotation.agreement import Undefined
from judging.stats.bootstrap import bootstrap_mean_ci

JUDGE_FAILURE = "judge_failure"
PEOPLE_FAILURE = "people_failure"
PEOPLE_SPLIT = "people_split"
PARSE_FAILED = "parse_failed"
BOTH_FAILURE = "both_failure"
BOTH_NONE = "both_none"

# (kind, what it means), disagreements first; the page's filter offers them in this order
KINDS: dict[str, str] = {
    JUDGE_FAILURE: "judge says failure, people say none",
    PEOPLE_FAILURE: "people say failure, judge says none",
    PEOPLE_SPLIT: "people split (tied majority)",
    PARSE_FAILED: "judge's output not parsed",
    BOTH_FAILURE: "both say failure (agreement)",
    BOTH_NONE: "both say none (agreement)",
}
DISAGREEMENTS = (JUDGE_FAILURE, PEOPLE_FAILURE, PEOPLE_SPLIT, PARSE_FAILED)

# the confusion table's cells (rows: human majority, columns: judge; has_failure first)
CONFUSION_KINDS = ((BOTH_FAILURE, PEOPLE_FAILURE), (JUDGE_FAILURE, BOTH_NONE))

NO_L2_LINKS = "neither the judge nor the annotators linked an L2 step"
NO_BOTH_FAILURE = "no item where the judge and the human majority both say failure"


def kind_of(*, majority: bool | None, judged: bool, verdict: bool | None) -> str | None:
    """The kind of an item with human labels. ``majority``: the human majority (``None`` when
    tied); ``judged``: whether the judge has a judgment on it; ``verdict``: its has_failure
    (``None`` when the output was not parsed). ``None`` for an item the judge did not judge.
    A tied majority is ``people_split`` whatever the verdict; a parse failure on an item with a
    clear majority is ``parse_failed`` (the validation page's ``n_tied`` / ``n_parse_failed``)."""
    if not judged:
        return None
    if majority is None:
        return PEOPLE_SPLIT
    if verdict is None:
        return PARSE_FAILED
    if majority and verdict:
        return BOTH_FAILURE
    if majority:
        return PEOPLE_FAILURE
    return JUDGE_FAILURE if verdict else BOTH_NONE


def l2_links(failures: Iterable[Mapping[str, Any]], *, key: str) -> set[int]:
    """The L2 step numbers linked by ``failures`` under ``key`` (``"L2_steps"`` for a judge's
    critical failures, ``"l2_steps"`` for an annotator's); non-numbers are ignored."""
    out: set[int] = set()
    for failure in failures:
        for step in failure.get(key) or []:
            if isinstance(step, int) and not isinstance(step, bool):
                out.add(step)
    return out


def jaccard(a: set[int], b: set[int]) -> float | Undefined:
    """|a ∩ b| / |a ∪ b|; undefined when both sets are empty."""
    union = a | b
    if not union:
        return Undefined(NO_L2_LINKS)
    return len(a & b) / len(union)


def overlap_summary(
    values: Sequence[float | Undefined],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """The mean step overlap of the both-say-failure items (``values``: one :func:`jaccard` a
    such item) with its bootstrap CI: ``{"n_items", "n_defined", "n_no_l2_links", "mean"}``,
    ``mean`` as ``{"value", "ci"}`` or ``{"value": None, "undefined": reason}``."""
    defined = [float(v) for v in values if not isinstance(v, Undefined)]
    out: dict[str, Any] = {
        "n_items": len(values),
        "n_defined": len(defined),
        "n_no_l2_links": len(values) - len(defined),
        "definition": "Jaccard of the judge's linked L2 steps and the union of the annotators'",
    }
    if not values:
        out["mean"] = {"value": None, "undefined": NO_BOTH_FAILURE}
        return out
    if not defined:
        out["mean"] = {"value": None, "undefined": NO_L2_LINKS + " on any of these items"}
        return out
    mean: dict[str, Any] = {"value": sum(defined) / len(defined)}
    if n_resamples > 0:
        ci = bootstrap_mean_ci(defined, n_resamples=n_resamples, confidence=confidence, seed=seed)
        mean["ci"] = ci.to_json()
    out["mean"] = mean
    return out
