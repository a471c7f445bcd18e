"""Memory of the web and judge processes.

1. **Web**: gunicorn (``--workers`` sync workers, production settings: bench_annotation.py's
   harness and seed, scratch database ``h2r_bench_memory``) started as in production (no
   ``--preload``); each worker's RSS, USS and PSS (psutil) after boot, then after ``--users``
   participants have each entered, consented and saved ``--items-each`` items over HTTP, each
   save answered with the next item in place as the item page's script does (every
   request must answer as expected, and the annotations stored must equal the saves counted:
   tests/perf/_honest.py). Also which heavy libraries each worker has mapped (``/proc/PID/maps``).
2. **A fresh process** serving the item path through Django's test client
   (tests/support/item_path_probe.py): the heavy modules it imported and its memory.
3. **Judge worker**: a Celery worker (prefork, concurrency 1: a main process and one child)
   works a ``--judge-n`` judge run against the local OpenAI-compatible test server (200 ms a
   reply, concurrency 64); the peak RSS (VmHWM) of each process and their sum, sampled every
   0.1 s (the reference CLI, lilakk/how2everything, peaks at ~203 MB for its judge run).

Figures go to tests/perf/out/memory.json (each part in its own process: ``--only web|judge``); exit 1 when a request was refused or a count differs.
Run: ``.venv/bin/python tests/perf/bench_memory.py [--workers 3] [--users 20]
[--items-each 5] [--judge-n 3000]``. Environment: ``PERF_PG_URL`` (as bench_annotation.py),
``DATABASE_URL`` (the judge part's server; a scratch database ``h2r_bench_memory_judge`` is
created and dropped), ``CELERY_BROKER_URL`` (default redis://127.0.0.1:6379/0).
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")

from tests.perf import _annotation_server as srv  # noqa: E402  (the database's name: its home)
from tests.perf import _annotation_study as study  # noqa: E402
from tests.perf._honest import Ledger  # noqa: E402
from tests.support.item_path_probe import HEAVY  # noqa: E402

srv.DB_NAME = "h2r_bench_memory"
MIB = 2**20
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
_ACTION = re.compile(r'id="item-form" method="post" action="([^"]+)"')
_LIB = re.compile(r"/site-packages/([A-Za-z0-9_]+)/")


def memory(pid: int) -> dict:
    import psutil

    info = psutil.Process(pid).memory_full_info()
    mapped = set()
    try:
        for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
            m = _LIB.search(line)
            if m and m.group(1) in HEAVY:
                mapped.add(m.group(1))
    except OSError:
        pass
    return {
        **{k: round(getattr(info, k) / MIB, 1) for k in ("rss", "uss", "pss")},
        "heavy_mapped": sorted(mapped),
    }


def workers_of(proc: subprocess.Popen) -> list[int]:
    import psutil

    return [p.pid for p in psutil.Process(proc.pid).children()]


class Annotator:
    """One participant over HTTP (its own cookies), every status checked into the ledger."""

    def __init__(self, port: int, slug: str, pid: str, ledger: Ledger) -> None:
        self.base = f"http://127.0.0.1:{port}/study/s/{slug}"
        self.ledger = ledger
        jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(jar), _NoRedirect()
        )
        self.pid = pid
        self.page = ""  # the item page in hand: the last save's answer (in place)

    def call(
        self, what: str, url: str, data: dict | None = None, expect=(200,), headers=None
    ) -> str | None:
        """The page's text (None: refused, counted in the ledger)."""
        body = urllib.parse.urlencode(data, doseq=True).encode() if data is not None else None
        request = urllib.request.Request(url, data=body, headers=headers or {})
        try:
            with self.opener.open(request, timeout=30) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read().decode(errors="replace")
        ok = self.ledger.request(status, ok=status in expect, detail=f"{what} ({self.pid})")
        return text if ok else None

    def enter(self) -> str | None:
        query = urllib.parse.urlencode(
            {"PROLIFIC_PID": self.pid, "STUDY_ID": "BENCH", "SESSION_ID": f"s-{self.pid}"}
        )
        self.call("enter", f"{self.base}/?{query}", expect=(302,))
        page = self.call("consent page", f"{self.base}/consent/")
        token = _CSRF.search(page or "")
        if not token:
            return None
        self.token = token.group(1)
        self.call("consent", f"{self.base}/consent/", {"csrfmiddlewaretoken": self.token, "consent": "agree"}, (302,))  # fmt: skip
        self.call("codebook", f"{self.base}/codebook/", {"csrfmiddlewaretoken": self.token}, (302,))  # fmt: skip
        return self.token

    def save_one(self) -> bool:
        """One item as the item page's script saves it: the save answered with the next item's
        page in place (the first item page fetched once)."""
        page = self.page or self.call("item page", f"{self.base}/item/") or ""
        action, token = _ACTION.search(page), _CSRF.search(page)
        if not action or not token:
            return False
        form = {
            "csrfmiddlewaretoken": token.group(1),
            "goal_ack": "1",
            "read": re.findall(r'name="read" value="(\d+)"', page),
            "read_l1": re.findall(r'name="read_l1" value="(\d+)"', page),
            "choice": "none",
            "comments": "",
            "active_ms": "1000",
        }
        url = urllib.parse.urljoin(self.base + "/", action.group(1))
        hx = {"HX-Request": "true", "HX-Boosted": "true"}
        answer = self.call("save", url, form, (200,), headers=hx)
        self.page = answer or ""  # "" after an HX-Redirect: the next save fetches the page
        return answer is not None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a 302 is an answer to check, not to follow


def web(args) -> dict:
    srv.recreate_db()
    proc = None
    ledger = Ledger(f"web memory, {args.users} participants x {args.items_each} items")
    try:
        slug = study.seed(args.items, args.users + 1)
        proc, port = srv.start_gunicorn(args.workers, srv.OUT / "memory-gunicorn.log")
        pids = workers_of(proc)
        at_boot = {pid: memory(pid) for pid in pids}
        stored0 = study.stored_counts(slug)
        saves = 0
        for u in range(args.users):
            annotator = Annotator(port, slug, f"MEM{u:04d}", ledger)
            if annotator.enter():
                for _ in range(args.items_each):
                    saves += annotator.save_one()
        time.sleep(0.5)
        served = {pid: memory(pid) for pid in pids}
        stored1 = study.stored_counts(slug)
        ledger.expect("annotations", saves, before=stored0["annotations"])
        ledger.stored("annotations", stored1["annotations"])
        ledger.users(args.users, stored1["participants"] - stored0["participants"])
        probe = subprocess.run(
            [sys.executable, "-m", "tests.support.item_path_probe", slug],
            cwd=ROOT,
            env=srv.server_env(),  # the same production settings as the workers
            capture_output=True,
            text=True,
            timeout=120,
        )
        fresh = json.loads(probe.stdout.strip().splitlines()[-1]) if probe.returncode == 0 else {}
        if probe.returncode != 0:
            ledger.refused(1, "item path probe failed: " + probe.stderr[-300:])
        from django.db import connections

        connections.close_all()
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        srv.drop_db()
    return {
        "workers_at_boot": list(at_boot.values()),
        "workers_after_item_path": list(served.values()),
        "fresh_process": fresh,
        "saves": saves,
        "ok": ledger.verdict() == 0,
    }


class PeakMeter:
    """Peak RSS (VmHWM, MiB) of a process and each of its descendants, sampled every 0.1 s."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.peaks: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def sample(self) -> None:
        import psutil

        try:
            procs = [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        for p in procs:
            try:
                status = Path(f"/proc/{p.pid}/status").read_text()
            except OSError:
                continue
            kb = int(re.search(r"^VmHWM:\s+(\d+)", status, re.M).group(1))
            self.peaks[p.pid] = max(self.peaks.get(p.pid, 0.0), kb / 1024)

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            self.sample()

    def start(self) -> PeakMeter:
        self.sample()
        self._thread.start()
        return self

    def stop(self) -> dict[int, float]:
        self.sample()
        self._stop.set()
        self._thread.join()
        return dict(self.peaks)


def judge(args) -> dict:
    """The judge worker's peak RSS while it works one run (scratch test database)."""
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["TEST_DATABASE_NAME"] = "h2r_bench_memory_judge"
    import django

    django.setup()
    from django.db import connection

    from judging.models import JudgeRun, Judgment
    from judging.services import judges as judge_services
    from judging.services import runs as services
    from tests.judging.support import judge_responder
    from tests.perf.bench_judge_run import make_data
    from tests.support.llm_server import LLMTestServer
    from tests.support.worker import start_worker

    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    ledger = Ledger(f"judge run of {args.judge_n}")
    try:
        make_data(args.judge_n)
        with (
            LLMTestServer(responder=judge_responder, latency_s=0.2) as server,
            tempfile.TemporaryDirectory() as tmp,
        ):
            judge = judge_services.judge_create(
                name="memory-judge",
                backend="openai",
                base_url=server.base_url,
                model="m",
                concurrency=64,
                timeout_s=30,
            )
            worker = start_worker(Path(tmp), concurrency=1)
            try:
                time.sleep(3)  # the worker and its child up, before the run
                meter = PeakMeter(worker.proc.pid).start()
                idle = dict(meter.peaks)
                run = services.judge_run_create(
                    judge=judge, selection={"generators": ["bench-gen"]}
                )
                while True:
                    run.refresh_from_db()
                    if not run.is_active:
                        break
                    time.sleep(0.1)
                peaks = meter.stop()
            finally:
                worker.stop()
        ledger.request(200, ok=run.status == JudgeRun.Status.DONE, detail=f"run {run.status}")
        ledger.expect("judgments", args.judge_n, after=Judgment.objects.filter(judge=judge).count())
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    root = worker.proc.pid
    return {
        "main_peak_mib": round(peaks.get(root, 0), 1),
        "children_peak_mib": [round(v, 1) for pid, v in peaks.items() if pid != root],
        "tree_peak_mib": round(sum(peaks.values()), 1),
        "idle_mib": {("main" if pid == root else "child"): round(v, 1) for pid, v in idle.items()},
        "ok": ledger.verdict() == 0,
    }


def report(part: str, data: dict, args) -> None:
    if part == "web":
        for label, key in (("boot", "workers_at_boot"), ("item path", "workers_after_item_path")):
            for i, m in enumerate(data[key], 1):
                print(
                    f"web worker {i} after {label}: RSS {m['rss']:.0f} MiB, USS {m['uss']:.0f}, "
                    f"PSS {m['pss']:.0f}; heavy libraries mapped: "
                    + (", ".join(m["heavy_mapped"]) or "none")
                )
        fresh = data["fresh_process"]
        if fresh:
            m = fresh["memory_mib"]
            print(
                f"fresh process after the item path (test client): RSS {m['rss']:.0f} MiB, USS "
                f"{m['uss']:.0f}; heavy modules imported: {', '.join(fresh['heavy']) or 'none'}"
            )
    else:
        print(
            f"judge worker (prefork, 1 child), {args.judge_n} judgments: peak RSS main "
            f"{data['main_peak_mib']:.0f} MiB, child "
            + ", ".join(f"{v:.0f}" for v in data["children_peak_mib"])
            + f" MiB, tree {data['tree_peak_mib']:.0f} MiB (idle before the run: "
            f"{data['idle_mib']})"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--users", type=int, default=20)
    ap.add_argument("--items-each", type=int, default=5)
    ap.add_argument("--items", type=int, default=400)
    ap.add_argument("--judge-n", type=int, default=3000)
    ap.add_argument("--only", choices=["web", "judge"], default="")
    args = ap.parse_args()
    srv.OUT.mkdir(parents=True, exist_ok=True)
    if not args.only:  # each part in its own process (the web part sets production settings up)
        codes = [
            subprocess.run([sys.executable, __file__, *sys.argv[1:], "--only", part]).returncode
            for part in ("web", "judge")
        ]
        parts = {
            p: json.loads((srv.OUT / f"memory-{p}.json").read_text()) for p in ("web", "judge")
        }
        (srv.OUT / "memory.json").write_text(json.dumps(parts, indent=2))
        return int(any(codes))
    data = web(args) if args.only == "web" else judge(args)
    report(args.only, data, args)
    (srv.OUT / f"memory-{args.only}.json").write_text(json.dumps(data, indent=2))
    return 0 if data["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
