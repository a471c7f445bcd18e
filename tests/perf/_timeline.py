"""What ``bench_lanes_every_run_type.py --timeline`` records: when the local server held each
request (and for which lane), and every Redis command on the endpoint's gate keys
(:mod:`benchmarks.llm.concurrency`), so a wall-time ratio comes with its mechanism — slots idle
at the run's start, in its steady state (hand-over) or at its end (a lane alone), and the
gate's round trips per request."""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any


class Timeline:
    """A responder for the local server that records ``(start, end, tag)`` of each request
    around the responder it wraps (``tag(req)``: e.g. the document's number)."""

    def __init__(self, responder: Callable, tag: Callable[[Any], str] | None = None) -> None:
        self.responder, self.tag = responder, tag or (lambda req: "")
        self.events: list[tuple[float, float, str]] = []
        self._lock = threading.Lock()

    def __call__(self, req):
        start = time.monotonic()
        try:
            return self.responder(req)
        finally:
            end = time.monotonic()
            with self._lock:
                self.events.append((start, end, self.tag(req)))


def summary(events, *, cap: int, launched: float, done: float, lane_of=None) -> dict:
    """Where the slots were idle: the run's start (launch → first request), its steady part
    (time-weighted share of time below ``cap`` in flight, and how long such a stretch lasts),
    its end (last reply → run done), and each lane's first/last request."""
    if not events:
        return {}
    first, last = min(e[0] for e in events), max(e[1] for e in events)
    steps = sorted([(s, 1) for s, _, _ in events] + [(e, -1) for _, e, _ in events])
    level, at, below, stretches, weighted = 0, first, 0.0, 0, 0.0
    for t, d in steps:
        if level < cap:
            below += t - at
        weighted += level * (t - at)
        was = level
        level += d
        at = t
        if was >= cap > level:
            stretches += 1
    span = max(last - first, 1e-9)
    lanes: dict[Any, list] = defaultdict(lambda: [float("inf"), 0.0, 0])
    for s, e, tag in events:
        row = lanes[lane_of(tag) if lane_of else tag]
        row[0], row[1], row[2] = min(row[0], s), max(row[1], e), row[2] + 1
    return {
        "startup_s": first - launched,
        "tail_s": done - last,
        "span_s": span,
        "mean_in_flight": weighted / span,
        "below_cap_share": below / span,
        "below_cap_stretch_ms": 1000 * below / max(stretches, 1),
        "lanes": {
            k: (round(v[0] - launched, 2), round(v[1] - launched, 2), v[2])
            for k, v in sorted(lanes.items(), key=lambda kv: kv[1][0])
        },
    }


class GateCalls:
    """Every Redis command naming a gate key (``how2review:concurrency:``), seen through
    ``MONITOR`` while it runs; :meth:`count` keeps those of one endpoint key's gates."""

    PREFIX = "how2review:concurrency:"

    def __init__(self, url: str) -> None:
        import redis

        self.url = url
        self.lines: list[str] = []
        self._stop = False
        self._client = redis.Redis.from_url(url, socket_timeout=None)
        self._thread = threading.Thread(target=self._run, daemon=True, name="gate-monitor")
        self._ready = threading.Event()
        self._marker = f"gate-monitor-end-{uuid.uuid4().hex}"
        self.failed = ""

    def _run(self) -> None:
        try:
            self._read()
        except Exception as exc:  # noqa: BLE001 - the counts are then marked as cut short
            self.failed = f"{type(exc).__name__}: {exc}"
            self._ready.set()

    def _read(self) -> None:
        with self._client.monitor() as m:
            self._ready.set()
            for cmd in m.listen():
                text = cmd.get("command", "")
                if self._stop and self._marker in text:
                    return  # everything sent before the stop is read
                # a round trip of a client (what a script calls is listed too, from "lua")
                if self.PREFIX in text and cmd.get("client_type") != "lua":
                    self.lines.append(text)

    def __enter__(self) -> GateCalls:
        self._thread.start()
        self._ready.wait(5)
        return self

    def __exit__(self, *exc) -> None:
        if self._stop:
            return
        self._stop = True
        self._client.echo(self._marker)  # the monitor reads up to here, then stops
        self._thread.join(60)

    def count(self, endpoint_key: str) -> Counter:
        """The commands on the in-flight and the sent-not-stored gates of ``endpoint_key``, by
        command (scripts by name)."""
        from benchmarks.llm import concurrency

        digests = {
            hashlib.sha256(k.encode()).hexdigest()[:24]: k.endswith("|unstored")
            for k in (endpoint_key, f"{endpoint_key}|unstored")
        }
        scripts = {
            hashlib.sha1(src.encode()).hexdigest(): name.strip("_").lower()
            for name, src in vars(concurrency).items()
            if name.startswith("_") and name.isupper() and isinstance(src, str)
        }
        out: Counter = Counter()
        if self.failed:
            out[f"MONITOR CUT SHORT ({self.failed})"] = 0
        for line in self.lines:
            unstored = next((u for d, u in digests.items() if d in line), None)
            if unstored is None:
                continue
            words = line.split()
            name = words[0].strip('"').upper()
            if name == "EVALSHA" and len(words) > 1:
                name = scripts.get(words[1].strip('"'), "evalsha")
            elif name == "EVAL":
                name = _script_of(line)
            out[("unstored " if unstored else "in-flight ") + name.lower()] += 1
        return out


def _script_of(line: str) -> str:
    """Which gate script an ``EVAL`` line runs (its text is on the line)."""
    if "'XX'" in line:
        return "renew"
    if "ZCARD" in line:
        return "acquire"
    if "RPUSH" in line:
        return "release_many" if "#ARGV" in line else "release"
    return "eval"
