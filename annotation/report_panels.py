"""Panels that the apps above annotation add to a study's report (the corrected How2Score of a
study whose items were chosen from a judge's verdicts, in :mod:`validation`): annotation does
not import them; each registers itself here from its app's ``ready()``, as run types do on the
run engine (:mod:`core.runs.registry`).

A panel is a function ``study -> dict | None``: ``None`` when it has nothing to say about this
study, else ``{"template": <template name>, ...}``, the rest handed to that template as
``panel``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Panel = Callable[[Any], "dict | None"]
_PANELS: list[Panel] = []


def register(panel: Panel) -> None:
    """Add ``panel`` to every study's report (once, however often ``ready()`` runs)."""
    if panel not in _PANELS:
        _PANELS.append(panel)


def report_panels(study) -> list[dict]:
    """The registered panels with something to show for ``study``, in registration order."""
    return [shown for shown in (panel(study) for panel in _PANELS) if shown]
