"""GenerationRun: one generator run over a dataset (or some of its topics) with the H.2
prompts, worked by the run engine (:mod:`core.runs`).

The run holds the backend configuration (base URL, model, the NAME of the environment
variable with the API key — never the key —, decoding parameters, concurrency), the recent
errors, the scorer summary and the walk's position (``cursor``); status, counters, tokens,
cost, lease and error text are the engine's (:class:`core.runs.models.Run`). Work goes in
chunks along the procedures of the selection ordered by id: ``n_done`` counts the procedures of
the selection with a generation by the generator, ``n_failed`` those of this attempt (up to the
cursor) that failed for good.
"""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from core.runs.models import Run


class GenerationRun(Run):
    class Variant(models.TextChoices):
        BASE = "base", "Base (H.2, Figure 20)"
        INSTRUCT = "instruct", "Instruct (H.2, Figure 21)"

    MAX_ERRORS_KEPT = 50

    generator = models.ForeignKey(  # indexed by genrun_generator_status_idx, which leads with it
        "benchmarks.Generator",
        on_delete=models.CASCADE,
        related_name="generation_runs",
        db_index=False,
    )
    dataset = models.ForeignKey(
        "benchmarks.Dataset", on_delete=models.CASCADE, related_name="generation_runs"
    )
    topics = models.ManyToManyField(
        "benchmarks.Topic",
        blank=True,
        related_name="generation_runs",
        help_text="Selection; empty means the whole dataset.",
    )
    variant = models.CharField(max_length=16, choices=Variant.choices, default=Variant.INSTRUCT)
    # The paper whose prompt, answer format and budget the run uses (benchmarks.packs.protocols):
    # "how2everything" (the H.2 prompts above) or a scorer pack's name (procbench, scirecipe,
    # customplans, longproc-<task>), with that protocol's named options.
    protocol = models.CharField(
        max_length=64,
        default="how2everything",
        help_text="Generation protocol: how2everything (H.2) or a scorer pack's paper protocol.",
    )
    protocol_options = models.JSONField(
        default=dict, blank=True, help_text="The protocol's named options; empty: its defaults."
    )
    prompt_sha256 = models.CharField(max_length=64, blank=True)

    # backend configuration (benchmarks.llm.registry.build_backend); no secrets stored
    backend = models.CharField(
        max_length=255, default="openai", help_text="Registered LLM backend name or dotted path."
    )
    base_url = models.CharField(max_length=500, blank=True)
    model = models.CharField(max_length=255)
    api_key_env = models.CharField(
        max_length=128,
        blank=True,
        help_text="Name of the environment variable holding the API key.",
    )
    decoding = models.JSONField(
        default=dict,
        blank=True,
        help_text="temperature, max_tokens, stop, top_p (H.2 / D.1 defaults).",
    )
    backend_options = models.JSONField(
        default=dict,
        blank=True,
        help_text="Other backend config: timeout_s, max_retries, requests_per_minute…",
    )
    concurrency = models.PositiveIntegerField(
        default=16, validators=[MinValueValidator(1), MaxValueValidator(1024)]
    )
    chunk_size = models.PositiveIntegerField(
        default=64, validators=[MinValueValidator(1), MaxValueValidator(10_000)]
    )
    scorers = models.JSONField(
        default=list, blank=True, help_text="Scorer names or dotted paths; empty: all built-in."
    )
    parse_profile = models.CharField(
        max_length=16,
        choices=[("reference", "reference"), ("lenient", "lenient")],
        default="reference",
        help_text="Step parser: reference (the reference implementation's rules) or lenient.",
    )
    input_price_per_mtok = models.DecimalField(max_digits=12, decimal_places=4, default=Decimal(0))
    output_price_per_mtok = models.DecimalField(max_digits=12, decimal_places=4, default=Decimal(0))

    # the walk of this attempt and what it found
    cursor = models.BigIntegerField(
        default=0, help_text="Last procedure id handled in this attempt (0 again on resume)."
    )
    errors = models.JSONField(
        default=list, blank=True, help_text="Most recent failures (source_example_id, error)."
    )
    scores = models.JSONField(
        default=dict, blank=True, help_text="Scorer summary over the selection's generations."
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["generator", "status"], name="genrun_generator_status_idx")]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.generator} on {self.dataset} ({self.status})"
