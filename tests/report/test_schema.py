"""The report API's OpenAPI schema generates cleanly (no warnings) once included."""

import pytest
from django.core.management import call_command


@pytest.mark.urls("tests.report.urls")
def test_report_api_schema_without_warnings(tmp_path, db, settings):
    settings.ROOT_URLCONF = "tests.report.urls"
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    for path in (
        "/api/studies/{id}/report/",
        "/api/studies/{id}/adjudication-queue/",
        "/api/study-items/{item_id}/adjudication/",
        "/api/studies/{id}/labels/",
        "/api/studies/{id}/gold/",
    ):
        assert f"  {path}" in text, path
