"""Locust users for bench_annotation.py: simulated Prolific annotators in a closed loop, each
entering with its own PROLIFIC_PID. As the item page's script does (``BENCH_PLAIN`` unset): the
first item page, then each save answered with the next item's page in one request (htmx headers,
``HX-Replace-Url``). As a browser without the script does (``BENCH_PLAIN=1``): the item page, then
the save answered with a redirect to it. A user refused at any step is a failed request
(bench_annotation.py then exits 1)."""

from __future__ import annotations

import os
import re
import uuid

import _locust_saves  # tests/perf, on Locust's path beside this file
from locust import FastHttpUser, between, constant, constant_throughput, events, task
from locust.exception import StopUser

SLUG = os.environ["BENCH_STUDY_SLUG"]
N_STEPS = int(os.environ.get("BENCH_N_STEPS", "6"))
# items/s per annotator (closed loop with pacing); 0: the next request as soon as the answer arrives
RATE = float(os.environ.get("BENCH_RATE_PER_USER", "0") or 0)
# a pause between a user's items drawn at random, 0 to 2x this many seconds (mean: this): users out
# of step, as people are (a fixed pace keeps 50 users started together sending together)
THINK = float(os.environ.get("BENCH_THINK_S", "0") or 0)
# "MIN,MAX": a pause drawn between MIN and MAX seconds after each item (a person's pace)
PACE = [float(x) for x in os.environ.get("BENCH_PACE", "").split(",") if x]
MODE = os.environ.get("BENCH_MODE", "annotate")
PLAIN = os.environ.get("BENCH_PLAIN") == "1"  # no script: post, redirect, get
# the headers htmx sends for the item form (hx-boost): the server answers with the next item
IN_PLACE = {"HX-Request": "true", "HX-Boosted": "true"}
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
_ACTION = re.compile(r'id="item-form" method="post" action="([^"]+)"')
# saves sent and answered: one cut off unanswered by the stop may still be stored by the server
SAVES = _locust_saves.SAVES
_locust_saves.install(events)


class Annotator(FastHttpUser):
    wait_time = (
        between(*PACE)
        if PACE
        else between(0, 2 * THINK)
        if THINK > 0
        else constant_throughput(RATE)
        if RATE > 0
        else constant(0)
    )

    def on_start(self):
        if MODE == "floor":
            return
        pid = uuid.uuid4().hex[:24]
        base = f"/study/s/{SLUG}"
        with self.client.get(
            f"{base}/?PROLIFIC_PID={pid}&STUDY_ID=BENCH&SESSION_ID=s{pid[:8]}",
            name="setup: enter",
            allow_redirects=True,
            catch_response=True,
        ) as r:
            token = _CSRF.search(r.text or "")
            if not token:  # refused at entry (e.g. 429: the study's limit per address)
                r.failure(f"no consent form: entry answered {r.status_code}")
                raise StopUser()
        for step, data in (("consent", {"consent": "agree"}), ("codebook", {})):
            with self.client.post(
                f"{base}/{step}/",
                data={"csrfmiddlewaretoken": token.group(1), **data},
                name=f"setup: {step}",
                allow_redirects=False,
                catch_response=True,
            ) as r:
                if r.status_code != 302:  # a refused user is a failure, never silently idle
                    r.failure(f"{step} answered {r.status_code}")
                    raise StopUser()
        self.base = base
        self.page = ""  # the item page in hand (in place: the last save's answer)
        self.form = {
            "goal_ack": "1",
            "read": [str(i) for i in range(1, N_STEPS + 1)],
            "read_l1": [str(i) for i in range(1, N_STEPS + 1)],
            "choice": "failure",
            "f-0-desc": "L2 step 2 contradicts the goal.",
            "f-0-l1": "2",
            "f-0-l2": "2",
            "comments": "",
            "active_ms": "1000",
        }

    @task
    def annotate(self):
        if MODE == "floor":  # the bare view of bench_annotation_settings, twice per "item"
            self.client.get("/bench/floor/", name="floor")
            self.client.get("/bench/floor/", name="floor")
            return
        if PLAIN or not self.page:
            with self.client.get(
                f"{self.base}/item/", name="item page", allow_redirects=False, catch_response=True
            ) as r:
                if r.status_code != 200:
                    r.failure(f"item page answered {r.status_code}")
                    raise StopUser()
                self.page = r.text or ""
                if not _ACTION.search(self.page) or not _CSRF.search(self.page):
                    r.failure("no item form")
                    raise StopUser()
        action, token = _ACTION.search(self.page), _CSRF.search(self.page)
        if not action or not token:  # a failure counted by the last save's request
            self.page = ""
            return
        data = dict(self.form, csrfmiddlewaretoken=token.group(1))
        body = "&".join(
            f"{k}={v}"
            for k, vals in data.items()
            for v in (vals if isinstance(vals, list) else [vals])
        ).replace(" ", "+")
        SAVES["sent"] += 1
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Referer": self.host + self.base + "/item/",
        }
        if not PLAIN:
            headers |= IN_PLACE | {"HX-Current-URL": headers["Referer"]}
        with self.client.post(
            action.group(1),
            data=body,
            name="save (submit)",
            allow_redirects=False,
            headers=headers,
            catch_response=True,
        ) as r:
            if PLAIN and r.status_code == 302:
                SAVES["answered"] += 1
            elif not PLAIN and r.status_code == 200 and r.headers.get("HX-Replace-Url"):
                SAVES["answered"] += 1
                self.page = r.text or ""  # the next item
                if not _ACTION.search(self.page):
                    r.failure("save answered without the next item's form")
            else:
                self.page = ""
                r.failure(f"save answered {r.status_code}")
