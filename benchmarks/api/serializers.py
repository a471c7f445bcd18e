"""Read-only serializers. Counts (``n_*``) come from selector annotations, never per-row queries."""

from __future__ import annotations

from rest_framework import serializers

from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic


class DatasetSerializer(serializers.ModelSerializer):
    n_procedures = serializers.IntegerField(read_only=True)
    n_generations = serializers.IntegerField(read_only=True)
    n_generators = serializers.IntegerField(read_only=True)

    class Meta:
        model = Dataset
        fields = (
            "id",
            "name",
            "version",
            "description",
            "created_at",
            "n_procedures",
            "n_generations",
            "n_generators",
        )


class TopicSerializer(serializers.ModelSerializer):
    n_procedures = serializers.IntegerField(read_only=True)

    class Meta:
        model = Topic
        fields = ("id", "slug", "name", "position", "n_procedures")


class GeneratorSerializer(serializers.ModelSerializer):
    n_generations = serializers.IntegerField(read_only=True)

    class Meta:
        model = Generator
        fields = (
            "id",
            "name",
            "model",
            "backend",
            "prompt_variant",
            "description",
            "created_at",
            "n_generations",
        )


class ProcedureSerializer(serializers.ModelSerializer):
    """A procedure in lists: everything but the source document, plus its generation count."""

    dataset_name = serializers.CharField(source="dataset.name", read_only=True)
    dataset_version = serializers.CharField(source="dataset.version", read_only=True)
    # the topic's name as the data gives it ("Crime & Law"); slugs stay internal (filters)
    topic = serializers.SlugRelatedField(slug_field="name", read_only=True)
    n_steps = serializers.IntegerField(read_only=True)
    n_generations = serializers.IntegerField(read_only=True)

    class Meta:
        model = Procedure
        fields = (
            "id",
            "dataset",
            "dataset_name",
            "dataset_version",
            "source_example_id",
            "topic",
            "goal",
            "resources",
            "steps",
            "n_steps",
            "url",
            "n_generations",
            "created_at",
        )


class _GeneratedBy(serializers.ModelSerializer):
    """The generator's name and model and the step count, shared by both generation shapes."""

    generator_name = serializers.CharField(source="generator.name", read_only=True)
    model = serializers.CharField(source="generator.model", read_only=True)
    n_steps = serializers.SerializerMethodField()

    def get_n_steps(self, obj: Generation) -> int:
        return len(obj.predicted_steps or [])


class GenerationCompactSerializer(_GeneratedBy):
    """A generation inside a procedure: who generated it and what."""

    class Meta:
        model = Generation
        fields = (
            "id",
            "generator",
            "generator_name",
            "model",
            "predicted_steps",
            "n_steps",
            "token_count",
            "scores",
        )


class ProcedureDetailSerializer(ProcedureSerializer):
    """A procedure with its source document and every generation."""

    generations = GenerationCompactSerializer(many=True, read_only=True)

    class Meta(ProcedureSerializer.Meta):
        fields = (*ProcedureSerializer.Meta.fields, "source_text", "generations")


class GenerationSerializer(_GeneratedBy):
    """A generation with the procedure's identity (source id, dataset, topic) and the generator's name."""

    source_example_id = serializers.CharField(source="procedure.source_example_id", read_only=True)
    dataset = serializers.IntegerField(source="procedure.dataset_id", read_only=True)
    dataset_name = serializers.CharField(source="procedure.dataset.name", read_only=True)
    topic = serializers.CharField(source="procedure.topic.name", read_only=True, default=None)
    goal = serializers.CharField(source="procedure.goal", read_only=True)

    class Meta:
        model = Generation
        fields = (
            "id",
            "procedure",
            "source_example_id",
            "dataset",
            "dataset_name",
            "topic",
            "goal",
            "generator",
            "generator_name",
            "model",
            "predicted_steps",
            "n_steps",
            "token_count",
            "finish_reason",
            "prompt_tokens",
            "completion_tokens",
            "scores",
            "created_at",
        )


class GenerationDetailSerializer(GenerationSerializer):
    class Meta(GenerationSerializer.Meta):
        fields = (*GenerationSerializer.Meta.fields, "model_completion", "payload", "pack_scores")
