"""Resolve drf-spectacular's extension targets once, before the first schema request.

drf-spectacular imports the class each of its extensions is for (JWT, OAuth, django-filter, …)
lazily, on the first schema request, and that import is not thread-safe: two schema requests at
once on a threaded server (the API docs page fetching the schema while a client fetches it too)
can both start the import of a package that is not installed; the first marks the extension
"not installed" (``None``) and the second then fails on that ``None`` with a 500. Asking every
extension registry once, when ``core.api_docs`` is imported (the first request to the schema or
its docs page; the import lock holds any other until it is done), leaves nothing to import later.
"""

from __future__ import annotations


def extension_registries() -> tuple:
    """drf-spectacular's extension registries (importing its schema generator first, which
    registers the contrib extensions)."""
    import drf_spectacular.openapi  # noqa: F401  registers the contrib extensions
    from drf_spectacular.extensions import (
        OpenApiAuthenticationExtension,
        OpenApiFilterExtension,
        OpenApiSerializerExtension,
        OpenApiSerializerFieldExtension,
        OpenApiViewExtension,
    )

    return (
        OpenApiAuthenticationExtension,
        OpenApiFilterExtension,
        OpenApiSerializerExtension,
        OpenApiSerializerFieldExtension,
        OpenApiViewExtension,
    )


def resolve_schema_extensions() -> None:
    """Ask each extension registry for a match once, so every target class is imported (or
    marked absent) before any request arrives."""

    class Nothing:  # matches no extension; ``cls`` for the view registry, which reads it
        pass

    Nothing.cls = Nothing
    for registry in extension_registries():
        registry.get_match(Nothing)
