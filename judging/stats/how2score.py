"""How2Score with uncertainty: per generator and per topic, a percentile bootstrap CI over
items; between generators adjacent in the ranking, McNemar's exact test and a paired
bootstrap of the difference on the items both were scored on, with Holm's adjustment over
the neighbour comparisons of one ranking.

Records are dicts as :func:`judging.aggregate.how2score` reads them (``generator``,
``topic``, ``has_failure``, ``parse_failed``, ``generated_tokens``) plus ``procedure_id``,
the item that pairs two generators. Parse failures are left out, as How2Score does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from annotation.agreement import Undefined
from judging.stats.bootstrap import bootstrap_proportion_ci, paired_bootstrap
from judging.stats.significance import holm_adjust, mcnemar

ALPHA = 0.05
MULTIPLE_COMPARISON_NOTE = (
    "Each generator is compared with the next one in the ranking on the items both were "
    "scored on (McNemar's exact test; paired bootstrap CI of the difference). With k "
    "generators that is k − 1 tests, so the p-values are adjusted with Holm's step-down "
    "method; 'differs' means adjusted p < 0.05 (family-wise error at most 5% per ranking)."
)


def _ci_json(ci) -> dict[str, Any]:
    return ci.to_json()


def _score_block(outcomes: Sequence[int], tokens: Sequence[int], **options) -> dict[str, Any]:
    n = len(outcomes)
    score = sum(outcomes) / n if n else None
    block: dict[str, Any] = {
        "how2score": score,
        "how2score_percent": None if score is None else 100.0 * score,
        "n_examples": n,
        "avg_generated_tokens": sum(tokens) / len(tokens) if tokens else None,
    }
    if options.get("n_resamples", 0) > 0:
        # 0/1 outcomes: the mean of n items resampled with replacement is Bin(n, p)/n
        ci = bootstrap_proportion_ci(sum(outcomes), n, **options) if n else Undefined("no items")
        block["ci"] = _ci_json(ci)
    return block


def generator_scores(
    records: Iterable[Mapping[str, Any]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[list[dict[str, Any]], dict[str, dict[Any, int]]]:
    """(one row per generator, best How2Score first, with ``ci`` and ``by_topic`` rows with
    theirs; ``{generator: {procedure id: 1 no_failure / 0 has_failure}}``)."""
    options = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    outcomes: dict[str, dict[Any, int]] = defaultdict(dict)
    by_topic: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    tokens: dict[str, list[int]] = defaultdict(list)
    parse_failed: dict[str, int] = defaultdict(int)
    for rec in records:
        name = rec["generator"]
        if rec.get("generated_tokens") is not None:
            tokens[name].append(int(rec["generated_tokens"]))
        if rec.get("parse_failed"):
            parse_failed[name] += 1
            continue
        outcome = 0 if rec.get("has_failure") else 1
        outcomes[name][rec["procedure_id"]] = outcome
        by_topic[name][rec.get("topic") or ""].append(outcome)
    rows = []
    for name in set(outcomes) | set(parse_failed):
        scored = list(outcomes[name].values())
        rows.append(
            {
                "generator": name,
                **_score_block(scored, tokens[name], **options),
                "n_parse_failed": parse_failed[name],
                "by_topic": [
                    {"topic": topic, **_score_block(values, [], **options)}
                    for topic, values in sorted(by_topic[name].items())
                ],
            }
        )
    rows.sort(key=lambda r: (r["how2score"] is None, -(r["how2score"] or 0), r["generator"]))
    for i, row in enumerate(rows):
        row["rank"] = i + 1
    return rows, dict(outcomes)


def neighbour_tests(
    ranked: Sequence[str],
    outcomes: Mapping[str, Mapping[Any, int]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    alpha: float = ALPHA,
) -> list[dict[str, Any]]:
    """Each generator against the next in ``ranked`` on their common items: McNemar's exact
    p, Holm-adjusted p (over these k − 1 tests), the paired bootstrap difference and CI."""
    tests = []
    for a, b in pairwise(ranked):
        common = sorted(outcomes[a].keys() & outcomes[b].keys(), key=str)
        xa = [outcomes[a][i] for i in common]
        xb = [outcomes[b][i] for i in common]
        test = mcnemar(xa, xb)
        entry: dict[str, Any] = {
            "generator_a": a,
            "generator_b": b,
            "n_common": len(common),
            **{k: v for k, v in test.to_json().items() if k != "n"},
        }
        if common:
            diff = paired_bootstrap(
                xa, xb, n_resamples=max(n_resamples, 1), confidence=confidence, seed=seed
            )
            entry["difference"] = diff.difference
            if n_resamples > 0:
                entry["difference_ci"] = _ci_json(diff.ci)
        else:
            entry["difference"] = None
        tests.append(entry)
    for entry, p in zip(tests, holm_adjust([t["p_value"] for t in tests]), strict=True):
        entry["p_holm"] = p
        entry["significant"] = bool(entry["n_common"] and p < alpha)
    return tests
