"""The rating-scale form: one or more n-point dimensions (default 0–4) with anchors, set per
study, e.g. SciRecipe's expert study (seed 004 App. I.5: step granularity, operational order,
semantic clarity, overall; notes §4.3). Agreement per dimension: ordinal and interval α with
bootstrap CIs, quadratic- and linear-weighted κ (mean over annotator pairs), exact agreement."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from annotation import agreement as ag
from annotation.form_types import stats
from annotation.form_types.base import (
    AnnotatedAnswer,
    FormConfigError,
    FormData,
    FormType,
    ItemView,
    clean_text,
    first,
)

_KEY = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
MAX_DIMENSIONS = 12
PRESETS: dict[str, list[dict]] = {
    "scirecipe": [
        {
            "key": "granularity",
            "label": "Step granularity",
            "anchors": {
                "0": "Steps far too coarse or too fine",
                "4": "Every step at the right level",
            },
        },
        {
            "key": "order",
            "label": "Operational order",
            "anchors": {"0": "Order would break the experiment", "4": "Order fully correct"},
        },
        {
            "key": "semantic",
            "label": "Semantic clarity",
            "anchors": {
                "0": "Actions, objects, parameters unclear",
                "4": "Fully clear and precise",
            },
        },
        {
            "key": "overall",
            "label": "Overall (fluency and executability)",
            "anchors": {"0": "Not executable", "4": "Executable as written"},
        },
    ],
}
DEFAULT_DIMENSIONS = [
    {"key": "overall", "label": "Overall quality", "anchors": {"0": "Very poor", "4": "Excellent"}}
]


class RatingForm(FormType):
    name = "rating"
    title = "Rating scale"
    description = "One or more n-point dimensions with anchors (e.g. SciRecipe's 0–4 ratings)."

    def clean_config(self, config: Mapping[str, Any]) -> dict:
        unknown = set(config) - {"preset", "dimensions", "points", "low", "show_reference"}
        if unknown:
            raise FormConfigError(
                "form_config", f"unknown setting(s): {', '.join(sorted(unknown))}"
            )
        points, low = config.get("points", 5), config.get("low", 0)
        if not isinstance(points, int) or isinstance(points, bool) or not 2 <= points <= 11:
            raise FormConfigError("form_config.points", "must be a whole number from 2 to 11")
        if not isinstance(low, int) or isinstance(low, bool) or not -10 <= low <= 10:
            raise FormConfigError("form_config.low", "must be a whole number from -10 to 10")
        preset = config.get("preset")
        if preset is not None and (not isinstance(preset, str) or preset not in PRESETS):
            raise FormConfigError(
                "form_config.preset", f"unknown preset {preset!r}; known: {', '.join(PRESETS)}"
            )
        dims = config.get("dimensions", PRESETS[preset] if preset else DEFAULT_DIMENSIONS)
        if not isinstance(dims, list) or not 1 <= len(dims) <= MAX_DIMENSIONS:
            raise FormConfigError(
                "form_config.dimensions", f"must be a list of 1 to {MAX_DIMENSIONS} dimensions"
            )
        high = low + points - 1
        cleaned, seen = [], set()
        for i, dim in enumerate(dims, start=1):
            where = f"form_config.dimensions[{i}]"
            if not isinstance(dim, Mapping):
                raise FormConfigError(where, "must be an object with key, label and anchors")
            key, label = dim.get("key"), dim.get("label")
            if not isinstance(key, str) or not _KEY.match(key):
                raise FormConfigError(f"{where}.key", "must be lower-case letters, digits, _")
            if key in seen:
                raise FormConfigError(f"{where}.key", f"{key!r} is used twice")
            seen.add(key)
            if not isinstance(label, str) or not label.strip() or len(label) > 200:
                raise FormConfigError(f"{where}.label", "must be text of 1 to 200 characters")
            anchors = dim.get("anchors", {})
            if not isinstance(anchors, Mapping):
                raise FormConfigError(f"{where}.anchors", "must map scale points to text")
            clean_anchors = {}
            for point, text in anchors.items():
                try:
                    value = int(point)
                except (TypeError, ValueError):
                    value = None
                if value is None or not low <= value <= high:
                    raise FormConfigError(
                        f"{where}.anchors", f"{point!r} is not a point of the {low}–{high} scale"
                    )
                if not isinstance(text, str) or len(text) > 200:
                    raise FormConfigError(f"{where}.anchors", "anchor texts: up to 200 characters")
                clean_anchors[str(value)] = text.strip()
            cleaned.append({"key": key, "label": label.strip(), "anchors": clean_anchors})
        return {
            "points": points,
            "low": low,
            "dimensions": cleaned,
            "show_reference": bool(config.get("show_reference", True)),
        }

    @staticmethod
    def scale(config: Mapping) -> list[int]:
        return list(range(config["low"], config["low"] + config["points"]))

    def parse(self, data: FormData, *, config: Mapping, item: ItemView | None = None) -> dict:
        scale = set(self.scale(config))
        ratings = {}
        for dim in config["dimensions"]:
            raw = first(data, f"r-{dim['key']}").strip()
            if raw.lstrip("-").isdigit() and int(raw) in scale:
                ratings[dim["key"]] = int(raw)
        return {"ratings": ratings, "comments": clean_text(first(data, "comments"))}

    def errors(
        self, answer: Mapping, *, config: Mapping, item: ItemView | None = None
    ) -> list[str]:
        scale = self.scale(config)
        ratings = answer.get("ratings") or {}
        return [
            f"{dim['label']}: choose a rating from {scale[0]} to {scale[-1]}."
            for dim in config["dimensions"]
            if dim["key"] not in ratings
        ]

    def text_fields(self, answer: Mapping) -> list[tuple[str, str]]:
        return [("Comments", answer.get("comments", ""))]

    def clean_expected(self, expected: Any, *, config: Mapping) -> dict:
        ratings = expected.get("ratings") if isinstance(expected, Mapping) else None
        scale = self.scale(config)
        keys = {d["key"] for d in config["dimensions"]}
        if not isinstance(ratings, Mapping) or not ratings:
            raise FormConfigError("expected_label", "give ratings: {dimension: value}")
        for key, value in ratings.items():
            if key not in keys:
                raise FormConfigError("expected_label", f"unknown dimension {key!r}")
            if value not in scale or isinstance(value, bool):
                raise FormConfigError(
                    "expected_label", f"{key}: {value!r} is not on the {scale[0]}–{scale[-1]} scale"
                )
        return {"ratings": dict(ratings)}

    def quality_value(self, answer: Mapping, *, config: Mapping) -> Any:
        return tuple(sorted((answer.get("ratings") or {}).items()))  # every dimension alike

    def codebook(self, *, config: Mapping) -> dict:
        scale = self.scale(config)
        points = []
        for d in config["dimensions"]:
            anchors = "; ".join(f"{k} = {v}" for k, v in (d.get("anchors") or {}).items())
            points.append(f"{d['label']}{': ' + anchors if anchors else ''}")
        return {
            "title": "How to rate a solution",
            "lead": f"For each item, rate the solution to evaluate (L2) on every dimension "
            f"below, from {scale[0]} to {scale[-1]}.",
            "points": points,
        }

    def describe(self, answer: Mapping, *, config: Mapping) -> list[str]:
        ratings = answer.get("ratings") or {}
        return [f"{d['label']}: {ratings.get(d['key'], 'not rated')}" for d in config["dimensions"]]

    def describe_expected(self, expected: Mapping, *, config: Mapping) -> str:
        labels = {d["key"]: d["label"] for d in config["dimensions"]}
        given = (expected or {}).get("ratings") or {}
        return "; ".join(f"{labels.get(k, k)}: {v}" for k, v in given.items())

    def matches(self, answer: Mapping, expected: Mapping, *, config: Mapping) -> bool:
        given = answer.get("ratings") or {}
        return all(given.get(k) == v for k, v in (expected.get("ratings") or {}).items())

    def page_context(self, *, answer: Mapping, config: Mapping, item: ItemView) -> dict:
        ratings = answer.get("ratings") or {}
        dims = []
        for dim in config["dimensions"]:
            options = [
                (str(v), dim["anchors"].get(str(v), ""), ratings.get(dim["key"]) == v)
                for v in self.scale(config)
            ]
            dims.append({"key": dim["key"], "label": dim["label"], "options": options})
        return {"dimensions": dims, "show_reference": config["show_reference"]}

    def export_fields(self, answer: Mapping, *, config: Mapping) -> dict:
        ratings = answer.get("ratings") or {}
        return {f"rating_{d['key']}": ratings.get(d["key"]) for d in config["dimensions"]}

    def agreement(
        self,
        answers: Sequence[AnnotatedAnswer],
        *,
        config: Mapping,
        n_resamples: int = 1000,
        seed: int = 0,
    ) -> dict:
        scale = self.scale(config)
        sections, summary = [], {}
        for dim in config["dimensions"]:
            key = dim["key"]
            matrix = stats.matrix_of(
                answers, lambda a, k=key: (a.answer.get("ratings") or {}).get(k), categories=scale
            )
            values = [(a.answer.get("ratings") or {}).get(key) for a in answers]
            values = [v for v in values if v is not None]
            mean = sum(values) / len(values) if values else ag.Undefined(ag.NO_LABELS)
            summary[key] = {"mean": ag.stat_json(mean), "n": len(values)}
            sections.append(
                {
                    "title": f"{dim['label']} ({scale[0]}–{scale[-1]})",
                    "rows": [
                        stats.alpha_row(
                            "Krippendorff α (ordinal)",
                            matrix,
                            level="ordinal",
                            n_resamples=n_resamples,
                            seed=seed,
                        ),
                        stats.alpha_row(
                            "Krippendorff α (interval)",
                            matrix,
                            level="interval",
                            n_resamples=n_resamples,
                            seed=seed,
                        ),
                        stats.stat_row(
                            "Weighted κ (quadratic, mean over pairs)",
                            ag.mean_pairwise_weighted_kappa(matrix, weights="quadratic"),
                        ),
                        stats.stat_row(
                            "Weighted κ (linear, mean over pairs)",
                            ag.mean_pairwise_weighted_kappa(matrix, weights="linear"),
                        ),
                        stats.stat_row(
                            "Exact agreement",
                            ag.percent_agreement(matrix),
                            n=stats.n_pairable(matrix),
                            percent=True,
                        ),
                        stats.stat_row("Mean rating", mean, n=len(values)),
                    ],
                }
            )
        return {
            "form_type": self.name,
            "n_items": len(stats.by_item(answers)),
            "n_annotations": len(answers),
            "sections": sections,
            "summary": summary,
        }
