"""Serializers of the study API (settings from the one list of study settings)."""

from __future__ import annotations

from rest_framework import serializers

from annotation.models import Study, StudyItem
from annotation.services.study import STUDY_SETTINGS


class KnownItemSerializer(serializers.Serializer):
    generation_id = serializers.IntegerField()
    kind = serializers.ChoiceField(
        choices=[
            StudyItem.Kind.ATTENTION,
            StudyItem.Kind.TRAINING,
            StudyItem.Kind.QUALIFICATION,
            StudyItem.Kind.GOLD,
        ]
    )
    attempt = serializers.IntegerField(required=False, default=1, min_value=1, max_value=2)
    expected_has_failure = serializers.BooleanField(
        required=False, help_text="A critical-failure study's known answer."
    )
    expected_label = serializers.JSONField(
        required=False,
        help_text='Another form type\'s known answer, e.g. {"score": 4} for a rating study '
        'or {"preferred": "first"} for a pairwise one (checked by the form type).',
    )
    generation_b_id = serializers.IntegerField(required=False, help_text="Pairwise studies.")
    context = serializers.JSONField(required=False)
    explanation = serializers.CharField(required=False, allow_blank=True, default="")


class StudySerializer(serializers.ModelSerializer):
    generation_ids = serializers.ListField(
        child=serializers.IntegerField(), write_only=True, required=False
    )
    pairs = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        write_only=True,
        required=False,
        help_text="A pairwise study's items: [[generation_a, generation_b], …], two "
        "generations of the same procedure each (instead of generation_ids).",
    )
    known_items = KnownItemSerializer(many=True, write_only=True, required=False)
    n_items = serializers.IntegerField(read_only=True, source="items.count")
    entry_path = serializers.SerializerMethodField()

    class Meta:
        model = Study
        fields = [
            "id",
            "name",
            "slug",
            "created_at",
            "n_items",
            "entry_path",
            "generation_ids",
            "pairs",
            "known_items",
            *STUDY_SETTINGS,
        ]
        read_only_fields = ["id", "slug", "created_at"]

    def validate(self, attrs):
        if not attrs.get("generation_ids") and not attrs.get("pairs"):
            raise serializers.ValidationError(
                {"generation_ids": "Give generation_ids, or pairs for a pairwise study."}
            )
        return attrs

    def get_entry_path(self, study: Study) -> str:
        from django.urls import reverse

        return reverse("annotation:enter", args=[study.slug])


class StudyStatusSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Study.Status.choices)
