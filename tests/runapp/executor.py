"""The executor of the test run type, driven by a script the test sets
(``ScriptedExecutor.script``, see the ``engine_script`` fixture in tests/core/conftest.py).

Two ways to work a run:

- a run without items works ``script["chunks"]`` chunks and counts from the script
  (``n_total`` = 3 per chunk, ``n_done`` = 3 per chunk worked, 7 prompt tokens);
- a run with items (:class:`tests.runapp.models.EngineItem`) works them in order, at most
  ``script["chunk_items"]`` per chunk, only its lane's in a lane, beating the lease after each
  item and stopping at anything but HELD; counters are counted from the rows.

``script["during"](run, lease)`` runs at the start of each chunk (another execution, a
cancel…), ``script["raise"]`` makes a chunk fail, ``script["fail"]`` names item positions that
fail, ``script["item_s"]`` is how long one item takes, ``script["lanes"]`` the run's lanes and
``script["outcome"]`` the (status, error) of a run with no work left.
"""

from __future__ import annotations

import time

from core.runs.engine import LeaseState, RunExecutor


def fresh_script() -> dict:
    return {"chunks": 1, "worked": 0, "tokens": [], "resumed": [], "items": []}


class ScriptedExecutor(RunExecutor):
    script: dict = fresh_script()

    def lanes(self, run) -> int:
        return self.script.get("lanes", 1)

    def work_chunk(self, run, lease) -> bool:
        s = self.script
        s["tokens"].append(lease.token)
        if s.get("during"):
            s["during"](run, lease)
        if s.get("raise"):
            raise s["raise"]
        if run.items.exists():
            return self._work_items(run, lease)
        s["worked"] += 1
        return s["worked"] < s["chunks"]

    def _work_items(self, run, lease) -> bool:
        s = self.script
        todo = run.items.filter(done=False, failed=False)
        if lease.lane is not None:
            todo = todo.filter(lane=lease.lane)
        limit = s.get("chunk_items", 10**6)
        for n, item in enumerate(todo):
            if n >= limit:
                return True
            if s.get("item_s"):
                time.sleep(s["item_s"])
            failed = item.position in s.get("fail", ())
            type(item).objects.filter(pk=item.pk).update(
                done=not failed, failed=failed, worked_by=lease.token
            )
            s["items"].append((item.position, lease.lane))
            if lease.beat() is not LeaseState.HELD:
                return todo.exists()
        return False

    def counters(self, run) -> dict:
        s = self.script
        if run.items.exists():
            return {
                "n_total": run.items.count(),
                "n_done": run.items.filter(done=True).count(),
                "n_failed": run.items.filter(failed=True).count(),
            }
        return {"n_total": 3 * s["chunks"], "n_done": 3 * s["worked"], "prompt_tokens": 7}

    def outcome(self, run) -> tuple[str, str]:
        if "outcome" in self.script:
            return self.script["outcome"]
        failed = run.items.filter(failed=True).count()
        return ("failed", f"{failed} item(s) failed") if failed else ("done", "")

    def on_resume(self, run) -> None:
        self.script["resumed"].append(run.pk)
        run.items.filter(failed=True).update(failed=False)
