"""Serializers of the judging API: judges, judge runs (with progress), judgments."""

from __future__ import annotations

from rest_framework import serializers

from judging.models import Judge, JudgeRun, JudgeRunEstimate, Judgment
from judging.selectors import judgments as selectors
from judging.services.sampling import MAX_SAMPLES


class JudgeSerializer(serializers.ModelSerializer):
    class Meta:
        model = Judge
        fields = (
            "id",
            "name",
            "backend",
            "base_url",
            "model",
            "api_key_env",
            "endpoint",
            "prompt_template",
            "prompt_version",
            "decoding",
            "structured_output",
            "parse_profile",
            "concurrency",
            "requests_per_minute",
            "tokens_per_minute",
            "price_input_per_mtok",
            "price_output_per_mtok",
            "batch_mode",
            "batch_price_factor",
            "judge_id",
            "created_at",
        )


class JudgeRunSerializer(serializers.ModelSerializer):
    judge = serializers.SlugRelatedField(slug_field="name", read_only=True)
    progress = serializers.SerializerMethodField()
    worker_gone = serializers.BooleanField(
        read_only=True, help_text="active, but no live worker holds it: resume with force"
    )

    class Meta:
        model = JudgeRun
        fields = (
            "id",
            "judge",
            "selection",
            "status",
            "n_total",
            "n_done",
            "n_reused",
            "n_failed",
            "n_parse_failed",
            "prompt_tokens",
            "completion_tokens",
            "cost",
            "estimated_cost",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "heartbeat_at",
            "worker_gone",
            "progress",
            "n_samples",
            "sample_seed",
        )

    def get_progress(self, run: JudgeRun) -> dict:
        p = selectors.judge_run_progress(run)
        return {"fraction": p["progress"], "eta_s": p["eta_s"], "n_cancelled": p["n_cancelled"]}


class JudgeRunLaunchSerializer(serializers.Serializer):
    judge = serializers.SlugRelatedField(slug_field="name", queryset=Judge.objects.all())
    selection = serializers.JSONField()
    samples = serializers.IntegerField(
        required=False,
        default=1,
        min_value=1,
        max_value=MAX_SAMPLES,
        help_text="k > 1: also ask k seeded samples per item, for calibration (launch only)",
    )
    sample_seed = serializers.IntegerField(
        required=False, default=0, min_value=0, max_value=2**31 - 1 - MAX_SAMPLES
    )

    def validate_selection(self, value):
        """Validated once, here (its errors under ``selection``, each naming its field); the
        launch and the estimate take the clean selection as it is."""
        if value and not isinstance(value, dict):
            raise serializers.ValidationError("expected an object")
        return selectors.selection_clean(value)


class JudgeRunEstimateResultSerializer(serializers.Serializer):
    n_items = serializers.IntegerField()
    n_reused = serializers.IntegerField(help_text="already judged by this judge (free)")
    n_requests = serializers.IntegerField()
    est_prompt_tokens = serializers.IntegerField(help_text="o200k counts of sampled prompts")
    est_completion_tokens = serializers.IntegerField()
    est_cost = serializers.CharField(help_text="USD, a decimal string")
    selection = serializers.JSONField()


class JudgeRunEstimateSerializer(serializers.ModelSerializer):
    """An estimate computed by a worker: poll ``url`` until ``status`` is done (``result``) or
    failed (``error``)."""

    judge = serializers.SlugRelatedField(slug_field="name", read_only=True)
    url = serializers.SerializerMethodField(help_text="where to poll this estimate")
    result = JudgeRunEstimateResultSerializer(read_only=True, allow_null=True)

    class Meta:
        model = JudgeRunEstimate
        fields = ("id", "judge", "selection", "status", "result", "error", "url", "created_at")

    def get_url(self, est: JudgeRunEstimate) -> str:
        return f"/api/judge-runs/estimates/{est.pk}/"


class JudgeRunResumeSerializer(serializers.Serializer):
    force = serializers.BooleanField(
        default=False, help_text="take over a run whose worker still looks alive"
    )


class JudgmentSerializer(serializers.ModelSerializer):
    judge = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = Judgment
        fields = (
            "id",
            "judge",
            "judge_key",
            "content_hash",
            "source_example_id",
            *Judgment.OUTCOME_FIELDS,
            "created_at",
        )
