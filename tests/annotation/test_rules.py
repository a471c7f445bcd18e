"""Pure tests of the annotator rules (annotation/rules.py), boundaries first."""

from datetime import UTC, datetime, timedelta

import pytest

from annotation import rules

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


# --- minimum time: one rounding, up -------------------------------------------------------------


@pytest.mark.parametrize(
    "waited,left",
    [
        (0.0, 90),
        (0.4, 90),  # 89.6 s to go: 90 whole seconds
        (1.0, 89),
        (88.9, 2),
        (89.0, 1),
        (89.2, 1),
        (89.9995, 1),  # int(x + 0.999) said 0 here while still refusing
        (89.999999999, 1),
        (90.0, 0),  # open exactly at the minimum
        (90.0001, 0),
        (500.0, 0),
    ],
)
def test_seconds_left_rounds_up_and_is_zero_only_once_open(waited, left):
    assert rules.seconds_left(min_seconds=90, waited=waited) == left
    assert rules.submission_open(min_seconds=90, waited=waited) is (left == 0)


def test_seconds_left_never_shows_zero_while_blocked():
    for step in range(95_001):
        waited = step / 1000  # every millisecond from 0 to 95 s
        left = rules.seconds_left(min_seconds=90, waited=waited)
        assert (left > 0) is (waited < 90)
        if left:
            assert 0 <= left - (90 - waited) < 1


def test_no_minimum_is_always_open():
    assert rules.seconds_left(min_seconds=0, waited=0.0) == 0
    assert rules.submission_open(min_seconds=0, waited=0.0)


def test_waited_and_elapsed_seconds():
    assert rules.waited_seconds(served_at=T0, now=T0 + timedelta(seconds=12.75)) == 12.75
    assert rules.waited_seconds(served_at=T0, now=T0 - timedelta(seconds=3)) == 0.0  # skew
    assert rules.elapsed_seconds(waited=12.75) == 12  # the clock rounds down
    assert rules.elapsed_seconds(waited=0.0) == 0
    assert rules.elapsed_seconds(waited=-1.0) == 0


def test_elapsed_and_left_add_up_to_at_most_one_second_over_the_minimum():
    for step in range(9_001):
        waited = step / 100
        elapsed = rules.elapsed_seconds(waited=waited)
        left = rules.seconds_left(min_seconds=90, waited=waited)
        if left:
            assert 90 <= elapsed + left <= 91


def test_too_early_message():
    assert rules.too_early_message(min_seconds=90, left=1) == (
        "Too early: please spend at least 90 s on each item (1 s left). Your answers are kept."
    )


# --- attention checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "failures,warn_after,screen_after,state",
    [
        (0, 1, 3, rules.ATTENTION_OK),
        (1, 1, 3, rules.ATTENTION_WARN),  # warned at the threshold
        (2, 1, 3, rules.ATTENTION_WARN),
        (3, 1, 3, rules.ATTENTION_SCREEN_OUT),  # screened out at the threshold
        (4, 1, 3, rules.ATTENTION_SCREEN_OUT),
        (2, 2, 2, rules.ATTENTION_SCREEN_OUT),  # both reached: screening out wins
        (5, 0, 0, rules.ATTENTION_OK),  # both off
        (5, 0, 6, rules.ATTENTION_OK),  # warning off
        (5, 2, 0, rules.ATTENTION_WARN),  # screening off
        (1, 2, 0, rules.ATTENTION_OK),
    ],
)
def test_attention_state(failures, warn_after, screen_after, state):
    got = rules.attention_state(failures=failures, warn_after=warn_after, screen_after=screen_after)
    assert got == state


def test_attention_warning_text():
    assert rules.attention_warning(failures=0, warn_after=1, screen_after=3) == ""
    assert rules.attention_warning(failures=1, warn_after=1, screen_after=3) == (
        "Heads up: you have missed 1 attention check. Please read every item carefully. "
        "After 3 missed checks the session ends."
    )
    assert rules.attention_warning(failures=2, warn_after=1, screen_after=0) == (
        "Heads up: you have missed 2 attention checks. Please read every item carefully."
    )


def test_attention_schedule():
    assert (
        rules.attention_interval(0) == 0
        and rules.attention_interval(0.1) == 10
        and rules.attention_interval(1) == 1
    )
    assert not rules.attention_due(rate=0.25, regular_done=0, attention_served=0)
    assert not rules.attention_due(rate=0.25, regular_done=3, attention_served=0)
    assert rules.attention_due(rate=0.25, regular_done=4, attention_served=0)
    assert not rules.attention_due(rate=0.25, regular_done=5, attention_served=1)
    assert rules.attention_due(rate=0.25, regular_done=8, attention_served=1)
    assert not rules.attention_due(rate=0.0, regular_done=50, attention_served=0)


# --- qualification ------------------------------------------------------------------------------


def test_qualification_score():
    assert rules.qualification_score(n_correct=0, n_answered=0) == 1.0  # nothing to fail
    assert rules.qualification_score(n_correct=2, n_answered=3) == 2 / 3
    assert rules.qualification_score(n_correct=0, n_answered=4) == 0.0


@pytest.mark.parametrize(
    "score,threshold,state",
    [
        (None, 0.7, rules.QUALIFICATION_NOT_TAKEN),
        (0.7, 0.7, rules.QUALIFICATION_PASSED),  # at the threshold
        (7 / 10, 0.7, rules.QUALIFICATION_PASSED),
        (2 / 3, 0.6666666667, rules.QUALIFICATION_PASSED),  # within the float tolerance
        (2 / 3, 0.667, rules.QUALIFICATION_FAILED),
        (0.69, 0.7, rules.QUALIFICATION_FAILED),
        (0.0, 0.0, rules.QUALIFICATION_PASSED),
        (1.0, 1.0, rules.QUALIFICATION_PASSED),
    ],
)
def test_qualification_state(score, threshold, state):
    assert rules.qualification_state(score=score, threshold=threshold) == state


def test_screened_out_reason():
    reason = rules.screened_out_reason
    assert reason(qualification_score=0.2, attention_failures=0) == rules.SCREENED_BY_QUALIFICATION
    assert reason(qualification_score=1.0, attention_failures=3) == rules.SCREENED_BY_ATTENTION
    assert reason(qualification_score=None, attention_failures=3) == rules.SCREENED_BY_ATTENTION
    assert reason(qualification_score=None, attention_failures=0) == rules.SCREENED_BY_ATTENTION


# --- active time --------------------------------------------------------------------------------


def test_wall_ms():
    assert rules.wall_ms(served_at=T0, now=T0 + timedelta(seconds=1.2345)) == 1234


@pytest.mark.parametrize(
    "active,delta,wall,want",
    [
        (0, 5_000, 60_000, 5_000),
        (0, 30_000, 60_000, 30_000),  # exactly two heartbeats of 15 s
        (0, 30_001, 60_000, 30_000),  # capped at two heartbeats
        (1_000, -500, 60_000, 1_000),  # a negative report counts as nothing
        (1_000, 0, 60_000, 1_000),
        (50_000, 20_000, 60_000, 60_000),  # never above the wall-clock time
        (0, 5_000, -10, 0),  # nor below 0
    ],
)
def test_active_ms_after_beat(active, delta, wall, want):
    got = rules.active_ms_after_beat(
        active_ms=active, delta_ms=delta, wall_ms=wall, heartbeat_seconds=15
    )
    assert got == want


def test_rules_module_imports_no_django():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(rules))
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert "django" not in imported and "annotation" not in imported
