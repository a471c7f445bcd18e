"""The validation app's models: label sets (a file of people's and judges' labels, kept with
its provenance)."""

from validation.models.label_sets import LabelSet, LabelSetRow

__all__ = ["LabelSet", "LabelSetRow"]
