"""django-filter filter sets for the benchmark API.

A dataset is given by id, name or ``name@version``; a generator by id or name; a topic by slug.
"""

from __future__ import annotations

import django_filters
from rest_framework.exceptions import ValidationError

from benchmarks.models import Generation, Procedure
from benchmarks.selectors.catalog import dataset_q, generator_q


def _dataset_filter(queryset, value: str, *, prefix: str):
    try:
        return queryset.filter(dataset_q(value, prefix=prefix))
    except ValueError as exc:  # a malformed name@version
        raise ValidationError({"dataset": [str(exc)]}) from None


class ProcedureFilter(django_filters.FilterSet):
    dataset = django_filters.CharFilter(
        method="filter_dataset", help_text="Dataset id, name or name@version."
    )
    topic = django_filters.CharFilter(
        field_name="topic__slug", help_text="Topic slug, e.g. food-dining."
    )
    source_example_id = django_filters.CharFilter(help_text="Exact source example id.")

    class Meta:
        model = Procedure
        fields = ("dataset", "topic", "source_example_id")

    def filter_dataset(self, queryset, name, value):
        return _dataset_filter(queryset, value, prefix="dataset__")


class GenerationFilter(django_filters.FilterSet):
    generator = django_filters.CharFilter(
        method="filter_generator", help_text="Generator id or name."
    )
    dataset = django_filters.CharFilter(
        method="filter_dataset", help_text="Dataset id, name or name@version."
    )
    topic = django_filters.CharFilter(
        field_name="procedure__topic__slug", help_text="Topic slug of the procedure."
    )
    procedure = django_filters.NumberFilter(field_name="procedure_id", help_text="Procedure id.")
    source_example_id = django_filters.CharFilter(
        field_name="procedure__source_example_id", help_text="Source example id of the procedure."
    )

    class Meta:
        model = Generation
        fields = ("generator", "dataset", "topic", "procedure", "source_example_id")

    def filter_generator(self, queryset, name, value):
        return queryset.filter(generator_q(value, prefix="generator__"))

    def filter_dataset(self, queryset, name, value):
        return _dataset_filter(queryset, value, prefix="procedure__dataset__")
