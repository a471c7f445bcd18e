"""A hand-computed fixture: four participants' labels, times and attention checks, written
straight to the database so every figure of the quality and pay pages is known in advance
(the scenario: tests/annotation/factories.py, make_quality_study; the working is in
test_quality_figures.py)."""

from __future__ import annotations

import pytest

from tests.annotation.factories import make_quality_study


@pytest.fixture
def quality_study(db):
    return make_quality_study()
