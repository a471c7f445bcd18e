"""Role checks for page views, one home: ``researcher_required`` and ``admin_required``.

Anonymous visitors go to the login page; signed-in users without the role get a 403 (the
DRF side of the same rule is :mod:`core.permissions`)."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from core.roles import is_admin, is_researcher


def _role_required(check, message: str):
    def decorator(view):
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not check(request.user):
                raise PermissionDenied(message)
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


researcher_required = _role_required(is_researcher, "This page is for researchers and admins.")
admin_required = _role_required(is_admin, "This action is for admins.")
