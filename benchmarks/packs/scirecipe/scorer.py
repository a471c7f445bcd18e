"""SciRecipe SCORE on one item, and the ``scirecipe`` record shape read by
``manage.py score scirecipe FILE``. Pure: no Django imports.

Record (one JSON object a line)::

    {"id": "p1",
     "gold": [{"action": "wash", "objects": ["cells"], "parameters": ["1x pbs"]}, ...],
     "prediction": "<think>…</think><key>Step 1: {…}</key><orc>Step 1: …</orc><note>…</note>",
     "prediction_orc": ["Wash the cells with 1x pbs.", ...],     # optional
     "action_library": ["wash", "remove", ...],                   # optional
     "reference_text": "Wash the cells … "}                         # optional

``gold`` is a list of structured steps or a text holding ``Step x: {json}`` lines (a ``<key>``
block or a whole reference answer). ``prediction`` is the raw model answer (both gates apply) or
a list of structured steps (the format gate is not applicable; the consistency gate applies only
when ``prediction_orc`` gives the natural-language steps). Options ([FLAG] choices, the fields of
:class:`ScoreOptions`) are keyword arguments of :func:`score_record` (``--option`` on the CLI).

The lexical metrics (:mod:`.lexical`) compare the prediction's text (its orc lines, else its
structured steps, else the raw text after ``</think>``) with the reference text
(``reference_text``, else the ``<orc>`` lines of a gold given as a whole answer); they are
null when the item has neither.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.packs.registry import RecordError, Scored, mean_summary
from benchmarks.packs.scirecipe import metrics as m
from benchmarks.packs.scirecipe.lexical import LEXICAL_METRICS, lexical_metrics, reference_text
from benchmarks.packs.scirecipe.options import DEFAULT_OPTIONS, ScoreOptions
from benchmarks.packs.scirecipe.parsing import (
    ParsedAnswer,
    Step,
    consistency_gate,
    parse_answer,
    step_from_mapping,
)

METRICS = (
    "score",
    "step_m",
    "order_s",
    "order_lcs",
    "order_tau",
    "semantic_a",
    "order_strict",
    "r_scale",
    "r_semantics",
    "format_gate",
    "consistency_gate",
    "level",
    *LEXICAL_METRICS,
)
EVAL_METRICS = ("step_m", "order_s", "order_lcs", "order_tau", "semantic_a")


@dataclass
class Prediction:
    steps: list[Step]
    orc: list[str] | None
    parsed: ParsedAnswer | None  # None when the prediction came structured


def _steps_from_list(value: Sequence[Any], where: str) -> list[Step]:
    try:
        return [step_from_mapping(s, f"{where}[{k}]") for k, s in enumerate(value)]
    except ValueError as exc:
        name, _, message = str(exc).partition(": ")
        raise RecordError(message, field=name) from None


def gold_steps(value: Any) -> tuple[list[Step], list[str]]:
    """The reference's structured steps from a list or a text with ``Step x: {json}`` lines,
    and the ``<orc>`` lines of a gold given as a whole answer text ([] otherwise)."""
    if isinstance(value, str):
        text = value if "<key>" in value.lower() else f"<key>{value}</key>"
        parsed = parse_answer(text)
        bad = [p for p in parsed.problems if p.startswith("key")]
        if bad or not parsed.steps:
            raise RecordError(bad[0] if bad else "no 'Step x: {json}' lines", field="gold")
        return parsed.steps, parsed.orc
    if isinstance(value, list) and value:
        return _steps_from_list(value, "gold"), []
    raise RecordError(
        "must be a non-empty list of steps or a text of 'Step x:' lines", field="gold"
    )


def prediction_from(record: Mapping[str, Any]) -> Prediction:
    value = record.get("prediction")
    if isinstance(value, str):
        parsed = parse_answer(value)
        return Prediction(parsed.steps, parsed.orc, parsed)
    if isinstance(value, list):
        orc = record.get("prediction_orc")
        if orc is not None and not (isinstance(orc, list) and all(isinstance(o, str) for o in orc)):
            raise RecordError("must be a list of strings", field="prediction_orc")
        return Prediction(_steps_from_list(value, "prediction"), orc, None)
    raise RecordError("must be the raw answer text or a list of steps", field="prediction")


def hypothesis_text(pred: Prediction, raw: Any) -> str:
    """The prediction's text for the lexical metrics: orc lines, else structured steps, else
    the raw answer after its reasoning."""
    if pred.orc:
        return " ".join(pred.orc)
    if pred.steps:
        return " ".join(s.text() for s in pred.steps)
    return raw.split("</think>")[-1].strip() if isinstance(raw, str) else ""


def _max_score(opts: ScoreOptions) -> float:
    semantics = 2.5 if opts.semantics_combine == "sum" else 1.5
    return semantics + 1.0 if opts.scale_combine == "sum" else semantics


def score_steps(
    gold: Sequence[Step],
    pred: Prediction,
    opts: ScoreOptions = DEFAULT_OPTIONS,
) -> Scored:
    """SCORE (eq. 6) and the five evaluation metrics (§4.2) for one item."""
    g_actions = [m.normalize_action(s.action) for s in gold]
    p_actions = [m.normalize_action(s.action) for s in pred.steps]
    n_gold, n_pred = len(gold), len(pred.steps)

    format_gate = None if pred.parsed is None else int(pred.parsed.format_ok)
    consistency: int | None = None
    cons_problems: list[str] = []
    covs: list[float] = []
    if pred.orc is not None:
        numbers = pred.parsed.step_numbers if pred.parsed else list(range(1, n_pred + 1))
        orc_numbers = pred.parsed.orc_numbers if pred.parsed else list(range(1, len(pred.orc) + 1))
        ok, covs, cons_problems = consistency_gate(
            pred.steps, numbers, pred.orc, orc_numbers, n_gold, opts
        )
        consistency = int(ok)

    texts = pred.orc if pred.orc else [s.text() for s in pred.steps]
    mean_len = sum(m.text_length(t, opts.length_unit) for t in texts) / len(texts) if texts else 0
    f_d = m.step_count_factor(n_pred, n_gold, opts.m_factor)
    r_scale = f_d / m.length_divisor(mean_len, opts)

    strict = m.order_strict(p_actions, g_actions)
    if opts.order_mode == "strict":
        order = float(strict)
    else:
        order = m.order_lcs(p_actions, g_actions, opts.reward_lcs_norm)
    anchors = m.greedy_anchors(p_actions, g_actions)
    terms = m.semantic_terms(pred.steps, gold, anchors, opts)
    mean_term = sum(t["term"] for t in terms) / len(terms) if terms else 0.0
    r_sem = order + mean_term if opts.semantics_combine == "sum" else order * mean_term
    combined = r_scale * r_sem if opts.scale_combine == "product" else r_scale + r_sem
    gates = (format_gate if format_gate is not None else 1) * (
        consistency if consistency is not None else 1
    )
    score = gates * combined
    if opts.score_scale == "unit":
        score /= _max_score(opts)

    tau_anchors = (
        anchors
        if opts.order_tau_anchors == "greedy"
        else m.occurrence_anchors(p_actions, g_actions)
    )
    semantic_a = {
        "mean": mean_term,
        "mean_normalized": mean_term / 1.5,
        "with_order": r_sem,
    }[opts.semantic_a]
    order_s = int(p_actions == g_actions) if opts.order_s == "exact" else strict
    metrics = {
        "score": score,
        "step_m": int(n_pred == n_gold),
        "order_s": order_s,
        "order_lcs": m.order_lcs(p_actions, g_actions, opts.order_lcs_norm),
        "order_tau": m.kendall_tau_pairs(tau_anchors),
        "semantic_a": semantic_a,
        "order_strict": strict,
        "r_scale": r_scale,
        "r_semantics": r_sem,
        "format_gate": format_gate,
        "consistency_gate": consistency,
        "level": 1 if n_gold < 4 else 2,
    }
    breakdown = {
        "n_gold": n_gold,
        "n_pred": n_pred,
        "gold_actions": g_actions,
        "pred_actions": p_actions,
        "anchors": [list(p) for p in anchors],
        "tau_anchors": [list(p) for p in tau_anchors],
        "semantic_terms": terms,
        "step_count_factor": f_d,
        "mean_step_length": mean_len,
        "coverage": covs,
        "problems": (pred.parsed.problems if pred.parsed else []) + cons_problems,
    }
    return Scored(metrics, breakdown)


def score_record(record: Mapping[str, Any], **options: Any) -> Scored:
    """One ``scirecipe`` JSONL record → :class:`Scored` (``RecordError`` names the field);
    ``options`` override :data:`DEFAULT_OPTIONS` (a bad name or value is a ``ValueError``)."""
    if not isinstance(record, Mapping):
        raise RecordError("expected a JSON object")
    opts = DEFAULT_OPTIONS.with_overrides(options)
    gold, gold_orc = gold_steps(record.get("gold"))
    pred = prediction_from(record)
    scored = score_steps(gold, pred, opts)
    try:
        reference = reference_text(record, gold_orc)
    except ValueError as exc:
        raise RecordError(str(exc), field="reference_text") from None
    scored.metrics.update(
        lexical_metrics(
            reference, hypothesis_text(pred, record.get("prediction")), kw=opts.kw_f1 != "off"
        )
    )
    library = record.get("action_library")
    if library is not None:
        if not isinstance(library, list) or not all(isinstance(a, str) for a in library):
            raise RecordError("must be a list of strings", field="action_library")
        allowed = {m.normalize_action(a) for a in library}
        scored.breakdown["off_library"] = [
            a for a in scored.breakdown["pred_actions"] if a not in allowed
        ]
    return scored


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Means of every metric but ``level``, plus the paper's level split (Level 1: fewer than 4
    gold actions): ``n_level1``/``n_level2`` and ``level1_<metric>``/``level2_<metric>`` for
    the five evaluation metrics."""
    out = mean_summary([k for k in METRICS if k != "level"], rows)
    for level in (1, 2):
        subset = [r for r in rows if r.get("level") == level]
        out[f"n_level{level}"] = len(subset)
        means = mean_summary(EVAL_METRICS, subset)
        out.update({f"level{level}_{k}": means[k] for k in EVAL_METRICS})
    return out
