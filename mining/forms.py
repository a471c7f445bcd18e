"""Forms of the mining pages: a new batch (upload, stages, one backend per LLM stage) and promotion."""

from __future__ import annotations

from django import forms

from benchmarks.llm.replay import recording_problem
from benchmarks.models import Dataset
from core.forms import GatedFormMixin
from core.secrets import llm_config_errors
from mining.budgets import BUDGET_KEYS
from mining.inputs import COLUMN_FIELDS
from mining.services.kept_uploads import kept_name, kept_upload, upload_keep
from mining.stages import LLM_STAGES, STAGE_LABELS, STAGE_NUMBERS, STAGES


class BatchForm(GatedFormMixin, forms.Form):
    name = forms.CharField(max_length=200, required=False)
    file = forms.FileField(
        required=False,  # required unless a file kept from a refused try is named (kept_file)
        help_text="JSONL or CSV (plain or .gz/.zst/.bz2/.xz), Parquet or Arrow with text, url, "
        "topic (records with goal and steps skip extraction)",
    )
    # the signed token of a file sent with a refused try (mining.services.kept_uploads)
    kept_file = forms.CharField(required=False, max_length=1000, widget=forms.HiddenInput)
    stages = forms.TypedMultipleChoiceField(
        choices=[(n, f"{n}. {label}") for n, _k, label, _p in STAGES],
        coerce=int,
        initial=[s[0] for s in STAGES],
        widget=forms.CheckboxSelectMultiple,
    )
    backend = forms.ChoiceField(
        choices=[
            ("openai", "OpenAI-compatible API"),
            ("replay", "Replay recorded replies (no model is called, nothing is paid)"),
        ],
        initial="openai",
        required=False,  # left out: the OpenAI-compatible API
        label="LLM backend",
    )
    recording = forms.CharField(
        required=False,
        max_length=500,
        label="Recording (replay)",
        help_text="The replay backend's JSONL recording of replies, a path inside the project, "
        "e.g. demo/fixtures/mining/replies.jsonl",
    )
    base_url = forms.CharField(
        required=False,
        max_length=500,
        help_text="OpenAI-compatible base URL (empty: the OpenAI API)",
    )
    model = forms.CharField(initial="gpt-4.1", max_length=200)
    api_key_env = forms.CharField(
        required=False,
        max_length=200,
        initial="OPENAI_API_KEY",
        help_text="NAME of the environment variable holding the key (the key is never stored)",
    )
    price_in_per_mtok = forms.DecimalField(
        required=False, min_value=0, help_text="USD per million prompt tokens"
    )
    price_out_per_mtok = forms.DecimalField(
        required=False, min_value=0, help_text="USD per million completion tokens"
    )
    min_steps = forms.IntegerField(min_value=1, initial=5)
    max_steps = forms.IntegerField(min_value=1, initial=15)
    # the column map: which input column holds each field (empty: the field's own name)
    column_text = forms.CharField(required=False, max_length=200, label="Text column")
    column_url = forms.CharField(required=False, max_length=200, label="URL column")
    column_topic = forms.CharField(required=False, max_length=200, label="Topic column")
    column_id = forms.CharField(required=False, max_length=200, label="Id column")
    candidates_per_topic = forms.IntegerField(
        required=False, min_value=1, help_text="at most this many documents per topic are mined"
    )
    desired_valid_per_topic = forms.IntegerField(
        required=False,
        min_value=1,
        help_text="stop a topic once this many of its documents passed every stage",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key in LLM_STAGES:
            self.fields[f"model_{key}"] = forms.CharField(
                required=False,
                max_length=200,
                label=f"Model for stage {STAGE_NUMBERS[key]} ({STAGE_LABELS[key]})",
                help_text="empty: the model above",
            )

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("file") and "file" not in self.errors:
            kept = kept_upload(cleaned.get("kept_file") or "")
            if kept is None:
                self.add_error("file", "Choose a file to upload.")
            else:
                cleaned["file"] = kept
        if cleaned.get("backend") == "replay":
            problem = recording_problem(cleaned.get("recording") or "")
            if problem:
                self.add_error("recording", problem)
            return cleaned
        # secrets by name only, LLM hosts from the allow-list (core.secrets: the one rule)
        for field, problem in llm_config_errors(
            api_key_env=cleaned.get("api_key_env") or "", base_url=cleaned.get("base_url") or ""
        ).items():
            self.add_error(field, problem)
        return cleaned

    def clean_backend(self):
        return self.cleaned_data.get("backend") or "openai"

    def keep_upload(self) -> None:
        """After a refusal: keep the file this try sent (or the one it named) for the next."""
        upload = self.files.get("file") if self.files else None
        token = self.data.get("kept_file") or ""
        if upload is not None and "file" not in self.errors:
            token = upload_keep(upload=upload)
        self.kept_token = token if kept_name(token) else ""
        self.kept_name = kept_name(self.kept_token)

    def options(self) -> dict:
        """The batch's options: steps, the column map, per-topic budgets."""
        d = self.cleaned_data
        columns = {
            key: d[f"column_{key}"].strip()
            for key in COLUMN_FIELDS
            if (d.get(f"column_{key}") or "").strip()
        }
        return {
            "min_steps": d["min_steps"],
            "max_steps": d["max_steps"],
            "columns": columns,
            **{key: d.get(key) for key in BUDGET_KEYS},
        }

    def backends(self) -> dict:
        d = self.cleaned_data
        if d.get("backend") == "replay":
            default = {"backend": "replay", "model": d["model"], "recording": d["recording"]}
            out = {"default": default}
            for key in LLM_STAGES:
                if d.get(f"model_{key}"):
                    out[key] = {**default, "model": d[f"model_{key}"]}
            return out
        default = {
            "backend": "openai",
            "model": d["model"],
            "api_key_env": d.get("api_key_env") or "",
        }
        if d.get("base_url"):
            default["base_url"] = d["base_url"]
        for key in ("price_in_per_mtok", "price_out_per_mtok"):
            if d.get(key) is not None:
                default[key] = float(d[key])
        out = {"default": default}
        for key in LLM_STAGES:
            if d.get(f"model_{key}"):
                out[key] = {**default, "model": d[f"model_{key}"]}
        return out


class PromoteForm(GatedFormMixin, forms.Form):
    dataset_name = forms.CharField(max_length=128)
    version = forms.CharField(max_length=32, initial="v1")
    per_topic = forms.IntegerField(min_value=1, initial=500)
    seed = forms.IntegerField(initial=0)
    dedup_against = forms.ModelChoiceField(
        queryset=Dataset.objects.all(),
        required=False,
        help_text="drop procedures whose cosine similarity to one of its procedures exceeds the threshold",
    )
    threshold = forms.FloatField(min_value=0.01, max_value=1.0, initial=0.65)
