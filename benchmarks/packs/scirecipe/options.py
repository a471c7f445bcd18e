"""SciRecipe SCORE options: every ambiguity of the paper ([FLAG] in the seed notes §4.2) is a
named option here, with the default docs/guides/packs/scirecipe.md documents. Pure: no Django imports."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

_CHOICES: dict[str, tuple[str, ...]] = {
    "order_mode": ("strict", "lcs"),
    "order_s": ("exact", "strict_subsequence"),
    "order_lcs_norm": ("dice", "reference"),
    "reward_lcs_norm": ("reference", "dice"),
    "order_tau_anchors": ("occurrence", "greedy"),
    "semantic_a": ("mean", "mean_normalized", "with_order"),
    "length_penalty": ("ratio", "literal"),
    "length_unit": ("words", "chars"),
    "count_check": ("key_vs_orc", "key_vs_reference"),
    "coverage_tokens": ("items", "words"),
    "object_compensation": ("none", "subword"),
    "semantics_combine": ("sum", "product"),
    "scale_combine": ("product", "sum"),
    "score_scale": ("raw", "unit"),
    "kw_f1": ("off", "keybert"),
}


@dataclass(frozen=True)
class ScoreOptions:
    """SCORE's knobs. Defaults follow the paper where it is explicit and the seed notes' reading
    where it is not (docs/guides/packs/scirecipe.md says why for each)."""

    # Consistency gate (App. C.1): coverage threshold τ; step counts compared key vs orc.
    tau: float = 0.95
    count_check: str = "key_vs_orc"
    coverage_tokens: str = "items"
    # Step scale (eq. 3): M = max(1, floor(m_factor * N_gold)); length limit L.
    m_factor: float = 0.6
    length_limit: float = 30.0
    length_penalty: str = "ratio"
    length_unit: str = "words"
    # Order (App. C.2): the reward's Order term and the LCS normalisations.
    order_mode: str = "strict"
    reward_lcs_norm: str = "reference"
    order_s: str = "exact"
    order_lcs_norm: str = "dice"
    order_tau_anchors: str = "occurrence"
    # Semantics (eqs. 4-5): decay exponent λ, the Obj threshold for comparing parameters.
    decay_lambda: float = 1.5
    par_obj_threshold: float = 0.5
    object_compensation: str = "none"
    semantic_a: str = "mean"
    # Combination (Table 25 "S-S-P"): order + semantics, scale × semantics; raw scale [0, 2.5].
    semantics_combine: str = "sum"
    scale_combine: str = "product"
    score_scale: str = "raw"
    # Lexical metrics (§4.2): KW-F1 needs a model (KeyBERT on MiniLM), so it is asked for.
    kw_f1: str = "off"

    def __post_init__(self) -> None:
        for name, allowed in _CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
        for name in ("tau", "par_obj_threshold", "m_factor", "length_limit", "decay_lambda"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name} must be a number; got {value!r}")
        for name in ("tau", "par_obj_threshold"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1")
        for name in ("m_factor", "length_limit", "decay_lambda"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")

    def with_overrides(self, overrides: dict[str, Any] | None) -> ScoreOptions:
        """These options with a record's ``options`` applied (unknown names are an error)."""
        if not overrides:
            return self
        known = {f.name for f in fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"unknown SCORE option(s): {', '.join(unknown)}")
        return replace(self, **overrides)


DEFAULT_OPTIONS = ScoreOptions()
