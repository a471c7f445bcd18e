"""The error statuses every API operation can answer, declared in the OpenAPI schema in one
place (a drf-spectacular postprocessing hook), from the rules the project's API follows:

- 400: an operation with query parameters or a body (validation errors naming the field, the
  text gate of core.text, bad filter values);
- 403: every operation that needs a role (no or a wrong token, a researcher on an admin action);
- 404: an operation with a path parameter (no such object), a query parameter naming another
  object (an integer id, or ``study``/``dataset``/``judge``/``run``/``generator``), or a
  ``page`` parameter (past the last page);
- 413: an operation with a body (core.middleware's size limit).

Each is an ``Error`` object: ``{"detail": ...}`` or ``{field: [messages]}`` (core.errors).
"""

from __future__ import annotations

ERROR_SCHEMA = {
    "type": "object",
    "description": "`detail` (a message or a list of messages), or one entry per field with "
    "its messages.",
    "additionalProperties": True,
}
DESCRIPTIONS = {
    "400": "Invalid input; the body names the fields (or parameters) and what is wrong.",
    "403": "Not allowed: no credentials, or a role that may not do this.",
    "404": "Not found: no such object, or a page past the last one.",
    "413": "The request body is larger than the server accepts; the limit is named.",
}
METHODS = ("get", "put", "post", "patch", "delete")


def _error_response(code: str) -> dict:
    return {
        "description": DESCRIPTIONS[code],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


OBJECT_PARAMETERS = {"study", "dataset", "judge", "run", "generator", "page"}
NOT_OBJECTS = {"page_size", "limit", "offset"}


def _names_an_object(param: dict) -> bool:
    if param.get("in") != "query" or param.get("name") in NOT_OBJECTS:
        return False
    return (
        param.get("name") in OBJECT_PARAMETERS
        or (param.get("schema") or {}).get("type") == "integer"
    )


def error_statuses(operation: dict, path_params: list) -> list[str]:
    params = [*path_params, *(operation.get("parameters") or [])]
    has_body = "requestBody" in operation
    codes = []
    if has_body or any(p.get("in") == "query" for p in params):
        codes.append("400")
    if operation.get("security") != [{}] and {} not in (operation.get("security") or []):
        codes.append("403")
    if any(p.get("in") == "path" or _names_an_object(p) for p in params):
        codes.append("404")
    if has_body:
        codes.append("413")
    return codes


def add_error_responses(result, generator, request, public):
    """drf-spectacular postprocessing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"])."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for item in (result.get("paths") or {}).values():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            responses = operation.setdefault("responses", {})
            for code in error_statuses(operation, item.get("parameters") or []):
                responses.setdefault(code, _error_response(code))
    return result
