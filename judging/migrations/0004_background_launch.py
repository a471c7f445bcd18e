"""Judge runs are launched in the background: a run's items are selected and hashed by the worker
before its first chunk (``prepared_at``); a cost estimate is a row worked by a Celery task; the
judge leaderboard is stored as last computed and recomputed by a worker."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import F


def existing_runs_are_prepared(apps, schema_editor):
    """Runs made before this migration got their items when they were created."""
    apps.get_model("judging", "JudgeRun").objects.update(prepared_at=F("created_at"))


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0003_parse_profiles_and_calls"),
        ("annotation", "0010_paid_study_flow"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="judgerun",
            name="prepared_at",
            field=models.DateTimeField(
                blank=True,
                help_text="when its items were selected and hashed (by the worker, before the "
                "first chunk)",
                null=True,
            ),
        ),
        migrations.RunPython(existing_runs_are_prepared, migrations.RunPython.noop),
        migrations.CreateModel(
            name="JudgeRunEstimate",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("selection", models.JSONField(blank=True, default=dict)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("queued", "Queued"),
                            ("running", "Running"),
                            ("done", "Done"),
                            ("failed", "Failed"),
                        ],
                        default="queued",
                        max_length=16,
                    ),
                ),
                ("result", models.JSONField(blank=True, null=True)),
                ("error", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
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
                    "judge",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="estimates",
                        to="judging.judge",
                    ),
                ),
            ],
            options={"ordering": ["-created_at"]},
        ),
        migrations.CreateModel(
            name="LeaderboardReport",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "key",
                    models.CharField(
                        help_text="hash of the judges and study", max_length=64, unique=True
                    ),
                ),
                (
                    "judges",
                    models.JSONField(
                        blank=True, help_text="judge names; null: every judge", null=True
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("queued", "Queued"),
                            ("running", "Running"),
                            ("done", "Done"),
                            ("failed", "Failed"),
                        ],
                        default="queued",
                        max_length=16,
                    ),
                ),
                (
                    "signature",
                    models.CharField(
                        blank=True,
                        help_text="the state of the data the result was computed on",
                        max_length=200,
                    ),
                ),
                (
                    "wanted",
                    models.CharField(
                        blank=True,
                        help_text="the state of the data asked for (queued, running)",
                        max_length=200,
                    ),
                ),
                ("result", models.JSONField(blank=True, null=True)),
                ("error", models.TextField(blank=True)),
                ("computed_at", models.DateTimeField(blank=True, null=True)),
                ("asked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "study",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="annotation.study",
                    ),
                ),
            ],
        ),
    ]
