"""Fixtures of the validation tests: the comparison and ranking scenarios and the role groups
are judging's (:mod:`tests.judging.conftest`, built by :mod:`tests.judging.factories`)."""

from tests.judging.conftest import generators_scenario, roles, scenario  # noqa: F401
