"""A test-only Django app: a minimal run type on the run engine (core.runs), so that the
engine is tested without any real run type (JudgeRun, GenerationRun, MiningBatch).

Installed only in tests (tests/conftest.py adds it to INSTALLED_APPS before the test database
is created); its one migration creates its tables in the test database only."""
