"""LongProc Travel Planning (notes §1.2): the F.6 (valid) and G.6 (hallucinated flight) examples
of seed 001 App. F/G, each rule of the validator, and the problem-text parser."""

import pytest

from benchmarks.packs.longproc_validators import parse_travel_problem
from benchmarks.packs.registry import RecordError, get_pack

# --- Travel Planning ---------------------------------------------------------------------------

F6 = {
    "id": "f6",
    "total_days": 20,
    "cities": [
        {"name": "Hamburg", "days": 7},
        {"name": "Munich", "days": 6},
        {"name": "Manchester", "days": 2, "fixed": [19, 20]},
        {"name": "Lyon", "days": 2, "fixed": [13, 14]},
        {"name": "Split", "days": 7},
    ],
    "flights": [
        ["Split", "Munich"],
        ["Munich", "Manchester"],
        ["Hamburg", "Manchester"],
        ["Hamburg", "Munich"],
        ["Split", "Lyon"],
        ["Lyon", "Munich"],
        ["Hamburg", "Split"],
        ["Manchester", "Split"],
    ],
}
F6_PLAN = """Output the plan in the required format:
<Plan>
**Day 1-7:** Arriving in Hamburg and visit Hamburg for 7 days.
**Day 7:** Fly from Hamburg to Split.
**Day 7-13:** Visit Split for 7 days.
**Day 13:** Fly from Split to Lyon.
**Day 13-14:** Visit Lyon for 2 days.
**Day 14:** Fly from Lyon to Munich.
**Day 14-19:** Visit Munich for 6 days.
**Day 19:** Fly from Munich to Manchester.
**Day 19-20:** Visit Manchester for 2 days.
</Plan>"""

G6 = {
    "id": "g6",
    "total_days": 14,
    "cities": [
        {"name": "Santorini", "days": 2, "fixed": [5, 6]},
        {"name": "Porto", "days": 5},
        {"name": "Reykjavik", "days": 3},
        {"name": "Stockholm", "days": 4},
        {"name": "Barcelona", "days": 2},
        {"name": "Dubrovnik", "days": 2},
        {"name": "Stuttgart", "days": 2},
    ],
    "flights": [
        ["Stockholm", "Stuttgart"],
        ["Dubrovnik", "Barcelona"],
        ["Barcelona", "Porto"],
        ["Stuttgart", "Porto"],
        ["Santorini", "Barcelona"],
        ["Stockholm", "Barcelona"],
        ["Reykjavik", "Stuttgart"],
        ["Dubrovnik", "Stockholm"],
        ["Stockholm", "Reykjavik"],
        ["Stockholm", "Santorini"],
        ["Barcelona", "Stuttgart"],
        ["Barcelona", "Reykjavik"],
    ],
}
G6_TAIL = r"""- \*Day 5-6:\*\* Visit Santorini for 2 days.
- \*Day 6:\*\* Fly from Santorini to Barcelona.
- \*Day 6-7:\*\* Visit Barcelona for 2 days.
- \*Day 7:\*\* Fly from Barcelona to Reykjavik.
- \*Day 7-9:\*\* Visit Reykjavik for 3 days.
- \*Day 9:\*\* Fly from Reykjavik to Stuttgart.
- \*Day 9-10:\*\* Visit Stuttgart for 2 days.
- \*Day 10:\*\* Fly from Stuttgart to Porto.
- \*Day 10-14:\*\* Visit Porto for 5 days."""
G6_GOLD = (
    r"""Here is the trip plan for visiting the 7 European cities for 14 days:
- \*Day 1-2:\*\* Arriving in Dubrovnik and visit Dubrovnik for 2 days.
- \*Day 2:\*\* Fly from Dubrovnik to Stockholm.
- \*Day 2-5:\*\* Visit Stockholm for 4 days.
- \*Day 5:\*\* Fly from Stockholm to Santorini.
"""
    + G6_TAIL
)
G6_MODEL = (
    r"""- \*\*Day 1-2:\*\* Arriving in Dubrovnik and visit Dubrovnik for 2 days.
- \*Day 2:\*\* Fly from Dubrovnik to Stockholm.
- \*Day 2-5:\*\* Visit Stockholm for 4 days.
- \*\*Day 5:\*\* Fly from Stockholm to Barcelona.**
- \*\*Day 5:\*\* Fly from Barcelona to Santorini.**
"""
    + G6_TAIL
)


def travel(record, plan_text, **options):
    return get_pack("longproc-travel").score_with({**record, "prediction": plan_text}, options)


def test_travel_f6_gold_plan_is_valid():
    scored = travel(F6, F6_PLAN)
    assert scored.metrics == {"correct": 1}, scored.breakdown["errors"]
    assert scored.breakdown["stays"] == [
        ["Hamburg", 1, 7],
        ["Split", 7, 13],
        ["Lyon", 13, 14],
        ["Munich", 14, 19],
        ["Manchester", 19, 20],
    ]


def test_travel_g6_hallucinated_flight_fails_and_its_gold_passes():
    assert travel(G6, f"<Plan>\n{G6_GOLD}\n</Plan>").metrics == {"correct": 1}
    scored = travel(G6, f"<Plan>\n{G6_MODEL}\n</Plan>")
    assert scored.metrics == {"correct": 0}
    assert scored.breakdown["errors"] == ["day 5: no direct flight from Barcelona to Santorini"]


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (
            ("Day 14:** Fly from Lyon to Munich.", "Day 14:** Fly from Munich to Lyon."),
            "day 14: no direct flight from Munich to Lyon",
        ),
        (
            ("Day 7-13:** Visit Split for 7 days.", "Day 7-12:** Visit Split for 6 days."),
            "Split (day 7-12): 6 days, 7 required",
        ),
        (
            (
                "Day 19-20:** Visit Manchester for 2 days.",
                "Day 19-21:** Visit Manchester for 2 days.",
            ),
            "Manchester (day 19-21): says 2 days but spans 3",
        ),
        (
            ("**Day 13:** Fly from Split to Lyon.\n**Day 13-14:** Visit Lyon for 2 days.\n", ""),
            "Lyon: not visited",
        ),
        (
            ("**Day 14:** Fly from Lyon to Munich.\n", "**Day 14:** Fly from Lyon to Split.\n"),
            "the flights do not lead from Lyon to Munich",
        ),
    ],
)
def test_travel_rules(edit, error):
    scored = travel(F6, F6_PLAN.replace(*edit))
    assert scored.metrics == {"correct": 0}
    assert any(e.startswith(error) for e in scored.breakdown["errors"]), scored.breakdown["errors"]


def test_travel_without_flight_lines_needs_a_direct_flight_between_the_stays():
    no_line = F6_PLAN.replace("**Day 19:** Fly from Munich to Manchester.\n", "")
    assert travel(F6, no_line).metrics == {"correct": 1}
    unlisted = dict(F6, flights=[f for f in F6["flights"] if f != ["Munich", "Manchester"]])
    assert travel(unlisted, no_line).breakdown["errors"] == [
        "no direct flight from Munich to Manchester"
    ]


def test_travel_fixed_window_total_days_and_missing_plan():
    swapped = dict(
        F6, cities=[dict(c, fixed=[15, 16]) if c["name"] == "Lyon" else c for c in F6["cities"]]
    )
    errors = travel(swapped, F6_PLAN).breakdown["errors"]
    assert errors == ["Lyon (day 13-14): misses the fixed days 15-16"]
    longer = travel(dict(F6, total_days=21), F6_PLAN).breakdown["errors"]
    assert longer == ["the plan ends on day 20, not day 21"]
    none = travel(F6, "I could not find a plan.")
    assert none.metrics == {"correct": 0} and none.breakdown["errors"] == ["no <Plan> block"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"cities": []}, "cities"),
        ({"cities": [{"name": "X", "days": 0}]}, "cities"),
        ({"flights": [["A"]]}, "flights"),
        ({"total_days": "20"}, "total_days"),
        ({"prediction": 3}, "prediction"),
        ({"finish_reason": 1}, "finish_reason"),
    ],
)
def test_travel_bad_records_name_the_field(change, field):
    with pytest.raises(RecordError) as exc:
        get_pack("longproc-travel").score({**F6, "prediction": F6_PLAN, **change})
    assert exc.value.field == field


F6_PROBLEM = """You plan to visit 5 European cities for 20 days in total. You only take direct flights to
commute between cities. You want to spend 7 days in Hamburg. You would like to visit Munich for 6
days. You want to spend 2 days in Manchester. You plan to visit relatives in Manchester between day
19 and day 20. You plan to stay in Lyon for 2 days. From day 13 to day 14, there is a annual show
you want to attend in Lyon. You would like to visit Split for 7 days.

Here are the cities that have direct flights:

from Split to Munich, from Munich to Manchester, from Hamburg to Manchester, from Hamburg to
Munich, from Split to Lyon, from Lyon to Munich, from Hamburg to Split, from Manchester to

Split.

Find a trip plan of visiting the cities for 20 days by taking direct flights to commute between them."""

G6_PROBLEM = """You plan to visit 7 European cities for 14 days in total. You only take direct flights to
commute between cities. You want to spend 2 days in Santorini. During day 5 and day 6, you have to
attend a conference in Santorini. You would like to visit Porto for 5 days. You plan to stay in
Reykjavik for 3 days. You would like to visit Stockholm for 4 days. You want to spend 2 days in
Barcelona. You want to spend 2 days in Dubrovnik. You plan to stay in Stuttgart for 2 days.

Here are the cities that have direct flights:

from Stockholm to Stuttgart, from Dubrovnik to Barcelona, from Barcelona to Porto, from Stuttgart
to Porto, from Santorini to Barcelona, from Stockholm to Barcelona, from Reykjavik to Stuttgart,
from Dubrovnik to Stockholm, from Stockholm to Reykjavik, from Stockholm to Santorini, from
Barcelona to Stuttgart, from Barcelona to Reykjavik.

Find a trip plan of visiting the cities for 14 days by taking direct flights to commute between them."""


def _structured(total, cities, flights):
    as_dicts = [
        {"name": c.name, "days": c.days, **({"fixed": list(c.fixed)} if c.fixed else {})}
        for c in cities
    ]
    return {"total_days": total, "cities": as_dicts, "flights": [list(f) for f in flights]}


@pytest.mark.parametrize(
    ("problem", "record"), [(F6_PROBLEM, F6), (G6_PROBLEM, G6)], ids=["F.6", "G.6"]
)
def test_travel_problem_text_parses_to_the_constraints(problem, record):
    parsed = _structured(*parse_travel_problem(problem))
    assert parsed["total_days"] == record["total_days"]
    assert sorted(parsed["cities"], key=lambda c: c["name"]) == sorted(
        record["cities"], key=lambda c: c["name"]
    )
    assert parsed["flights"] == record["flights"]


def test_travel_scored_from_the_problem_text():
    pack = get_pack("longproc-travel")
    assert pack.score({"id": 1, "problem": F6_PROBLEM, "prediction": F6_PLAN}).metrics == {
        "correct": 1
    }
    g6 = pack.score({"id": 2, "problem": G6_PROBLEM, "prediction": f"<Plan>{G6_MODEL}</Plan>"})
    assert g6.breakdown["errors"] == ["day 5: no direct flight from Barcelona to Santorini"]
    both_ways = "A trip for 4 days in total. Spend 2 days in Oslo. Spend 3 days in Rome. direct flights: Oslo and Rome."
    total, cities, flights = parse_travel_problem(both_ways)
    assert (total, [c.name for c in cities], flights) == (
        4,
        ["Oslo", "Rome"],
        [("Oslo", "Rome"), ("Rome", "Oslo")],
    )
    with pytest.raises(RecordError) as exc:
        pack.score({"id": 3, "problem": "Plan a trip.", "prediction": ""})
    assert exc.value.field == "problem" and "days in total" in exc.value.message
