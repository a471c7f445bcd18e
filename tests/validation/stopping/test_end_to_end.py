"""A study with a target interval, end to end: participants take places on the local Prolific
server and label over HTTP (the real entry, consent, codebook, item page and save), a real
Celery worker checks the interval after labels arrive; once the half-width reaches the target
the study stops handing out new items and its recruitment is paused on Prolific (a logged call
by the app), a participant holding an item still saves it, and an admin's one click resumes
both (Prolific ACTIVE again, items handed out again)."""

from __future__ import annotations

import re

import httpx
import pytest
from django.urls import reverse

from annotation.models import Annotation, Assignment, ProlificCall, Study
from tests.support.worker import running_worker, wait_for
from tests.validation.stopping.conftest import TOKEN, make_target_study, on_prolific
from validation.active.reads import study_interval
from validation.active.stats import MIN_LABELLED_TO_STOP

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
ACTION = re.compile(r'id="item-form" method="post" action="([^"]+)"')
PASSWORD = "pw-Test-12345"
TARGET = 0.08


class Person:
    """One Prolific participant in their own HTTP session."""

    def __init__(self, base: str, study: Study, pid: str, session: str) -> None:
        self.study, self.pid = study, pid
        self.http = httpx.Client(base_url=base, timeout=30)
        self.root = f"/study/s/{study.slug}"
        params = {"PROLIFIC_PID": pid, "STUDY_ID": study.prolific_study_id, "SESSION_ID": session}
        self.entry = self.http.get(f"{self.root}/", params=params, follow_redirects=True)

    def post(self, url: str, page: str, data: dict) -> httpx.Response:
        token = CSRF.search(page)
        assert token, page[:500]
        return self.http.post(url, data={"csrfmiddlewaretoken": token.group(1), **data})

    def start(self) -> str:
        """Consent and the codebook; the first item page."""
        assert self.entry.status_code == 200, self.entry.text[:300]
        assert (
            self.post(f"{self.root}/consent/", self.entry.text, {"consent": "agree"}).status_code
            == 302
        )
        assert self.post(f"{self.root}/codebook/", self.entry.text, {}).status_code == 302
        return self.http.get(f"{self.root}/item/").text

    def answer(self, page: str) -> httpx.Response:
        """The item of ``page`` labelled as people label it (the study's ``people``)."""
        held = Assignment.objects.get(participant__prolific_pid=self.pid, state="active")
        failure = self.study.people[held.item.generation_id]
        data = {
            "goal_ack": "1",
            "read": [str(i) for i in range(1, 5)],
            "read_l1": [str(i) for i in range(1, 5)],
            "choice": "failure" if failure else "none",
            "comments": "",
            "active_ms": "1000",
        }
        if failure:
            data |= {"f-0-desc": "Step 2 leaves out the filter.", "f-0-l1": "2", "f-0-l2": "2"}
        return self.post(ACTION.search(page).group(1), page, data)

    def label_all(self, page: str) -> int:
        """Label items while item pages come; how many were saved."""
        n = 0
        while ACTION.search(page):
            assert self.answer(page).status_code == 302
            n += 1
            page = self.http.get(f"{self.root}/item/", follow_redirects=True).text
        return n


def test_a_study_stops_at_its_target_on_prolific_and_resumes(
    live_server, prolific_server, settings, tmp_path, make_user
):
    settings.STUDY_TARGET_CHECK_SECONDS = 1
    study = make_target_study(target=TARGET, items_per_participant=20)
    on_prolific(prolific_server, study)
    make_user("stop-admin", role="admin", password=PASSWORD)
    base = live_server.url
    prolific = {"PROLIFIC_API_BASE_URL": prolific_server.base_url, "PROLIFIC_API_TOKEN": TOKEN}

    def person(pid: str) -> Person:
        return Person(base, study, pid, prolific_server.take_place("PS1", pid))

    with running_worker(tmp_path, concurrency=1, extra_env=prolific) as worker:
        holder = person("HOLDER")  # holds an item while the study stops
        held_page = holder.start()
        assert ACTION.search(held_page)
        saved, n = 0, 0
        while Study.objects.get(pk=study.pk).status == Study.Status.OPEN:
            assert n < 8, "the target was never reached"
            someone = person(f"P{n:02d}")
            saved += someone.label_all(someone.start())
            n += 1
            if study_interval(study)["reached"]:  # the worker's check stops it shortly
                wait_for(
                    lambda: Study.objects.get(pk=study.pk).status == Study.Status.PAUSED,
                    timeout=30,
                    message="the study paused by the worker's check",
                )

        # stopped: the study, Prolific, the logged call
        study.refresh_from_db()
        assert study.status == Study.Status.PAUSED and study.target_reached_at is not None
        kept = study.target_reached_interval
        assert kept["half_width"] <= TARGET and MIN_LABELLED_TO_STOP <= kept["n_labels"] <= saved
        assert saved < 8 * 20  # stopped before every participant had labelled all theirs
        wait_for(lambda: prolific_server.studies["PS1"]["status"] == "PAUSED", timeout=15)
        call = ProlificCall.objects.get(study=study, action="study_pause")
        assert (
            call.ok and call.user is None and "target interval was reached" in call.request_summary
        )
        # nobody new gets an item: no place on Prolific, and the study link says it is paused
        with pytest.raises(AssertionError, match="PAUSED"):
            prolific_server.take_place("PS1", "LATE")
        late = Person(base, study, "LATE", "late-session")
        assert late.entry.status_code == 503 and "This study is paused" in late.entry.text
        # the participant holding an item finishes it
        assert holder.answer(held_page).status_code == 302
        assert Annotation.objects.filter(participant__prolific_pid="HOLDER").count() == 1

        # an admin resumes: one click on the study page
        admin = httpx.Client(base_url=base, timeout=30)
        login = admin.get(reverse("login"))
        admin.post(
            reverse("login"),
            data={
                "csrfmiddlewaretoken": CSRF.search(login.text).group(1),
                "username": "stop-admin",
                "password": PASSWORD,
            },
        )
        panel = admin.get(reverse("validation:study_target", args=[study.pk]))
        assert "Stopped on" in panel.text and 'id="target-resume"' in panel.text
        resumed = admin.post(
            reverse("validation:study_target_resume", args=[study.pk]),
            data={"csrfmiddlewaretoken": CSRF.search(panel.text).group(1)},
            follow_redirects=True,
        )
        assert "recruitment on Prolific is active again" in resumed.text
        assert prolific_server.studies["PS1"]["status"] == "ACTIVE"
        start = ProlificCall.objects.get(study=study, action="study_start")
        assert start.ok and start.user.username == "stop-admin"
        study.refresh_from_db()
        assert study.status == Study.Status.OPEN and study.target_resumed_at is not None
        # items are handed out again, and the target does not stop the study a second time
        after = person("AFTER")
        assert after.label_all(after.start()) == 20
        wait_for(
            lambda: "'no target to watch'" in worker.log(),
            timeout=30,
            message="the check after the resume",
        )
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN
