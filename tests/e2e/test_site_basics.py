"""Site basics (in chromium): every page has an icon (``/favicon.ico`` too, for pages
without the link), an unknown address gets the project's 404 page, and the API docs offer a
visitor the sign-in page, then open, describing an API that is not read-only."""

from __future__ import annotations

import pytest

from tests.support.browser_roles import log_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_icon_and_the_404_page(live_server, page):
    base = live_server.url
    page.goto(base + "/")
    icon = page.locator("link[rel=icon]").get_attribute("href")
    assert page.request.get(base + icon).status == 200
    ico = page.request.get(base + "/favicon.ico")  # followed to the static icon
    assert ico.status == 200 and ico.text().startswith("<svg")
    response = page.goto(base + "/no-such-page/")
    assert response.status == 404
    assert page.locator("h1").inner_text() == "Page not found"
    assert page.get_by_role("link", name="Back to the start page").count() == 1


def test_the_api_docs_offer_a_visitor_the_sign_in(live_server, page, make_user):
    make_user("res", role="researcher")
    base = live_server.url
    page.goto(base + "/api/docs/")
    assert "/accounts/login/" in page.url and "next=/api/docs/" in page.url
    page.fill("#id_username", "res")
    page.fill("#id_password", "pw-Test-12345")
    page.click("button[type=submit]")
    page.wait_for_url(base + "/api/docs/")
    schema = page.request.get(base + "/api/schema/").text()  # the OpenAPI document (YAML)
    assert "read-only access" not in schema.lower() and "admins also" in schema


def test_a_signed_in_annotator_is_refused_the_api_docs(live_server, page, make_user):
    make_user("ann", role="annotator")
    log_in(page, live_server.url, "ann")
    assert page.goto(live_server.url + "/api/docs/").status == 403
