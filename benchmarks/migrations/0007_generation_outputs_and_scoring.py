# Generations keep how the model stopped, its token counts, a structured prediction and the
# scorer-pack results; procedures keep a pack's gold; ScoringRun applies a pack on the run engine.
from decimal import Decimal

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0006_generator_checkpoint"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="generation",
            name="completion_tokens",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="generation",
            name="finish_reason",
            field=models.CharField(blank=True, max_length=32),
        ),
        migrations.AddField(
            model_name="generation",
            name="pack_scores",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="generation",
            name="payload",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="generation",
            name="prompt_tokens",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="procedure",
            name="payload",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.CreateModel(
            name="ScoringRun",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("queued", "Queued"),
                            ("running", "Running"),
                            ("cancelling", "Cancelling"),
                            ("cancelled", "Cancelled"),
                            ("failed", "Failed"),
                            ("done", "Done"),
                        ],
                        db_index=True,
                        default="queued",
                        max_length=16,
                    ),
                ),
                ("n_total", models.PositiveIntegerField(default=0, help_text="items in the run")),
                (
                    "n_done",
                    models.PositiveIntegerField(
                        default=0, help_text="items finished, counted from rows"
                    ),
                ),
                (
                    "n_failed",
                    models.PositiveIntegerField(
                        default=0, help_text="items that failed for good, counted from rows"
                    ),
                ),
                ("prompt_tokens", models.BigIntegerField(default=0)),
                ("completion_tokens", models.BigIntegerField(default=0)),
                (
                    "cost",
                    models.DecimalField(decimal_places=6, default=Decimal("0"), max_digits=14),
                ),
                (
                    "lease_owner",
                    models.CharField(
                        blank=True,
                        help_text="token of the execution working the run",
                        max_length=64,
                    ),
                ),
                (
                    "heartbeat_at",
                    models.DateTimeField(
                        blank=True, help_text="last sign of life of that execution", null=True
                    ),
                ),
                ("error", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "pack",
                    models.CharField(
                        help_text="Scorer pack name (manage.py score --list).", max_length=64
                    ),
                ),
                (
                    "options",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text="The pack's named options; empty: the defaults.",
                    ),
                ),
                (
                    "chunk_size",
                    models.PositiveIntegerField(
                        default=500,
                        validators=[
                            django.core.validators.MinValueValidator(1),
                            django.core.validators.MaxValueValidator(10000),
                        ],
                    ),
                ),
                (
                    "cursor",
                    models.BigIntegerField(
                        default=0,
                        help_text="Last generation id handled in this attempt (0 again on resume).",
                    ),
                ),
                (
                    "errors",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="Most recent failures (source_example_id, error).",
                    ),
                ),
                (
                    "summary",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text="The pack's summary over the scored generations.",
                    ),
                ),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "dataset",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="scoring_runs",
                        to="benchmarks.dataset",
                    ),
                ),
                (
                    "generator",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="scoring_runs",
                        to="benchmarks.generator",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
            },
        ),
    ]
