"""The pairwise-preference form: which of two procedures better achieves the goal, A or B
(or a tie), the systems anonymised and the order randomised per participant (seed 004 §4.3,
notes §4.6). ``StudyItem.generation`` is the first system, ``generation_b`` the second; the
page shows them as "A" and "B" in the order :func:`shown_swapped` picks, and the answer
records both what was clicked and the order, so ``preferred`` (first | second | tie) is in
the systems' terms. Agreement: % pairwise agreement and nominal α on ``preferred``."""

from __future__ import annotations

import hashlib
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

PREFERENCES = ("first", "second", "tie")
DEFAULT_QUESTION = "Which procedure better achieves the goal (executability, procedural flow)?"


def shown_swapped(*, participant_id: int, item_id: int, salt: str = "") -> bool:
    """Whether this participant sees the second system as "A": a fixed coin flip per
    (participant, item), so a refresh shows the same order and the order can be recomputed."""
    digest = hashlib.sha256(f"{salt}:{participant_id}:{item_id}".encode()).digest()
    return bool(digest[0] & 1)


def preferred_system(shown: str, *, swapped: bool) -> str | None:
    """``shown`` ("A" | "B" | "tie", as on the page) in the systems' terms."""
    if shown == "tie":
        return "tie"
    if shown not in ("A", "B"):
        return None
    return (
        ("second" if shown == "A" else "first")
        if swapped
        else ("first" if shown == "A" else "second")
    )


class PairwiseForm(FormType):
    name = "pairwise"
    title = "Pairwise preference (A / B)"
    description = "A or B (or tie), systems anonymised, order randomised per participant."

    def clean_config(self, config: Mapping[str, Any]) -> dict:
        unknown = set(config) - {"allow_tie", "question", "show_reference"}
        if unknown:
            raise FormConfigError(
                "form_config", f"unknown setting(s): {', '.join(sorted(unknown))}"
            )
        for key in ("allow_tie", "show_reference"):
            if key in config and not isinstance(config[key], bool):
                raise FormConfigError(f"form_config.{key}", "must be true or false")
        question = config.get("question", DEFAULT_QUESTION)
        if not isinstance(question, str) or not question.strip() or len(question) > 300:
            raise FormConfigError("form_config.question", "must be text of 1 to 300 characters")
        return {
            "allow_tie": config.get("allow_tie", True),
            "question": question.strip(),
            "show_reference": config.get("show_reference", False),
        }

    def parse(self, data: FormData, *, config: Mapping, item: ItemView | None = None) -> dict:
        shown = first(data, "pref")
        allowed = ("A", "B", "tie") if config["allow_tie"] else ("A", "B")
        shown = shown if shown in allowed else ""
        swapped = bool(item and item.swapped)
        return {
            "shown": shown,
            "order": "ba" if swapped else "ab",
            "preferred": preferred_system(shown, swapped=swapped) if shown else None,
            "comments": clean_text(first(data, "comments")),
        }

    def errors(
        self, answer: Mapping, *, config: Mapping, item: ItemView | None = None
    ) -> list[str]:
        if item is not None and not item.l2_b:
            return ["This item has no second procedure to compare; please tell the researcher."]
        if answer.get("preferred") in PREFERENCES:
            return []
        options = "A, B or tie" if config["allow_tie"] else "A or B"
        return [f"Preference: choose {options}."]

    def text_fields(self, answer: Mapping) -> list[tuple[str, str]]:
        return [("Comments", answer.get("comments", ""))]

    def codebook(self, *, config: Mapping) -> dict:
        points = [
            "Each item shows two solutions, A and B, from two systems; which system is which "
            "is hidden, and the order is drawn for you.",
            "Choose A or B, or “About the same (tie)” when neither is better."
            if config["allow_tie"]
            else "Choose A or B.",
        ]
        if config["show_reference"]:
            points.append("L1, a valid reference solution, is shown for comparison.")
        return {"title": "Which solution is better?", "lead": config["question"], "points": points}

    def describe(self, answer: Mapping, *, config: Mapping) -> list[str]:
        shown = answer.get("shown") or ""
        said = {"A": "A is better", "B": "B is better", "tie": "About the same (tie)"}
        return [f"Preference: {said.get(shown, 'no choice made')}"]

    def describe_expected(self, expected: Mapping, *, config: Mapping) -> str:
        said = {"first": "the first solution", "second": "the second solution", "tie": "a tie"}
        return f"Preference: {said.get((expected or {}).get('preferred'), 'none')}"

    def quality_value(self, answer: Mapping, *, config: Mapping) -> Any:
        return answer.get("preferred")  # the system preferred (first, second or tie)

    def clean_expected(self, expected: Any, *, config: Mapping) -> dict:
        if not isinstance(expected, Mapping) or expected.get("preferred") not in PREFERENCES:
            raise FormConfigError("expected_label", "preferred must be first, second or tie")
        return {"preferred": expected["preferred"]}

    def page_context(self, *, answer: Mapping, config: Mapping, item: ItemView) -> dict:
        a, b = (item.l2_b, item.l2) if item.swapped else (item.l2, item.l2_b)
        shown = answer.get("shown", "")
        choices = [("A", "A is better", shown == "A"), ("B", "B is better", shown == "B")]
        if config["allow_tie"]:
            choices.append(("tie", "About the same (tie)", shown == "tie"))
        return {
            "question": config["question"],
            "show_reference": config["show_reference"],
            "sides": [("A", list(a)), ("B", list(b))],
            "choices": choices,
        }

    def export_fields(self, answer: Mapping, *, config: Mapping) -> dict:
        return {
            "preferred": answer.get("preferred"),
            "shown_choice": answer.get("shown"),
            "shown_order": answer.get("order"),
        }

    def agreement(
        self,
        answers: Sequence[AnnotatedAnswer],
        *,
        config: Mapping,
        n_resamples: int = 1000,
        seed: int = 0,
    ) -> dict:
        matrix = stats.matrix_of(
            answers, lambda a: a.answer.get("preferred"), categories=PREFERENCES
        )
        grouped = stats.by_item(answers)
        majority = ag.majority_labels(matrix) if matrix.items else None
        wins = dict.fromkeys(PREFERENCES, 0)
        n_decided = 0
        if majority is not None:
            for code in majority.codes:
                if code >= 0:  # not tied, labelled
                    wins[str(matrix.categories[int(code)])] += 1
                    n_decided += 1
        prefs = [a.answer.get("preferred") for a in answers]
        sections = [
            {
                "title": "Preference (first / second system / tie)",
                "rows": [
                    stats.stat_row(
                        "Pairwise percent agreement",
                        ag.percent_agreement(matrix),
                        n=stats.n_pairable(matrix),
                        percent=True,
                    ),
                    stats.alpha_row(
                        "Krippendorff α (nominal)",
                        matrix,
                        level="nominal",
                        n_resamples=n_resamples,
                        seed=seed,
                    ),
                    stats.stat_row("Fleiss κ", ag.fleiss_kappa(matrix)),
                ],
            },
            {
                "title": "Preferences",
                "rows": [
                    stats.stat_row(
                        "First system preferred (share of answers)",
                        stats.share(prefs.count("first"), len(prefs)),
                        n=len(prefs),
                        percent=True,
                    ),
                    stats.stat_row(
                        "Second system preferred (share of answers)",
                        stats.share(prefs.count("second"), len(prefs)),
                        n=len(prefs),
                        percent=True,
                    ),
                    stats.stat_row(
                        "Tie (share of answers)",
                        stats.share(prefs.count("tie"), len(prefs)),
                        n=len(prefs),
                        percent=True,
                    ),
                    stats.stat_row(
                        "First system wins the item's majority",
                        stats.share(wins["first"], n_decided),
                        n=n_decided,
                        percent=True,
                    ),
                ],
            },
        ]
        return {
            "form_type": self.name,
            "n_items": len(grouped),
            "n_annotations": len(answers),
            "sections": sections,
            "summary": {"majority_wins": wins, "n_items_decided": n_decided},
        }
