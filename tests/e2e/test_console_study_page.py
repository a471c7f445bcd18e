"""The console's study page: the Expected label box of an item
without one is empty (not ``null``), the items read "Regular item #5 (study #2)" (not
"Regular #5 of 2"), and the page is no wider than a 1280 px window (it was 2,750 px)."""

from __future__ import annotations

import pytest

from tests.annotation.factories import make_study
from tests.support.browser_roles import log_in, placeholders, too_wide

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_study_page_fits_and_shows_no_null(live_server, page, make_user):
    make_user("adm", role="admin")
    study = make_study(n_items=4, n_attention=1)
    page.set_viewport_size({"width": 1280, "height": 800})
    log_in(page, live_server.url, "adm")
    page.goto(f"{live_server.url}/admin/annotation/study/{study.pk}/change/")
    boxes = page.locator("textarea[name$='-expected_label']:not([name*=__prefix__])")
    assert boxes.count() == 5
    values = boxes.evaluate_all("els => els.map(e => e.value)")
    assert values == [""] * 5, values  # no expected label (a critical-failure study): empty
    assert not placeholders(page), placeholders(page)
    item = study.items.filter(kind="regular").first()
    assert page.get_by_text(f"Regular item #{item.pk} (study #{study.pk})").count() == 1
    assert too_wide(page) is None, f"the page is {too_wide(page)} px wide"
