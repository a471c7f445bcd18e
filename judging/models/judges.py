"""Judges and their judgments (seed 000 §4, H.3). Runs are in :mod:`judging.models.runs`."""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import MinValueValidator
from django.db import models

from judging import prompting
from judging.models.prompts import PromptVersion
from judging.parsing import DEFAULT_PROFILE, PARSE_PROFILES


class Judge(models.Model):
    """An LLM judge: backend + model + prompt + decoding. Keys are never stored: only the name
    of the environment variable holding one (``api_key_env``)."""

    class Backend(models.TextChoices):
        OPENAI = "openai", "OpenAI-compatible HTTP"
        VLLM = "vllm", "vLLM offline (gpu queue)"
        IMPORTED = "imported", "Imported judgments"
        REPLAY = "replay", "Recorded replies (replay: no model is called)"

    class Endpoint(models.TextChoices):
        CHAT = "chat", "chat/completions"
        COMPLETIONS = "completions", "completions"

    name = models.CharField(max_length=128, unique=True)
    backend = models.CharField(max_length=16, choices=Backend.choices, default=Backend.OPENAI)
    # the provider's Batch API instead of one request at a time (openai backend only):
    # benchmarks.llm.batch; billed at batch_price_factor x the prices below
    batch_mode = models.BooleanField(
        default=False,
        help_text="Send the run's requests as batch files (OpenAI Batch API): cheaper, up to 24 h",
    )
    batch_price_factor = models.DecimalField(
        max_digits=5,
        decimal_places=3,
        default=Decimal("0.5"),
        help_text="Batch price relative to the prices per million tokens (OpenAI: 0.5)",
    )
    base_url = models.CharField(
        max_length=500, blank=True, help_text="e.g. https://api.openai.com/v1 or a vLLM server"
    )
    model = models.CharField(max_length=255, blank=True)
    api_key_env = models.CharField(
        max_length=128,
        blank=True,
        help_text="NAME of the environment variable holding the API key (never the key)",
    )
    endpoint = models.CharField(max_length=16, choices=Endpoint.choices, default=Endpoint.CHAT)
    recording = models.CharField(
        max_length=500,
        blank=True,
        help_text="replay backend: the recorded replies it answers from, a JSONL file under the "
        "project directory (e.g. demo/fixtures/judge/replies.jsonl)",
    )
    prompt_template = models.CharField(
        max_length=64,
        default=prompting.DEFAULT_TEMPLATE,
        help_text="the prompt's name; without a version chosen, its shipped text (version 1)",
    )
    prompt_version = models.ForeignKey(
        PromptVersion,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="judges",
        help_text="the prompt text this judge sends (its judge id hashes the text)",
    )
    decoding = models.JSONField(
        default=dict,
        blank=True,
        help_text='e.g. {"temperature": 0, "max_tokens": 4096, "reasoning_effort": "low"}',
    )
    structured_output = models.BooleanField(default=True, help_text="ask for the H.3 JSON schema")
    parse_profile = models.CharField(
        max_length=16,
        choices=[(p, p) for p in PARSE_PROFILES],
        default=DEFAULT_PROFILE,
        help_text="reference: the reference implementation's strict JSON rules and retries "
        "(numbers compare with published ones); lenient: recover fenced or wrapped JSON",
    )
    concurrency = models.PositiveIntegerField(default=16, validators=[MinValueValidator(1)])
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    tokens_per_minute = models.PositiveIntegerField(null=True, blank=True)
    timeout_s = models.FloatField(default=120.0)
    max_retries = models.PositiveSmallIntegerField(default=5)
    price_input_per_mtok = models.DecimalField(
        max_digits=10, decimal_places=4, default=Decimal("0")
    )
    price_output_per_mtok = models.DecimalField(
        max_digits=10, decimal_places=4, default=Decimal("0")
    )
    expected_output_tokens = models.PositiveIntegerField(
        default=800, help_text="for cost estimates"
    )
    judge_id = models.CharField(max_length=64, db_index=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        if self.prompt_version_id is None:  # the shipped text of the named prompt
            self.prompt_version = PromptVersion.objects.shipped(self.prompt_template)
        if self.prompt_version is not None:
            self.prompt_template = self.prompt_version.name
        self.judge_id = self.compute_judge_id()
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = set(kwargs["update_fields"]) | {
                "judge_id",
                "prompt_template",
                "prompt_version",
            }
        super().save(*args, **kwargs)

    def prompt_text(self) -> str:
        """The prompt template this judge sends: its version's text, else the shipped file of
        ``prompt_template`` (``ValueError`` naming the known ones when there is none)."""
        if self.prompt_version_id is not None:
            return self.prompt_version.text
        return prompting.load_template(self.prompt_template)

    def family_config(self) -> dict:
        """What decides the verdicts apart from the prompt's text: judges equal here are one
        family, whose prompt versions the validation page compares."""
        return self.identity_config()

    # what decides the verdicts: part of judge_id (limits, prices, names are not)
    def identity_config(self) -> dict:
        replay = {"recording": self.recording} if self.backend == self.Backend.REPLAY else {}
        return {
            **replay,
            "backend": self.backend,
            "model": self.model,
            "endpoint": self.endpoint,
            "base_url": self.base_url if self.backend == self.Backend.IMPORTED else "",
            "name": self.name if self.backend == self.Backend.IMPORTED else "",
            "prompt_template": self.prompt_template,
            "decoding": self.decoding or {},
            "structured_output": self.structured_output,
            "parse_profile": self.parse_profile,
        }

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        from core.secrets import llm_config_errors

        errors = {}
        if self.prompt_version_id is None and (
            self.prompt_template not in prompting.template_names()
        ):
            errors["prompt_template"] = (
                f"unknown template {self.prompt_template!r}; "
                f"known: {', '.join(prompting.template_names())}"
            )
        # secrets by name only, LLM hosts from the allow-list: core.secrets, the one rule
        errors.update(
            llm_config_errors(
                api_key_env=self.api_key_env,
                base_url=self.base_url if self.backend == self.Backend.OPENAI else "",
            )
        )
        if not isinstance(self.decoding, dict):
            errors["decoding"] = "must be a JSON object"
        elif self.backend != self.Backend.IMPORTED:
            from benchmarks.llm import vllm_options

            problems = vllm_options.errors(
                self.decoding, prefix="decoding.", engine=self.backend == self.Backend.VLLM
            )
            if problems:
                errors["decoding"] = problems
        if self.backend == self.Backend.REPLAY:
            from benchmarks.llm.replay import recording_problem

            problem = recording_problem(self.recording)
            if problem:
                errors["recording"] = problem
        if self.backend != self.Backend.IMPORTED and not self.model:
            errors["model"] = "required for this backend"
        if errors:
            raise ValidationError(errors)

    def compute_judge_id(self) -> str:
        try:
            text = self.prompt_text()
        except ValueError:
            text = ""
        return prompting.canonical_judge_id(config=self.identity_config(), prompt_text=text)

    def backend_config(self) -> dict:
        """The config dict for :func:`benchmarks.llm.registry.build_backend`."""
        return {
            "backend": self.backend,
            "base_url": self.base_url,
            "model": self.model,
            "api_key_env": self.api_key_env,
            "endpoint": self.endpoint,
            "concurrency": self.concurrency,
            "requests_per_minute": self.requests_per_minute,
            "tokens_per_minute": self.tokens_per_minute,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "structured_output": self.structured_output,
            "ramp_up_s": 0.2,  # a run is one long stream: spread the first wave, then pace
            "mode": "batch"
            if self.batch_mode and self.backend == self.Backend.OPENAI
            else "online",
            "batch_price_factor": str(self.batch_price_factor),
            **{k: v for k, v in (self.decoding or {}).items() if k.startswith("vllm")},
            **({"recording": self.recording} if self.backend == self.Backend.REPLAY else {}),
        }


class Judgment(models.Model):
    """A judge's verdict on one content (goal + reference steps + candidate steps).
    Unique per (judge_key, content_hash): the same judge never judges the same content twice."""

    # what one judge call produced: the parsed verdict, how the parse went, the raw reply and
    # its usage (a judgment replacing a parse failure overwrites these; the API shows them)
    OUTCOME_FIELDS = (
        "reasoning",
        "critical_failures",
        "has_failure",
        "n_failures",
        "parse_failed",
        "parse_error",
        "parse_warnings",
        "raw_output",
        "prompt_tokens",
        "completion_tokens",
        "latency_s",
    )

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="judgments")
    judge_key = models.CharField(
        max_length=64, help_text="the judge's judge_id (config + prompt hash) when judged"
    )
    content_hash = models.CharField(max_length=64)
    source_example_id = models.CharField(max_length=255, blank=True)
    reasoning = models.TextField(blank=True)
    critical_failures = models.JSONField(default=list, blank=True)
    has_failure = models.BooleanField(default=False)
    n_failures = models.PositiveIntegerField(default=0)
    parse_failed = models.BooleanField(default=False)
    parse_error = models.CharField(max_length=500, blank=True)
    parse_warnings = models.JSONField(default=list, blank=True)
    raw_output = models.TextField(blank=True)
    n_calls = models.PositiveSmallIntegerField(
        default=1, help_text="model calls that led to this judgment (parse retries included)"
    )
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_s = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["judge_key", "content_hash"], name="judgment_once_per_judge_content"
            ),
        ]

    def __str__(self) -> str:
        verdict = "parse failed" if self.parse_failed else f"{self.n_failures} failure(s)"
        return f"{self.judge.name}: {self.source_example_id} ({verdict})"
