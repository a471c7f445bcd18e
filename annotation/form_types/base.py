"""The form-type contract (pure Python, no Django): what one study form is made of.

A form type is one module under :mod:`annotation.form_types` holding a :class:`FormType`
subclass: its settings (``clean_config``), the form's fields as posted (``parse``, lenient,
for drafts), what stops a submission (``errors``), the known-answer rule (``matches``), the
label's export columns and its agreement level (``agreement``). Its template partial is
``templates/annotation/forms/_<name>.html``; the registry (:mod:`.registry`) finds it by name.

Everything a study form shares (Prolific entry, consent, training, qualification, attention
checks, the minimum time, autosave, assignment with overlap k, exports) stays in the flow;
a form type only says what the answer is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FormData = Mapping[str, Sequence[str]]
MAX_TEXT = 5_000


class FormConfigError(ValueError):
    """A study's form settings that the form type refuses; ``field`` names the setting."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


@dataclass(frozen=True)
class ItemView:
    """What an item page shows, as plain data (built from the study item by the flow)."""

    goal: str
    l1: Sequence[str] = ()
    l2: Sequence[str] = ()
    l2_b: Sequence[str] = ()
    context: Mapping[str, Any] = field(default_factory=dict)
    swapped: bool = False  # pairwise: the second generation is shown first


@dataclass(frozen=True)
class AnnotatedAnswer:
    """One submitted answer for the agreement level."""

    item: Any
    annotator: Any
    answer: Mapping[str, Any]


def first(data: FormData, name: str) -> str:
    values = data.get(name) or []
    return values[0] if values else ""


def clean_text(value: str) -> str:
    """Typed text as kept: trimmed, never cut (an over-long text is refused at submission,
    :meth:`FormType.text_limit`)."""
    return (value or "").strip()


class FormType:
    """The base of every form type; subclasses set ``name``, ``title`` and override what
    differs. Every method is pure: plain data in, plain data out."""

    name: str = ""
    title: str = ""
    description: str = ""
    # click through every L1/L2 step before submitting (the critical-failure page does)
    reads_steps: bool = False

    @property
    def template(self) -> str:
        return f"annotation/forms/_{self.name}.html"

    # --- settings ------------------------------------------------------------------------
    def clean_config(self, config: Mapping[str, Any]) -> dict:
        """The study's settings, checked and with defaults filled in (FormConfigError)."""
        if config:
            raise FormConfigError(
                "form_config", f"the {self.name} form takes no settings; leave it empty ({{}})"
            )
        return {}

    def check_available(self, config: Mapping[str, Any]) -> None:
        """What a study's settings need that may come and go (a scorer pack), checked when
        the study is saved, not on every page (FormConfigError)."""

    # --- one answer ----------------------------------------------------------------------
    def parse(self, data: FormData, *, config: Mapping, item: ItemView | None = None) -> dict:
        """The answer as posted, read leniently (a draft may be half done)."""
        raise NotImplementedError

    def errors(
        self, answer: Mapping, *, config: Mapping, item: ItemView | None = None
    ) -> list[str]:
        """What stops this answer from being submitted, each naming the question."""
        raise NotImplementedError

    def text_fields(self, answer: Mapping) -> list[tuple[str, str]]:
        """(field name, free text) pairs for the text gate."""
        return []

    def text_limit(self, name: str) -> int:
        """The length limit of the free-text field ``name`` of :meth:`text_fields`."""
        return MAX_TEXT

    def finalize(self, answer: Mapping, *, config: Mapping, item: ItemView) -> dict:
        """The answer as stored at submission (e.g. a solve answer with its score)."""
        return dict(answer)

    def has_failure(self, answer: Mapping, *, config: Mapping) -> bool:
        """The answer as the shared yes/no column (``Annotation.has_failure``)."""
        return False

    def quality_value(self, answer: Mapping, *, config: Mapping) -> Any:
        """The hashable value compared with the other annotators' majority on the quality
        page (default: the shared yes/no column)."""
        return self.has_failure(answer, config=config)

    def clean_expected(self, expected: Any, *, config: Mapping) -> dict:
        """A known item's expected answer (attention, training, qualification), checked."""
        raise FormConfigError("expected_label", f"the {self.name} form has no known answers")

    def matches(self, answer: Mapping, expected: Mapping, *, config: Mapping) -> bool:
        """Whether an answer passes a known item: every expected key has the expected value."""
        return all(answer.get(key) == value for key, value in expected.items())

    # --- the page ------------------------------------------------------------------------
    def page_context(self, *, answer: Mapping, config: Mapping, item: ItemView) -> dict:
        """What the template partial shows (computed here, so templates compute nothing)."""
        return {}

    # --- the codebook (training page) and answers in words ---------------------------------
    def codebook(self, *, config: Mapping) -> dict:
        """The training page's instructions: ``{"title", "lead", "points": [text]}`` (the
        critical-failure form keeps its own codebook, :mod:`annotation.codebook`)."""
        return {"title": self.title, "lead": self.description, "points": []}

    def describe(self, answer: Mapping, *, config: Mapping) -> list[str]:
        """An answer in words, one line each (the already-submitted page, the retry notice)."""
        fields = self.export_fields(answer, config=config)
        return [f"{k}: {v}" for k, v in fields.items()]

    def describe_expected(self, expected: Mapping, *, config: Mapping) -> str:
        """A known item's expected answer in words (training examples, the retry notice)."""
        return "; ".join(f"{k}: {v}" for k, v in (expected or {}).items())

    # --- exports and agreement -----------------------------------------------------------
    def export_fields(self, answer: Mapping, *, config: Mapping) -> dict:
        """Flat columns of one answer for the CSV/JSONL exports."""
        return {f"label_{k}": v for k, v in answer.items() if not isinstance(v, (dict, list))}

    def agreement(
        self,
        answers: Sequence[AnnotatedAnswer],
        *,
        config: Mapping,
        n_resamples: int = 1000,
        seed: int = 0,
    ) -> dict:
        """The agreement report: ``{"form_type", "n_items", "n_annotations", "sections":
        [{"title", "rows": [{"name", "stat": {value|undefined}, "ci"?: {...}, "n"?}]}],
        "summary": {...}}`` (every number through ``annotation.agreement``)."""
        raise NotImplementedError


@dataclass(frozen=True)
class BoundForm:
    """A form type with one study's checked settings (what the flow holds)."""

    type: FormType
    config: dict

    @property
    def name(self) -> str:
        return self.type.name

    @property
    def template(self) -> str:
        return self.type.template

    @property
    def is_critical_failure(self) -> bool:
        return self.type.name == "critical_failure"

    def parse(self, data: FormData, item: ItemView | None = None) -> dict:
        return self.type.parse(data, config=self.config, item=item)

    def errors(self, answer: Mapping, item: ItemView | None = None) -> list[str]:
        return self.type.errors(answer, config=self.config, item=item)

    def matches(self, answer: Mapping, expected: Mapping) -> bool:
        return self.type.matches(answer, expected, config=self.config)

    def agreement(self, answers: Sequence[AnnotatedAnswer], **kwargs) -> dict:
        return self.type.agreement(answers, config=self.config, **kwargs)

    def known_answer(
        self,
        *,
        answer: Mapping,
        has_failure: bool,
        expected_label: Mapping | None,
        expected_has_failure: bool | None,
    ) -> tuple[bool, str]:
        """Whether an answer to a known item (attention, qualification, gold) is right, and
        the detail to record: the form type's rule (``matches``) against ``expected_label``
        for the types other than critical failure; ``has_failure`` against
        ``expected_has_failure`` for the critical-failure form (the one home of this rule)."""
        if expected_label is not None and (
            not self.is_critical_failure or expected_has_failure is None
        ):
            passed = self.matches(answer, expected_label)
            return passed, f"answered {dict(answer)}, expected {dict(expected_label)}"[:255]
        passed = has_failure == expected_has_failure
        return passed, f"answered has_failure={has_failure}, expected {expected_has_failure}"
