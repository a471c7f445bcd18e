"""SCORE's parts (Thoth paper §3.3.2, §4.2, App. C): step scale, strict and LCS order, greedy
action anchors, positional decay, object/parameter IoU, Order-Tau. Pure: no Django imports."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from benchmarks.packs.scirecipe.options import ScoreOptions
from benchmarks.packs.scirecipe.parsing import Step, normalize

_SUBWORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?|%")


def step_count_factor(n_pred: int, n_gold: int, m_factor: float = 0.6) -> float:
    """f(d) of eq. 3: cos(π d / 2M) for d < M, else 0; M = max(1, ⌊m_factor · N_gold⌋)."""
    d = abs(n_pred - n_gold)
    m = max(1, math.floor(m_factor * n_gold + 1e-9))
    return math.cos(math.pi * d / (2 * m)) if d < m else 0.0


def length_divisor(mean_length: float, opts: ScoreOptions) -> float:
    """g(L̄) of eq. 3: 1 up to L; above it L̄/L ("ratio", default) or L̄ itself ("literal")."""
    if mean_length <= opts.length_limit:
        return 1.0
    return mean_length / opts.length_limit if opts.length_penalty == "ratio" else mean_length


def text_length(text: str, unit: str) -> int:
    return len(text.split()) if unit == "words" else len(text)


def is_subsequence(x: Sequence[str], y: Sequence[str]) -> bool:
    """x can be embedded in y with order preserved."""
    it = iter(y)
    return all(any(a == b for b in it) for a in x)


def order_strict(pred: Sequence[str], gold: Sequence[str]) -> int:
    """Order_strict (eq. 13): 1 if equal or either is a subsequence of the other."""
    return int(list(pred) == list(gold) or is_subsequence(pred, gold) or is_subsequence(gold, pred))


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """LCS length by the standard DP (eq. 15), one row at a time."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, start=1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def order_lcs(pred: Sequence[str], gold: Sequence[str], norm: str = "dice") -> float:
    """Order-LCS: 2L/(n+m) (eq. 9, "dice") or L/m (eq. 14, "reference")."""
    n, m = len(pred), len(gold)
    if norm == "reference":
        return lcs_length(pred, gold) / m if m else 0.0
    return 2 * lcs_length(pred, gold) / (n + m) if n + m else 0.0


def greedy_anchors(pred: Sequence[str], gold: Sequence[str]) -> list[tuple[int, int]]:
    """W (App. C.3): for each predicted action in order, the earliest gold index after the last
    match with the same action; unmatched actions are skipped. Pairs are 1-based."""
    pairs: list[tuple[int, int]] = []
    start = 0
    for i, action in enumerate(pred, start=1):
        for j in range(start, len(gold)):
            if gold[j] == action:
                pairs.append((i, j + 1))
                start = j + 1
                break
    return pairs


def occurrence_anchors(pred: Sequence[str], gold: Sequence[str]) -> list[tuple[int, int]]:
    """A non-monotone anchor set: the k-th occurrence of an action in the prediction paired with
    its k-th occurrence in the gold (1-based), so reorderings show up as discordant pairs."""
    seen: dict[str, list[int]] = {}
    for j, action in enumerate(gold, start=1):
        seen.setdefault(action, []).append(j)
    used: dict[str, int] = {}
    pairs: list[tuple[int, int]] = []
    for i, action in enumerate(pred, start=1):
        k = used.get(action, 0)
        if k < len(seen.get(action, ())):
            pairs.append((i, seen[action][k]))
            used[action] = k + 1
    return pairs


def kendall_tau_pairs(pairs: Sequence[tuple[int, int]]) -> float:
    """Order-Tau (eq. 10): (C − D′)/(C + D′) over anchor pairs; 0 when C + D′ = 0."""
    c = d = 0
    for a in range(len(pairs)):
        for b in range(a + 1, len(pairs)):
            s = (pairs[a][0] - pairs[b][0]) * (pairs[a][1] - pairs[b][1])
            c += s > 0
            d += s < 0
    return (c - d) / (c + d) if c + d else 0.0


def positional_decay(i: int, j: int, n_gold: int, lam: float = 1.5) -> float:
    """m_ij = max{0, 1 − (|i − j| / D)^λ}, D = number of gold steps."""
    if n_gold <= 0:
        return 0.0
    return max(0.0, 1.0 - (abs(i - j) / n_gold) ** lam)


def iou(a: set[str], b: set[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def subwords(items: Sequence[str]) -> set[str]:
    """K(·): the subword set of a list of strings (normalised alphanumeric pieces)."""
    return {w for item in items for w in _SUBWORD.findall(normalize(item))}


def object_iou(pred: Sequence[str], gold: Sequence[str], compensation: str = "none") -> float:
    """Obj(i, j) (eq. 4): IoU of the normalised object sets; with ``compensation="subword"``
    the subword IoU stands in when it is higher (objects that differ but are related). Two
    empty object sets agree (1), as Par does for empty parameter sets."""
    if not pred and not gold:
        return 1.0
    exact = iou({normalize(o) for o in pred}, {normalize(o) for o in gold})
    if compensation == "subword":
        return max(exact, iou(subwords(pred), subwords(gold)))
    return exact


def parameter_iou(pred: Sequence[str], gold: Sequence[str]) -> float:
    """Par(i, j) (eq. 4): 1 if both empty, 0 if one is, else IoU of the subword sets."""
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0
    return iou(subwords(pred), subwords(gold))


def semantic_terms(
    pred: Sequence[Step], gold: Sequence[Step], pairs: Sequence[tuple[int, int]], opts: ScoreOptions
) -> list[dict[str, float | int]]:
    """Per anchor (i, j): m_ij, Obj, Par (0 when Obj < threshold) and m_ij·(Obj + ½Par)."""
    rows: list[dict[str, float | int]] = []
    for i, j in pairs:
        p, g = pred[i - 1], gold[j - 1]
        obj = object_iou(p.objects, g.objects, opts.object_compensation)
        par = parameter_iou(p.parameters, g.parameters) if obj >= opts.par_obj_threshold else 0.0
        decay = positional_decay(i, j, len(gold), opts.decay_lambda)
        rows.append(
            {
                "i": i,
                "j": j,
                "decay": decay,
                "obj": obj,
                "par": par,
                "term": decay * (obj + par / 2),
            }
        )
    return rows


def normalize_action(action: str) -> str:
    """Actions compare case- and space-insensitively (the paper's strings are lowercase)."""
    return " ".join(action.casefold().split())
