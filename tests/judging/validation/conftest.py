from tests.judging.compare.conftest import generators_scenario, scenario  # noqa: F401
