"""A study link's cookies are cookie-safe: the pending entry the link leaves for the consent
is signed (Django's signing) and holds URL-safe characters only, so Python's standard cookie
jar (``http.cookiejar``) and ``http.cookies`` keep it as sent. A client on the standard library,
through a real HTTP server, follows the link, consents and reaches its own session."""

from __future__ import annotations

import re
import string
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from http.cookies import SimpleCookie

import pytest
from django.core import signing

from annotation.models import Participant
from annotation.views.annotator import pending_entry
from tests.annotation.factories import make_study

pytestmark = pytest.mark.django_db(transaction=True)

COOKIE_SAFE = set(string.ascii_letters + string.digits + "-_:.")


def _opener():
    jar = CookieJar()
    return jar, urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))


def test_the_standard_cookie_jar_carries_the_entry_to_the_participants_session(live_server):
    study = make_study(n_items=2, min_seconds_per_item=0)
    jar, opener = _opener()
    query = urllib.parse.urlencode(
        {
            "PROLIFIC_PID": "5f0c1a2b3c4d5e6f7a8b9c0d",
            "STUDY_ID": "S-1",
            "SESSION_ID": "6a1b2c3d4e5f6a7b8c9d0e1f",
        }
    )
    with opener.open(f"{live_server.url}/study/s/{study.slug}/?{query}") as r:
        consent = r.read().decode()
        consent_url = r.url
    entry = next(c for c in jar if c.name == f"h2r_e_{study.slug}")
    assert set(entry.value) <= COOKIE_SAFE, entry.value  # no quotes, no backslash escapes
    assert SimpleCookie(f"{entry.name}={entry.value}")[entry.name].value == entry.value

    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', consent).group(1)
    body = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "consent": "agree"}).encode()
    request = urllib.request.Request(consent_url, data=body, headers={"Referer": consent_url})
    with opener.open(request) as r:
        page = r.read().decode()
    assert "We could not find your session" not in page
    participant = Participant.objects.get(study=study)
    assert (participant.prolific_pid, participant.prolific_session_id) == (
        "5f0c1a2b3c4d5e6f7a8b9c0d",
        "6a1b2c3d4e5f6a7b8c9d0e1f",
    )
    assert participant.stage != "consent"
    # the participant's own cookie came back through the jar, and it is cookie-safe too
    own = next(c for c in jar if c.name == f"h2r_p_{study.slug}")
    assert set(own.value) <= COOKIE_SAFE


def test_a_tampered_or_foreign_entry_token_is_no_entry(rf):
    study_slug = "abc"
    good = signing.dumps({"PROLIFIC_PID": "P"}, salt="x")  # another salt: not ours
    request = rf.get("/", HTTP_COOKIE=f"h2r_e_{study_slug}={good}")
    assert pending_entry(request, study_slug) is None
    request = rf.get("/", HTTP_COOKIE=f"h2r_e_{study_slug}=not-a-token")
    assert pending_entry(request, study_slug) is None
