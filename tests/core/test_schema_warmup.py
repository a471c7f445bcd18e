"""The API schema's extension targets are resolved at start-up, so two schema requests at once
cannot race on a lazy import (a 500 seen when the docs page and a client fetched together)."""

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiFilterExtension,
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
    OpenApiViewExtension,
)


def test_no_extension_target_is_left_to_import_on_a_request():
    for registry in (
        OpenApiAuthenticationExtension,
        OpenApiFilterExtension,
        OpenApiSerializerExtension,
        OpenApiSerializerFieldExtension,
        OpenApiViewExtension,
    ):
        left = [e.__name__ for e in registry._registry if isinstance(e.target_class, str)]
        assert left == [], left
