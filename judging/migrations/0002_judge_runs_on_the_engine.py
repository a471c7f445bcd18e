"""Judge runs become runs of the engine (core.runs): one status vocabulary, ``n_errors`` is
``n_failed``, a cancel request is the status ``cancelling``, the lease's expiry
(``lease_until``) becomes the execution's last heartbeat (``heartbeat_at``); run items say
whether their judgment was reused (so a run's counters can be counted from its items).

Existing rows keep their data: pending → queued, succeeded → done, running or pending with a
cancel request → cancelling (a pending run nobody held was already cancelled), counters, tokens,
cost and text carried over. Reversible.
"""

import os
from datetime import timedelta

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import F, Q

# what the old code held a lease for (H2R_JUDGE_LEASE_S): lease_until = last renewal + this
OLD_LEASE_S = float(os.environ.get("H2R_JUDGE_LEASE_S", "60"))

NEW_STATUS_CHOICES = [
    ("queued", "Queued"),
    ("running", "Running"),
    ("cancelling", "Cancelling"),
    ("cancelled", "Cancelled"),
    ("failed", "Failed"),
    ("done", "Done"),
]


def forward(apps, schema_editor):
    JudgeRun = apps.get_model("judging", "JudgeRun")
    JudgeRunItem = apps.get_model("judging", "JudgeRunItem")
    runs = JudgeRun.objects
    runs.filter(status__in=("pending", "running"), cancel_requested=True).update(
        status="cancelling"
    )
    runs.filter(status="pending").update(status="queued")
    runs.filter(status="succeeded").update(status="done")
    # the last renewal of a lease is the execution's last heartbeat
    runs.filter(lease_until__isnull=False).update(
        heartbeat_at=F("lease_until") - timedelta(seconds=OLD_LEASE_S)
    )
    # a judgment made before the run was reused by it (a duplicate inside the run cannot be
    # told apart any more: it counts as asked)
    JudgeRunItem.objects.filter(judgment__created_at__lt=F("run__created_at")).update(reused=True)
    _checks_now(schema_editor)


def backward(apps, schema_editor):
    JudgeRun = apps.get_model("judging", "JudgeRun")
    runs = JudgeRun.objects
    runs.filter(status="cancelling").update(status="running", cancel_requested=True)
    runs.filter(status="queued").update(status="pending")
    runs.filter(status="done").update(status="succeeded")
    runs.filter(heartbeat_at__isnull=False).update(
        lease_until=F("heartbeat_at") + timedelta(seconds=OLD_LEASE_S)
    )
    runs.filter(~Q(status__in=("pending", "running"))).update(lease_until=None)
    _checks_now(schema_editor)


def _checks_now(schema_editor):
    """PostgreSQL refuses to ALTER a table with deferred constraint checks pending from the
    updates above (same transaction): run them now."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0001_judges_runs_judgments"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # schema first, with the old fields still there
        migrations.AddField(
            model_name="judgerun",
            name="heartbeat_at",
            field=models.DateTimeField(
                blank=True, help_text="last sign of life of that execution", null=True
            ),
        ),
        migrations.RenameField(model_name="judgerun", old_name="n_errors", new_name="n_failed"),
        migrations.AlterField(
            model_name="judgerun",
            name="n_failed",
            field=models.PositiveIntegerField(
                default=0, help_text="items that failed for good, counted from rows"
            ),
        ),
        migrations.AddField(
            model_name="judgerunitem",
            name="reused",
            field=models.BooleanField(
                default=False,
                help_text=(
                    "linked to a judgment this run did not ask for (made before, or a duplicate)"
                ),
            ),
        ),
        # data
        migrations.RunPython(forward, backward, elidable=False),
        # then the old fields go
        migrations.RemoveField(model_name="judgerun", name="cancel_requested"),
        migrations.RemoveField(model_name="judgerun", name="lease_until"),
        migrations.AlterField(
            model_name="judgerun",
            name="status",
            field=models.CharField(
                choices=NEW_STATUS_CHOICES, db_index=True, default="queued", max_length=16
            ),
        ),
        migrations.AlterField(
            model_name="judgerun",
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
            model_name="judgerun",
            name="lease_owner",
            field=models.CharField(
                blank=True, help_text="token of the execution working the run", max_length=64
            ),
        ),
        migrations.AlterField(
            model_name="judgerun",
            name="n_done",
            field=models.PositiveIntegerField(
                default=0, help_text="items finished, counted from rows"
            ),
        ),
        migrations.AlterField(
            model_name="judgerun",
            name="n_reused",
            field=models.PositiveIntegerField(
                default=0, help_text="items linked to a judgment made before (free)"
            ),
        ),
        migrations.AlterField(
            model_name="judgerun",
            name="n_total",
            field=models.PositiveIntegerField(default=0, help_text="items in the run"),
        ),
    ]
