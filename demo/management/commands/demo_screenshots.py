"""``manage.py demo_screenshots [--out docs/screenshots]``: the screenshots of the README and the docs, taken from
the demo in Debian's chromium (Playwright; no browser is downloaded).

It loads the demo into the configured database if it is not there (``load_demo``), starts this
project's web server on a free local port, signs in as the demo researcher, and saves
``home.png``, ``item.png`` (the running demo study, entered as a new participant, with the
goal acknowledged and some steps clicked through), ``report.png`` (the finished study's
agreement report) and ``mining.png`` (the demo mining batch). The server is stopped at the end.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from demo.management.commands.load_demo import demo_password
from demo.mining import DEMO_BATCH
from demo.studies import SIMULATED_STUDY
from mining.models import MiningBatch

CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1280, "height": 900}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_up(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise CommandError(f"the web server did not answer at {url} within {timeout:.0f} s")


class Command(BaseCommand):
    help = "Take the README's and docs' screenshots (home, item, report, mining) from the demo in chromium."

    def add_arguments(self, parser):
        parser.add_argument("--out", default=str(Path(settings.BASE_DIR) / "docs" / "screenshots"))

    def handle(self, *args, **options):
        if not Path(CHROMIUM).exists():
            raise CommandError(
                f"Debian chromium is needed at {CHROMIUM} (apt-get install chromium)"
            )
        if not Study.objects.filter(name=SIMULATED_STUDY).exists():
            call_command("load_demo", stdout=self.stdout)
        out = Path(options["out"])
        out.mkdir(parents=True, exist_ok=True)
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=settings.BASE_DIR,
            env={**os.environ, "DJANGO_DEBUG": "1"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_up(base)
            self._shoot(base, out)
        finally:
            server.terminate()
            server.wait(timeout=10)
        self.stdout.write(self.style.SUCCESS(f"Screenshots written to {out}"))

    def _shoot(self, base: str, out: Path) -> None:
        from playwright.sync_api import sync_playwright

        study = Study.objects.get(name=SIMULATED_STUDY)
        batch = MiningBatch.objects.get(name=DEMO_BATCH)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                # tall enough for the whole item, so the sticky submit bar sits at the bottom
                visitor = browser.new_context(viewport={"width": 1280, "height": 1320}).new_page()
                visitor.goto(base + "/")
                visitor.click("#try-link")
                visitor.get_by_role("button", name=re.compile("I agree")).click()
                visitor.get_by_role("button", name=re.compile("I understand")).click()
                visitor.wait_for_selector("#item-form")
                visitor.get_by_label("I've read the goal").check()
                steps = visitor.locator(".step").all()
                for box in steps[: max(1, len(steps) - 2)]:
                    box.click()
                visitor.wait_for_timeout(400)  # the progress bar's transition
                visitor.screenshot(path=str(out / "item.png"))

                page = browser.new_context(viewport=VIEWPORT).new_page()
                page.goto(base + "/accounts/login/")
                page.fill("#id_username", "researcher")
                page.fill("#id_password", demo_password(username="researcher") or "")
                page.click("button[type=submit]")
                page.wait_for_url(base + "/")
                shots = {
                    "home.png": "/",
                    "report.png": f"/study/report/{study.pk}/",
                    "mining.png": f"/mining/batches/{batch.pk}/",
                }
                for name, path in shots.items():
                    page.goto(base + path)
                    page.screenshot(path=str(out / name), full_page=name != "report.png")
                    self.stdout.write(f"  {name}: {path}")
            finally:
                browser.close()
