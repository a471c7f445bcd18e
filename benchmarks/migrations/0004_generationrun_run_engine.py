"""GenerationRun becomes a run of the run engine (core.runs.models.Run): one status vocabulary
(pending → queued, completed → done, running or pending with a cancel request → cancelling),
``message`` → ``error``, a lease (``lease_owner``, ``heartbeat_at``) instead of ``epoch`` and
``cancel_requested``. Counters, tokens, cost, cursor, errors and scores are kept as they are."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

FORWARD = {"pending": "queued", "completed": "done"}


def _check_constraints_now(schema_editor):
    """PostgreSQL refuses to ALTER a table with deferred foreign-key checks pending from the
    row updates above in the same transaction: run those checks now."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def to_engine_statuses(apps, schema_editor):
    GenerationRun = apps.get_model("benchmarks", "GenerationRun")
    GenerationRun.objects.filter(status__in=("pending", "running"), cancel_requested=True).update(
        status="cancelling"
    )
    for old, new in FORWARD.items():
        GenerationRun.objects.filter(status=old).update(status=new)
    _check_constraints_now(schema_editor)


def to_old_statuses(apps, schema_editor):
    GenerationRun = apps.get_model("benchmarks", "GenerationRun")
    GenerationRun.objects.filter(status="cancelling").update(
        status="running", cancel_requested=True
    )
    for old, new in FORWARD.items():
        GenerationRun.objects.filter(status=new).update(status=old)
    # every start used to open an epoch: a started run is in one
    GenerationRun.objects.filter(started_at__isnull=False).update(epoch=1)
    _check_constraints_now(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0003_study_flow"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="generationrun",
            name="lease_owner",
            field=models.CharField(
                blank=True, help_text="token of the execution working the run", max_length=64
            ),
        ),
        migrations.AddField(
            model_name="generationrun",
            name="heartbeat_at",
            field=models.DateTimeField(
                blank=True, help_text="last sign of life of that execution", null=True
            ),
        ),
        migrations.RenameField(model_name="generationrun", old_name="message", new_name="error"),
        migrations.AlterField(
            model_name="generationrun",
            name="status",
            field=models.CharField(
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
        migrations.RunPython(to_engine_statuses, to_old_statuses),
        migrations.RemoveField(model_name="generationrun", name="cancel_requested"),
        migrations.RemoveField(model_name="generationrun", name="epoch"),
        migrations.AlterField(
            model_name="generationrun",
            name="created_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="generationrun",
            name="cursor",
            field=models.BigIntegerField(
                default=0,
                help_text="Last procedure id handled in this attempt (0 again on resume).",
            ),
        ),
        migrations.AlterField(
            model_name="generationrun",
            name="n_done",
            field=models.PositiveIntegerField(
                default=0, help_text="items finished, counted from rows"
            ),
        ),
        migrations.AlterField(
            model_name="generationrun",
            name="n_failed",
            field=models.PositiveIntegerField(
                default=0, help_text="items that failed for good, counted from rows"
            ),
        ),
        migrations.AlterField(
            model_name="generationrun",
            name="n_total",
            field=models.PositiveIntegerField(default=0, help_text="items in the run"),
        ),
    ]
