"""core.access: the one role check of page views (login page, 403 with a message, or the view)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.test import RequestFactory

from core.access import admin_required, researcher_required


@researcher_required
def research_page(request, pk):
    """A researcher page."""
    return HttpResponse(f"page {pk}")


@admin_required
def admin_action(request):
    return HttpResponse("done")


def get(user):
    request = RequestFactory().get("/somewhere/")
    request.user = user
    return request


def test_anonymous_visitors_go_to_the_login_page():
    response = research_page(get(AnonymousUser()), pk=3)
    assert response.status_code == 302 and "/somewhere/" in response["Location"]
    assert admin_action(get(AnonymousUser())).status_code == 302


@pytest.mark.django_db
def test_roles(make_user):
    annotator = make_user("ann", role="annotator")
    researcher = make_user("res", role="researcher")
    admin = make_user("adm", role="admin")
    with pytest.raises(PermissionDenied, match="for researchers and admins"):
        research_page(get(annotator), pk=3)
    assert research_page(get(researcher), pk=3).content == b"page 3"
    with pytest.raises(PermissionDenied, match="for admins"):
        admin_action(get(researcher))
    assert admin_action(get(admin)).content == b"done"
    assert research_page.__name__ == "research_page" and "researcher page" in research_page.__doc__
