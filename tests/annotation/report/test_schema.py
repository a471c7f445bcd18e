"""The report API's paths are in the project's OpenAPI schema, which generates cleanly."""

from django.core.management import call_command


def test_report_api_schema_without_warnings(tmp_path, db):
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
