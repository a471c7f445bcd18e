"""Following a run from a command (core.runs.progress) on the test-only run type: the one-line
progress bar on a terminal and in a log, waiting for a run worked in this process or by the
workers, and Ctrl-C cancelling the run it waits for."""

from __future__ import annotations

import io

import pytest

from core.runs import engine
from core.runs.progress import Progress, wait
from tests.core.factories import make_engine_run

pytestmark = pytest.mark.django_db


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_inline_wait_works_the_run_and_a_log_gets_one_line(engine_script):
    engine_script["chunk_items"] = 2
    run = make_engine_run(items=6)
    stream = io.StringIO()
    run = wait(run, inline=True, on_progress=Progress("engine", stream))
    assert (run.status, run.n_done) == ("done", 6)
    assert len(engine_script["tokens"]) == 3  # three chunks of two items
    assert stream.getvalue() == f"  engine [{'#' * 30}] 6/6 done\n"


def test_a_terminal_redraws_the_bar_after_each_chunk(engine_script):
    engine_script["chunk_items"] = 2
    run = make_engine_run(items=4)
    stream = Terminal()
    wait(run, inline=True, on_progress=Progress("engine", stream))
    drawn = stream.getvalue()
    assert drawn == (
        f"\r  engine [{'#' * 15}{'-' * 15}] 2/4 running\r  engine [{'#' * 30}] 4/4 done\n"
    )


def test_waiting_on_the_workers_polls_until_the_run_stops_and_ctrl_c_cancels(engine_script):
    finished = make_engine_run(status="done", n_total=3, n_done=3)
    assert wait(finished, poll_s=0).status == "done"
    running = make_engine_run(status="running")
    cancelled = []

    def interrupt(run):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        wait(running, on_progress=interrupt, cancel=lambda r: cancelled.append(engine.cancel(r)))
    assert [r.status for r in cancelled] == ["cancelled"]  # nobody held it: cancelled at once
