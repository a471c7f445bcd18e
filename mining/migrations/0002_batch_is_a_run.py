"""Mining batches become runs of the run engine (:class:`core.runs.models.Run`).

Schema: ``n_documents`` → ``n_total``, ``runner`` → ``lease_owner``; new ``n_failed``, tokens,
cost and ``updated_at``; ``cancel_requested`` goes (a requested cancel is the status
``cancelling``); ``status`` takes the engine's words.

Data (and back): pending → queued, completed → done, running → running, cancelled and failed
stay; a pending or running batch with a cancel request → cancelling. Tokens and cost are the
sums of the batch's stage usage rows. ``n_failed`` stays 0: error documents are counted in
``n_done`` (documents with an outcome), as before.
"""

from decimal import Decimal

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models
from django.db.models import Sum

FORWARD = {"pending": "queued", "completed": "done"}
BACKWARD = {"queued": "pending", "done": "completed", "cancelling": "running"}
OLD_ACTIVE = ("pending", "running")


def forward(apps, schema_editor):
    MiningBatch = apps.get_model("mining", "MiningBatch")
    MiningStageUsage = apps.get_model("mining", "MiningStageUsage")
    batches = MiningBatch.objects.using(schema_editor.connection.alias)
    batches.filter(status__in=OLD_ACTIVE, cancel_requested=True).update(status="cancelling")
    for old, new in FORWARD.items():
        batches.filter(status=old).update(status=new)
    usage = (
        MiningStageUsage.objects.using(schema_editor.connection.alias)
        .values("batch_id")
        .annotate(
            prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"), cost=Sum("cost_usd")
        )
    )
    for row in usage:
        batches.filter(pk=row["batch_id"]).update(
            prompt_tokens=row["prompt"] or 0,
            completion_tokens=row["completion"] or 0,
            cost=row["cost"] or Decimal(0),
        )


def backward(apps, schema_editor):
    MiningBatch = apps.get_model("mining", "MiningBatch")
    batches = MiningBatch.objects.using(schema_editor.connection.alias)
    batches.filter(status="cancelling").update(status="running", cancel_requested=True)
    for new, old in BACKWARD.items():
        batches.filter(status=new).update(status=old)


class Migration(migrations.Migration):
    dependencies = [
        ("mining", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameField("miningbatch", "n_documents", "n_total"),
        migrations.RenameField("miningbatch", "runner", "lease_owner"),
        migrations.AddField(
            model_name="miningbatch",
            name="n_failed",
            field=models.PositiveIntegerField(
                default=0, help_text="items that failed for good, counted from rows"
            ),
        ),
        migrations.AddField(
            model_name="miningbatch",
            name="prompt_tokens",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="miningbatch",
            name="completion_tokens",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="miningbatch",
            name="cost",
            field=models.DecimalField(decimal_places=6, default=Decimal(0), max_digits=14),
        ),
        migrations.AddField(
            model_name="miningbatch",
            name="updated_at",
            field=models.DateTimeField(auto_now=True, default=django.utils.timezone.now),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="miningbatch",
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
        migrations.RunPython(forward, backward),
        migrations.RemoveField(model_name="miningbatch", name="cancel_requested"),
        migrations.AlterField(
            model_name="miningbatch",
            name="n_total",
            field=models.PositiveIntegerField(default=0, help_text="items in the run"),
        ),
        migrations.AlterField(
            model_name="miningbatch",
            name="n_done",
            field=models.PositiveIntegerField(
                default=0, help_text="items finished, counted from rows"
            ),
        ),
        migrations.AlterField(
            model_name="miningbatch",
            name="lease_owner",
            field=models.CharField(
                blank=True, help_text="token of the execution working the run", max_length=64
            ),
        ),
        migrations.AlterField(
            model_name="miningbatch",
            name="heartbeat_at",
            field=models.DateTimeField(
                blank=True, help_text="last sign of life of that execution", null=True
            ),
        ),
        migrations.AlterField(
            model_name="miningbatch",
            name="created_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
