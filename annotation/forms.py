"""The researcher's study form: settings plus the generations to annotate."""

from __future__ import annotations

from django import forms

from annotation import conf
from annotation.form_types.registry import form_choices
from annotation.known_items import KnownItemsError
from annotation.models import Study
from annotation.models.study import MAX_NEW_PARTICIPANTS_PER_ADDRESS
from annotation.selectors.study import generation_pairs, known_items_read, regular_generation_ids
from annotation.services.study import STUDY_SETTINGS
from benchmarks.models import Dataset, Generator
from core.forms import GatedFormMixin

KNOWN_ITEMS_MAX_BYTES = 5 * 1024 * 1024
FIELDS_MAX_BYTES = 256 * 1024  # the new-study form's typed fields together, with room to spare

# The new-study form in groups, the required choices first; a setting not listed here is
# shown last, under "Other settings", so none is ever left off the page.
STUDY_FORM_GROUPS = (
    ("What to label", ("dataset", "generator", "limit", "name", "description")),
    (
        "The item form",
        (
            "form_type",
            "form_config",
            "generator_b",
            "codebook_version",
            "show_resources",
            "click_through_l1",
            "min_seconds_per_item",
        ),
    ),
    (
        "Participants",
        (
            "entry",
            "overlap",
            "items_per_participant",
            "assignment_timeout_minutes",
            "sampling",
            "sampling_seed",
            "new_participants_per_address",
        ),
    ),
    (
        "Quality checks",
        (
            "known_items",
            "attention_rate",
            "attention_warn_after",
            "attention_screen_after",
            "qualification_pass_threshold",
            "gold_rate",
        ),
    ),
    ("Prolific", ("prolific_study_id", "completion_code", "screened_out_code")),
)


class RoundForm(GatedFormMixin, forms.Form):
    """The next round's name (empty: the study's name and the round's number)."""

    name = forms.CharField(max_length=200, required=False)


class StudyCreateForm(GatedFormMixin, forms.ModelForm):
    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.all(), help_text="Procedures come from this dataset."
    )
    generator = forms.ModelChoiceField(
        queryset=Generator.objects.all(), help_text="Its generations are the L2 to evaluate."
    )
    limit = forms.IntegerField(
        min_value=1, initial=200, help_text="How many generations (in procedure order)."
    )
    generator_b = forms.ModelChoiceField(
        queryset=Generator.objects.all(),
        required=False,
        label="Second generator (pairwise)",
        help_text="Pairwise studies only: each item pairs the first generator's generation of a "
        "procedure with this one's (procedures both generated, in procedure order, up to the "
        "limit).",
    )
    # a paid study's flow (optional; left out = the defaults)
    sampling = forms.ChoiceField(
        choices=Study.Sampling.choices,
        required=False,
        initial=Study.Sampling.LEAST_ANNOTATED,
        help_text="Which item a participant gets next: least annotated first, a balanced mix "
        "of topics, of generators or of both per participant, or a fixed seeded order.",
    )
    sampling_seed = forms.IntegerField(
        min_value=0, required=False, initial=0, help_text="Seed of the fixed seeded order."
    )
    gold_rate = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        required=False,
        initial=0.0,
        help_text="Silent gold items (kind gold) per regular item, e.g. 0.2; 0 = none.",
    )
    form_type = forms.ChoiceField(
        choices=form_choices,
        required=False,
        initial="critical_failure",
        help_text="The item form (docs: Study form types).",
    )
    known_items = forms.FileField(
        required=False,
        label="Known items (JSONL, optional)",
        help_text="Attention, training, qualification or silent gold items with known answers, "
        "one JSON object a line: the file create_study --known-items reads and the report's "
        "gold export writes; other form types give expected_label instead of "
        "expected_has_failure (docs: Study form types). Their generations are left out of the "
        "regular items.",
    )
    form_config = forms.JSONField(
        required=False,
        initial=dict,
        help_text='The form type\'s settings as JSON, e.g. {"preset": "scirecipe"} for a '
        'rating scale or {"pack": "longproc-countdown"} for solve mode; {} for none.',
    )

    new_participants_per_address = forms.IntegerField(
        min_value=0,
        max_value=MAX_NEW_PARTICIPANTS_PER_ADDRESS,
        required=False,
        initial=conf.new_participants_per_ip,
        label="New participants per network address per hour",
        help_text="More new Prolific participants from one address within an hour are refused "
        "(the page tells them why); 0 = no limit. Raise it for a lab session where everyone "
        "shares one network address. Empty: the default.",
    )

    field_order = [name for _, names in STUDY_FORM_GROUPS for name in names]

    class Meta:
        model = Study
        # every study setting a researcher sets at creation (a new study starts open)
        fields = ["name", *(f for f in STUDY_SETTINGS if f != "status")]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}
        labels = {
            "click_through_l1": "Participants click through the L1 steps too",
            "show_resources": "Show the procedure's resources",
            "overlap": "Annotators per item",
            "min_seconds_per_item": "Minimum seconds per item",
            "attention_warn_after": "Warn after this many failed attention checks",
            "attention_screen_after": "Screen out after this many failed attention checks",
            "qualification_pass_threshold": "Qualification pass threshold",
            "prolific_study_id": "Prolific study id",
            "form_config": "Form settings (JSON)",
        }

    def groups(self) -> list[tuple[str, list]]:
        """(legend, bound fields) in :data:`STUDY_FORM_GROUPS` order, then any other field."""
        listed = {name for _, names in STUDY_FORM_GROUPS for name in names}
        out = [
            (legend, [self[n] for n in names if n in self.fields])
            for legend, names in STUDY_FORM_GROUPS
        ]
        rest = [self[n] for n in self.fields if n not in listed]
        return [g for g in out if g[1]] + ([("Other settings", rest)] if rest else [])

    def clean(self):
        data = super().clean()
        pairwise = data.get("form_type") == "pairwise"
        second = data.get("generator_b")
        if second and not pairwise:
            self.add_error("generator_b", "A second generator is for pairwise studies only.")
        elif pairwise and not second:
            self.add_error("generator_b", "A pairwise study needs a second generator to pair.")
        elif pairwise and second == data.get("generator"):
            self.add_error("generator_b", "Choose a generator other than the first.")
        elif data.get("dataset") and data.get("generator") and data.get("limit"):
            if pairwise:
                data["pairs"] = generation_pairs(
                    dataset=data["dataset"],
                    generator=data["generator"],
                    generator_b=second,
                    limit=data["limit"],
                )
                if not data["pairs"]:
                    raise forms.ValidationError(
                        "These two generators have no procedure of this dataset in common."
                    )
                data["generation_ids"], data["known_items"] = [], self._known_items(data)
                return data
            known = self._known_items(data)
            ids = regular_generation_ids(
                dataset=data["dataset"],
                generator=data["generator"],
                exclude=[k["generation_id"] for k in known],
                limit=data["limit"],
            )
            if not ids:
                raise forms.ValidationError("This generator has no generations on this dataset.")
            data["generation_ids"], data["known_items"] = ids, known
        return data

    def _known_items(self, data) -> list[dict]:
        """The uploaded known items with their generation ids ([] without a file; a field
        error naming the line and the field for a bad one)."""
        upload = data.get("known_items")
        if not upload:
            return []
        if upload.size > KNOWN_ITEMS_MAX_BYTES:
            problem = f"The file is over {KNOWN_ITEMS_MAX_BYTES // (1024 * 1024)} MB."
        else:
            try:
                text = upload.read().decode("utf-8")
                return known_items_read(
                    dataset=data["dataset"],
                    generator=data["generator"],
                    lines=text.splitlines(),
                    source=upload.name,
                )
            except UnicodeDecodeError:
                problem = f"{upload.name}: not UTF-8 text."
            except KnownItemsError as exc:
                problem = str(exc)
        self.add_error("known_items", problem)
        return []

    def clean_form_type(self):
        return self.cleaned_data.get("form_type") or "critical_failure"

    def clean_form_config(self):
        return self.cleaned_data.get("form_config") or {}

    def clean_sampling(self):
        return self.cleaned_data.get("sampling") or Study.Sampling.LEAST_ANNOTATED

    def clean_sampling_seed(self):
        return self.cleaned_data.get("sampling_seed") or 0

    def clean_gold_rate(self):
        return self.cleaned_data.get("gold_rate") or 0.0

    def clean_new_participants_per_address(self):
        value = self.cleaned_data.get("new_participants_per_address")
        return conf.new_participants_per_ip() if value is None else value

    def settings(self) -> dict:
        return {f: self.cleaned_data[f] for f in self.Meta.fields if f != "name"}
