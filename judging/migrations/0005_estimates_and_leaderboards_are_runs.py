"""Cost estimates and stored leaderboards become runs of the engine (:class:`core.runs.models.Run`):
the run's fields are added (its lease, heartbeat, counters and dates) and each row's state is
carried over.

Status words: the old ones (queued, running, done, failed) are the engine's too, so done and
failed stay. A row still queued or running was waiting for a task (``judging.estimate``,
``judging.leaderboard``) that no longer exists; it becomes an orphaned run (``running``, no
heartbeat), which the engine's orphan scan resumes on the one chunk task. Counters: one item,
the estimate or leaderboard itself (``n_done`` 1 once a result is stored)."""

from decimal import Decimal

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

STATUS = {"queued": "running", "running": "running", "done": "done", "failed": "failed"}
CHOICES = [
    ("queued", "Queued"),
    ("running", "Running"),
    ("cancelling", "Cancelling"),
    ("cancelled", "Cancelled"),
    ("failed", "Failed"),
    ("done", "Done"),
]


def _run_fields(model: str, *, with_owner_and_dates: bool) -> list:
    """AddField of every Run field the model lacks."""
    fields = [
        ("n_total", models.PositiveIntegerField(default=0, help_text="items in the run")),
        (
            "n_done",
            models.PositiveIntegerField(default=0, help_text="items finished, counted from rows"),
        ),
        (
            "n_failed",
            models.PositiveIntegerField(
                default=0, help_text="items that failed for good, counted from rows"
            ),
        ),
        ("prompt_tokens", models.BigIntegerField(default=0)),
        ("completion_tokens", models.BigIntegerField(default=0)),
        ("cost", models.DecimalField(decimal_places=6, default=Decimal("0"), max_digits=14)),
        (
            "lease_owner",
            models.CharField(
                blank=True, help_text="token of the execution working the run", max_length=64
            ),
        ),
        (
            "heartbeat_at",
            models.DateTimeField(
                blank=True, help_text="last sign of life of that execution", null=True
            ),
        ),
        ("started_at", models.DateTimeField(blank=True, null=True)),
    ]
    ops = [migrations.AddField(model_name=model, name=name, field=f) for name, f in fields]
    if with_owner_and_dates:
        ops += [
            migrations.AddField(
                model_name=model,
                name="created_at",
                field=models.DateTimeField(auto_now_add=True, default=django.utils.timezone.now),
                preserve_default=False,
            ),
            migrations.AddField(
                model_name=model,
                name="created_by",
                field=models.ForeignKey(
                    blank=True,
                    null=True,
                    on_delete=django.db.models.deletion.SET_NULL,
                    related_name="+",
                    to=settings.AUTH_USER_MODEL,
                ),
            ),
            migrations.AddField(
                model_name=model,
                name="finished_at",
                field=models.DateTimeField(blank=True, null=True),
            ),
        ]
    ops += [
        migrations.AddField(
            model_name=model,
            name="updated_at",
            field=models.DateTimeField(auto_now=True, default=django.utils.timezone.now),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name=model,
            name="status",
            field=models.CharField(choices=CHOICES, db_index=True, default="queued", max_length=16),
        ),
    ]
    return ops


def old_rows_become_runs(apps, schema_editor):
    Estimate = apps.get_model("judging", "JudgeRunEstimate")
    Report = apps.get_model("judging", "LeaderboardReport")
    for est in Estimate.objects.all():
        status = STATUS.get(est.status, "failed")
        Estimate.objects.filter(pk=est.pk).update(
            status=status,
            error=est.error or ("" if status != "failed" else "failed before the upgrade"),
            n_total=1,
            n_done=int(est.result is not None),
            started_at=est.created_at,
            finished_at=est.finished_at if status in ("done", "failed") else None,
            updated_at=est.finished_at or est.created_at,
        )
    for report in Report.objects.all():
        status = STATUS.get(report.status, "failed")
        asked = report.asked_at or report.computed_at or django.utils.timezone.now()
        Report.objects.filter(pk=report.pk).update(
            status=status,
            error=report.error or ("" if status != "failed" else "failed before the upgrade"),
            n_total=1,
            n_done=int(report.result is not None),
            created_at=asked,
            started_at=asked,
            finished_at=report.computed_at if status == "done" else None,
            updated_at=report.computed_at or asked,
        )


def runs_become_old_rows(apps, schema_editor):
    """The old words: a cancelled row is failed, a cancelling one running."""
    for name in ("JudgeRunEstimate", "LeaderboardReport"):
        model = apps.get_model("judging", name)
        model.objects.filter(status="cancelling").update(status="running")
        model.objects.filter(status="cancelled").update(status="failed", error="cancelled")


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0004_background_launch"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        *_run_fields("judgerunestimate", with_owner_and_dates=False),
        *_run_fields("leaderboardreport", with_owner_and_dates=True),
        migrations.RunPython(old_rows_become_runs, runs_become_old_rows),
    ]
