"""core.errors: Django ValidationError → DRF errors naming fields, one-line text, and the
project's DRF exception handler (a tiny APIView through APIRequestFactory)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from rest_framework import exceptions
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from core.errors import (
    drf_validation_error,
    exception_handler,
    validation_detail,
    validation_text,
)


def test_validation_detail_names_fields_and_puts_the_rest_under_detail():
    assert validation_detail(ValidationError("nothing to resume")) == {
        "detail": ["nothing to resume"]
    }
    assert validation_detail(ValidationError(["a", "b"])) == {"detail": ["a", "b"]}
    exc = ValidationError({"name": ["too long"], NON_FIELD_ERRORS: ["clash"]})
    assert validation_detail(exc) == {"name": ["too long"], "detail": ["clash"]}
    exc = ValidationError({"n": ValidationError("at most %(m)s", params={"m": 3})})
    assert validation_detail(exc) == {"n": ["at most 3"]}


def test_drf_validation_error():
    err = drf_validation_error(ValidationError({"dataset": "no dataset 'x'"}))
    assert isinstance(err, exceptions.ValidationError)
    assert err.detail == {"dataset": ["no dataset 'x'"]}
    assert drf_validation_error(ValidationError("no")).detail == {"detail": ["no"]}


def test_drf_validation_error_nested_under_the_field_validated_as_a_whole():
    plain = drf_validation_error(ValidationError("choose one"), field="selection")
    assert plain.detail == {"selection": ["choose one"]}
    fields = drf_validation_error(ValidationError({"generators": "unknown"}), field="selection")
    assert fields.detail == {"selection": {"generators": ["unknown"]}}
    own = drf_validation_error(ValidationError({"selection": "empty"}), field="selection")
    assert own.detail == {"selection": ["empty"]}


def test_validation_text():
    assert validation_text(ValidationError(["a", "b"])) == "a; b"
    exc = ValidationError({"file": ["unknown type", "too big"], NON_FIELD_ERRORS: ["clash"]})
    assert validation_text(exc) == "file: unknown type; too big; clash"


class Boom(APIView):
    """Raises whatever the query string names."""

    authentication_classes = ()
    permission_classes = (AllowAny,)

    def get(self, request):
        kind = request.query_params["kind"]
        if kind == "fields":
            raise ValidationError({"status": "must be open, paused or closed"})
        if kind == "plain":
            raise ValidationError("nothing to resume")
        if kind == "missing":
            User.objects.get(username="nobody-at-all")
        if kind == "drf":
            raise exceptions.ValidationError({"x": ["drf's own"]})
        if kind == "bug":
            raise RuntimeError("a bug")
        return Response({"ok": True})


def call(kind: str):
    request = APIRequestFactory().get("/boom/", {"kind": kind})
    return Boom.as_view()(request)


def test_handler_is_the_project_setting():
    assert api_settings.EXCEPTION_HANDLER is exception_handler


@pytest.mark.django_db
def test_handler_maps_django_errors_to_4xx():
    r = call("fields")
    assert r.status_code == 400 and r.data == {"status": ["must be open, paused or closed"]}
    r = call("plain")
    assert r.status_code == 400 and r.data == {"detail": ["nothing to resume"]}
    r = call("missing")
    assert r.status_code == 404 and "does not exist" in str(r.data["detail"])
    r = call("drf")
    assert r.status_code == 400 and r.data == {"x": ["drf's own"]}
    assert call("ok").data == {"ok": True}


def test_handler_leaves_bugs_as_errors():
    with pytest.raises(RuntimeError, match="a bug"):
        call("bug")
