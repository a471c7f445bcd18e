"""Silent gold on the quality page, by hand: known answers shown like any other item are scored
with the other known items and on their own, and never change the participant's stage."""

from __future__ import annotations

from datetime import datetime, timedelta

from annotation.quality import Label, participant_quality

T0 = datetime(2026, 1, 1, 12, 0)


def lab(n, item, has, expected=None, silent=False):
    return Label("A", item, has, expected, 60_000, T0 + timedelta(minutes=n), silent=silent)


def test_silent_gold_figures_by_hand():
    labels = [
        lab(0, 1, True),  # regular
        lab(1, 2, False),  # regular
        lab(2, 90, True, expected=True, silent=True),  # gold right
        lab(3, 91, False, expected=True, silent=True),  # gold wrong
        lab(4, 92, False, expected=False, silent=True),  # gold right
        lab(5, 80, True, expected=True),  # attention right (not silent)
    ]
    (q,) = participant_quality(labels, participants=["A"], attention={"A": (1, 1)})
    # known items: 3 of 4 right; silent gold alone: 2 of 3
    assert (q.gold_agree, q.gold_total, q.gold_agreement) == (3, 4, 0.75)
    assert (q.silent_gold_agree, q.silent_gold_total) == (2, 3)
    assert round(q.silent_gold_agreement, 3) == 0.667
    assert q.items_done == 2 and q.seconds_per_item == 60.0
    (none,) = participant_quality(labels[:2], participants=["A"], attention={})
    assert none.silent_gold_agreement is None and none.silent_gold_total == 0
