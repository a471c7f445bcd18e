"""A batch's promotion into a dataset becomes a run of the engine (``MiningPromotion``) instead
of a dict in ``batch.options["promotion"]``; each batch's stored promotion is carried over (and
put back on the way down).

Status words: done and failed stay. A promotion still queued or running was waiting for a task
(``mining.promote``) that no longer exists; it becomes an orphaned run (``running``, no
heartbeat), which the engine's orphan scan resumes on the one chunk task."""

from datetime import UTC
from decimal import Decimal

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.utils import timezone
from django.utils.dateparse import parse_datetime

STATUS = {"queued": "running", "running": "running", "done": "done", "failed": "failed"}
RESULT_KEYS = ("promoted", "candidates", "duplicates", "per_topic")


def _when(text):
    if not text:
        return None
    value = parse_datetime(str(text))
    if value is not None and timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value


def options_to_runs(apps, schema_editor):
    Batch = apps.get_model("mining", "MiningBatch")
    Promotion = apps.get_model("mining", "MiningPromotion")
    Dataset = apps.get_model("benchmarks", "Dataset")
    for batch in Batch.objects.filter(options__has_key="promotion"):
        options = dict(batch.options or {})
        state = options.pop("promotion") or {}
        status = STATUS.get(state.get("status"), "failed")
        asked = _when(state.get("asked_at")) or batch.finished_at or timezone.now()
        finished = _when(state.get("finished_at"))
        dataset_id = state.get("dataset_id")
        if dataset_id and not Dataset.objects.filter(pk=dataset_id).exists():
            dataset_id = None
        params = dict(state.get("params") or {})
        if not params.get("dataset_name") and state.get("dataset"):
            name, _, version = str(state["dataset"]).partition("@")
            params.update(dataset_name=name, version=version or "v1")
        result = {k: state[k] for k in RESULT_KEYS if k in state} if status == "done" else None
        promotion = Promotion.objects.create(
            batch=batch,
            params=params,
            status=status,
            error=str(state.get("error") or "")
            or ("" if status != "failed" else "failed before the upgrade"),
            dataset_id=dataset_id,
            result=result,
            n_total=int(state.get("candidates") or 0),
            n_done=int(state.get("promoted") or 0),
            started_at=asked if status != "queued" else None,
            finished_at=finished if status in ("done", "failed") else None,
        )
        # auto_now_add / auto_now: the dates the promotion had, set after the insert
        Promotion.objects.filter(pk=promotion.pk).update(
            created_at=asked, updated_at=finished or asked
        )
        Batch.objects.filter(pk=batch.pk).update(options=options)


def runs_to_options(apps, schema_editor):
    Batch = apps.get_model("mining", "MiningBatch")
    Promotion = apps.get_model("mining", "MiningPromotion")
    last: dict[int, object] = {}
    for promotion in Promotion.objects.order_by("created_at", "id"):
        last[promotion.batch_id] = promotion
    for batch_id, p in last.items():
        params = dict(p.params or {})
        status = {"cancelling": "running", "cancelled": "failed"}.get(p.status, p.status)
        state = {
            "status": status,
            "dataset": f"{params.get('dataset_name', '')}@{params.get('version', 'v1')}",
            "asked_at": p.created_at.isoformat(),
            "params": params,
        }
        if status == "done":
            state.update(dataset_id=p.dataset_id, **(p.result or {}))
        elif status == "failed":
            state["error"] = p.error or "cancelled"
        if p.finished_at:
            state["finished_at"] = p.finished_at.isoformat()
        batch = Batch.objects.get(pk=batch_id)
        Batch.objects.filter(pk=batch_id).update(
            options={**(batch.options or {}), "promotion": state}
        )


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0007_generation_outputs_and_scoring"),
        ("mining", "0003_corpus_scale"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="MiningPromotion",
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
                    "params",
                    models.JSONField(
                        default=dict,
                        help_text="dataset_name, version, description, per_topic, seed, "
                        "dedup_against (a dataset id), threshold",
                    ),
                ),
                (
                    "result",
                    models.JSONField(
                        blank=True,
                        help_text="promoted, candidates, duplicates, per_topic (done)",
                        null=True,
                    ),
                ),
                (
                    "batch",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="promotions",
                        to="mining.miningbatch",
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
                        blank=True,
                        help_text="the dataset made (done)",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="benchmarks.dataset",
                    ),
                ),
            ],
            options={"ordering": ["-created_at", "-id"]},
        ),
        migrations.RunPython(options_to_runs, runs_to_options),
    ]
