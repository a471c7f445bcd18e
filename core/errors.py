"""Error conversion, one home: Django ``ValidationError`` (what services raise) to DRF errors,
to a one-line text for pages and commands, and the project's DRF exception handler.

The shape of an API error body (400):

- errors of a field stay under the field's name: ``{"dataset": ["no dataset 'x'"]}``;
- errors of no field (a plain ``ValidationError("...")`` or ``NON_FIELD_ERRORS``) go under
  ``"detail"``: ``{"detail": ["nothing to resume"]}``;
- a :class:`FieldRefusal` (a request value refused by a selector: an unknown judge name, a bad
  query parameter) keeps one message per field, as text: ``{"judge": "no judge named 'x'"}``.

:func:`exception_handler` (settings ``REST_FRAMEWORK["EXCEPTION_HANDLER"]``) applies this to
every API view, so an API view lets a service's ``ValidationError`` through instead of catching
it, and ``ObjectDoesNotExist`` becomes a 404 instead of a 500.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import NON_FIELD_ERRORS, ObjectDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.runs.dispatch import BrokerUnavailable

NON_FIELD_KEY = "detail"


class FieldRefusal(DjangoValidationError):
    """A ``ValidationError`` of named request values, one message each (``{field: message}``):
    the API answers it as ``{field: "message"}`` (text, not a list; the body these endpoints
    have always given), a page or a command reads ``messages`` or ``str()``."""

    def __init__(self, errors: dict[str, str]):
        super().__init__(errors)
        self.errors = dict(errors)

    def __str__(self) -> str:
        return "; ".join(f"{field}: {message}" for field, message in self.errors.items())


def validation_detail(exc: DjangoValidationError) -> dict[str, list[str]]:
    """``{field: [messages]}``; messages of no field under :data:`NON_FIELD_KEY`."""
    if not hasattr(exc, "error_dict"):
        return {NON_FIELD_KEY: list(exc.messages)}
    detail: dict[str, list[str]] = {}
    for field, messages in exc.message_dict.items():
        key = NON_FIELD_KEY if field == NON_FIELD_ERRORS else field
        detail.setdefault(key, []).extend(messages)
    return detail


def drf_validation_error(
    exc: DjangoValidationError, *, field: str | None = None
) -> exceptions.ValidationError:
    """The DRF ``ValidationError`` (a 400) for a Django one, naming the fields.

    ``field`` is for a service that validated one request field as a whole (a judge run's
    ``selection``): its errors are nested under that name, plain messages as
    ``{field: [...]}`` and field errors as ``{field: {name: [...]}}``; an error that already
    names ``field`` itself is kept as it is.
    """
    if field is None:
        return exceptions.ValidationError(validation_detail(exc))
    if not hasattr(exc, "error_dict"):
        return exceptions.ValidationError({field: list(exc.messages)})
    detail = exc.message_dict
    return exceptions.ValidationError(detail if field in detail else {field: detail})


def validation_text(exc: DjangoValidationError) -> str:
    """One line for a page message, a form error or a command error:
    ``"name: message; other: message"`` (messages of no field without a prefix)."""
    if not hasattr(exc, "error_dict"):
        return "; ".join(exc.messages)
    parts = []
    for field, messages in exc.message_dict.items():
        text = "; ".join(messages)
        parts.append(text if field == NON_FIELD_ERRORS else f"{field}: {text}")
    return "; ".join(parts)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus: Django ``ValidationError`` → 400 naming the fields,
    ``ObjectDoesNotExist`` → 404, a value the database cannot store or compare (``DataError``:
    an integer past 64 bits, …) → 400 naming the database's reason, a broker that cannot be
    reached (:class:`core.runs.dispatch.BrokerUnavailable`) → 503 naming it. Anything else unhandled
    stays a 500 (a bug). A view catches none of these: a service or selector raises, this
    answers."""
    if isinstance(exc, BrokerUnavailable):  # a launch whose task cannot be sent: nothing made
        exc = exceptions.APIException(str(exc))
        exc.status_code = 503
    elif isinstance(exc, FieldRefusal):
        exc = exceptions.ValidationError(exc.errors)
    elif isinstance(exc, DataError):
        reason = (str(exc).strip().splitlines() or ["invalid value"])[0]
        exc = exceptions.ValidationError({NON_FIELD_KEY: [f"a value was refused: {reason}"]})
    elif isinstance(exc, DjangoValidationError):
        exc = drf_validation_error(exc)
    elif isinstance(exc, ObjectDoesNotExist):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    return drf_exception_handler(exc, context)
