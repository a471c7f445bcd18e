"""The progress pages' poll back-off (core.polling, pure)."""

from __future__ import annotations

from core.polling import BUSY_MOST_S, FIRST_S, IDLE_MOST_S, next_poll


def test_first_poll_and_bad_values_start_over():
    for waited in (None, "", "abc", "-3", "0", "nan"):
        assert next_poll(waited=waited, seen="a", mark="a").wait_s == FIRST_S


def test_waits_grow_to_the_busy_bound_while_moving_and_further_when_idle():
    waits = []
    poll = next_poll(waited=None, seen=None, mark="0")
    for mark in range(1, 9):
        poll = next_poll(waited=poll.wait, seen=poll.mark, mark=str(mark))
        waits.append(poll.wait_s)
    assert waits[:3] == [1.5, 2.25, 3.38] and max(waits) == BUSY_MOST_S
    for _ in range(10):
        poll = next_poll(waited=poll.wait, seen=poll.mark, mark=poll.mark)
    assert poll.wait_s == IDLE_MOST_S and poll.wait == "20"
    moved = next_poll(waited=poll.wait, seen=poll.mark, mark="moved")
    assert moved.wait_s == BUSY_MOST_S  # back to the busy bound once it moves again
    assert moved.query == "wait=5&seen=moved"
