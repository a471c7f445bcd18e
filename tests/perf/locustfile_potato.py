"""Locust users for bench_peers_annotation.py: simulated Prolific annotators of a Potato
project in a closed loop, doing what Potato's own page does (its user simulator sends the same
requests): enter with a PROLIFIC_PID (URL login), open the annotation page, then per item save
the labels (``POST /updateinstance``, JSON, as the page's autosave) and move on (``POST
/annotate`` with ``action=next_instance``, answered with the next item's page)."""

from __future__ import annotations

import re
import uuid

import _locust_saves  # tests/perf, on Locust's path beside this file
from locust import FastHttpUser, constant, events, task
from locust.exception import StopUser

SAVES = _locust_saves.SAVES
_locust_saves.install(events)

# the page's current instance, as its template writes it
_INSTANCE = re.compile(r'id="instance_id"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*id="instance_id"')


def instance_of(html: str) -> str | None:
    match = _INSTANCE.search(html or "")
    return (match.group(1) or match.group(2)) if match else None


class PotatoAnnotator(FastHttpUser):
    wait_time = constant(0)

    def on_start(self):
        pid = uuid.uuid4().hex[:24]
        self.client.get(
            f"/?PROLIFIC_PID={pid}&STUDY_ID=BENCH&SESSION_ID=s{pid[:8]}",
            name="setup: enter",
            allow_redirects=True,
        )
        with self.client.get("/annotate", name="setup: first item", catch_response=True) as r:
            self.instance = instance_of(r.text)
            if not self.instance:
                r.failure("no instance on the annotation page")
                raise StopUser()

    @task
    def annotate(self):
        payload = {
            "instance_id": self.instance,
            "annotations": {
                "critical_failure:failure": "on",
                "failure_description:text": "L2 step 2 contradicts the goal.",
            },
            "span_annotations": [],
        }
        SAVES["sent"] += 1
        with self.client.post(
            "/updateinstance", json=payload, name="save (submit)", catch_response=True
        ) as r:
            if r.status_code != 200:
                r.failure(f"save answered {r.status_code}")
            else:
                SAVES["answered"] += 1
        with self.client.post(
            "/annotate",
            data="action=next_instance",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            name="item page",
            catch_response=True,
        ) as r:
            nxt = instance_of(r.text) if r.status_code == 200 else None
            if not nxt:
                r.failure(f"next item page answered {r.status_code} without an instance")
                raise StopUser()
            self.instance = nxt
