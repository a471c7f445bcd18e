"""core.heap.settle in a fresh interpreter: what is alive is frozen out of the collector's
generations, the young generation's threshold is raised, garbage made later is still collected."""

from __future__ import annotations

import subprocess
import sys

from tests.support.worker import ROOT

SCRIPT = """
import gc, weakref
from core import heap

class Node:
    pass

kept = [Node() for _ in range(1000)]
assert gc.get_freeze_count() == 0
heap.settle()
assert gc.get_freeze_count() >= 1000, gc.get_freeze_count()
assert gc.get_threshold()[0] == heap.YOUNG_THRESHOLD
a, b = Node(), Node()
a.other, b.other = b, a  # a cycle made after settling
gone = weakref.ref(a)
del a, b
gc.collect()
assert gone() is None
print("ok")
"""


def test_settle_freezes_what_is_alive_raises_the_young_threshold_and_still_collects_cycles():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
