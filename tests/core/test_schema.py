"""The OpenAPI schema of every app generates cleanly: no warnings, valid OpenAPI 3."""

from django.core.management import call_command


def test_schema_generates_without_warnings_and_validates(tmp_path, db):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    assert text.startswith("openapi: 3")
    for path in ("/api/procedures/", "/api/generations/", "/api/studies/", "/api/mining/batches/"):
        assert f"  {path}" in text, path
