"""LongProc's two validators (seed 001 §3.3, notes §1.2): Countdown (the ``<Solution>`` block:
each equation right, every given number used exactly once, intermediate results reused, the
last result = target) and Travel Planning (the ``<Plan>`` block against every constraint:
city durations, fixed-day windows, directed direct flights, total days). Both take the answer
block already extracted (``longproc.extract_tagged``) and return ``(ok, breakdown)``; the
breakdown lists every rule that failed. Pure: no Django imports.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from typing import Any

# --- Countdown ----------------------------------------------------------------------------------

_OPS = {"+", "-", "*", "/"}
_OP_ALIASES = str.maketrans({"×": "*", "∗": "*", "·": "*", "÷": "/", "−": "-", "–": "-"})
_NUM = r"(\d+(?:\.\d+)?)"
_EQUATION = re.compile(rf"^{_NUM}\s*([-+*/])\s*{_NUM}\s*=\s*{_NUM}$")


def _clean_equation(line: str) -> str:
    """Drop what models wrap around an equation: ``$…$``, ``\\(…\\)``, bullets, ``\\times``."""
    text = line.translate(_OP_ALIASES).replace("\\times", "*").replace("\\div", "/")
    text = text.replace("\\cdot", "*").replace("\\(", "").replace("\\)", "")
    text = text.replace("$", "").replace("\\", "").strip()
    text = re.sub(r"^(?:[-*•]\s+|\d+[.)]\s+)", "", text).strip()
    return text.rstrip(".").strip()


def validate_countdown(
    solution: str | None,
    numbers: Sequence[int],
    target: int,
    *,
    max_intermediate: int | None = None,
) -> tuple[bool, dict[str, Any]]:
    """Check a Countdown ``<Solution>`` block, one equation a line (``48 - 44 = 4``).

    Each equation must be arithmetically right (exact division), its two operands must be
    available (a given number or an earlier result, each usable once), and after the last
    equation exactly the target must remain (so every given number is used exactly once and
    there are len(numbers) − 1 equations). Any other non-blank line in the block fails it.
    ``max_intermediate`` (None by default: the validator of Gandhi et al. as described in the
    notes) also enforces the prompt's search rule that results stay ≤ that bound (2000)."""
    breakdown: dict[str, Any] = {"extracted": solution is not None, "equations": [], "errors": []}
    if solution is None:
        breakdown["errors"].append("no <Solution> block")
        return False, breakdown
    pool = Counter(Fraction(n) for n in numbers)
    lines = [ln for ln in (_clean_equation(raw) for raw in solution.splitlines()) if ln]
    if not lines:
        breakdown["errors"].append("the <Solution> block is empty")
        return False, breakdown
    last = None
    for k, line in enumerate(lines, start=1):
        entry: dict[str, Any] = {"equation": line, "ok": False, "error": None}
        breakdown["equations"].append(entry)
        match = _EQUATION.match(line)
        if not match:
            entry["error"] = "not an equation 'a op b = c'"
        else:
            a, op, b, c = Fraction(match[1]), match[2], Fraction(match[3]), Fraction(match[4])
            entry["error"] = _equation_error(a, op, b, c, pool)
            if entry["error"] is None:
                pool[a] -= 1
                pool[b] -= 1
                pool[c] += 1
                last = c
                if max_intermediate is not None and c > max_intermediate:
                    entry["error"] = f"the result exceeds {max_intermediate}"
        if entry["error"]:
            breakdown["errors"].append(f"equation {k}: {entry['error']}")
        else:
            entry["ok"] = True
    remaining = sorted(n for n, count in (+pool).items() for _ in range(count))
    breakdown["remaining"] = [int(n) if n.denominator == 1 else float(n) for n in remaining]
    if not breakdown["errors"]:
        if last != Fraction(target):
            breakdown["errors"].append(f"the last result is {_show(last)}, not the target {target}")
        elif remaining != [Fraction(target)]:
            breakdown["errors"].append("not every given number is used exactly once")
    return not breakdown["errors"], breakdown


def _show(value: Fraction | None) -> str:
    if value is None:
        return "missing"
    return str(value.numerator) if value.denominator == 1 else str(float(value))


def _equation_error(a, op, b, c, pool: Counter) -> str | None:
    need = Counter([a, b])
    for value, count in need.items():
        if pool[value] < count:
            return f"{_show(value)} is not available (given numbers and earlier results, once each)"
    if op == "/" and b == 0:
        return "division by zero"
    result = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else None}[op]
    if result != c:
        return f"{_show(a)} {op} {_show(b)} is {_show(result)}, not {_show(c)}"
    if c.denominator != 1:
        return "the result is not an integer"
    return None


# --- Travel Planning ----------------------------------------------------------------------------


@dataclass(frozen=True)
class City:
    name: str
    days: int
    fixed: tuple[int, int] | None = None  # (first day, last day) that must fall in the stay


_STAY = re.compile(
    r"day\s*(\d+)\s*(?:-|–|to)\s*(\d+)\s*:?.*?\bvisit\s+(.+?)\s+for\s+(\d+)\s+days?\b", re.I
)
_STAY_ONE = re.compile(r"day\s*(\d+)\s*:?.*?\bvisit\s+(.+?)\s+for\s+(\d+)\s+days?\b", re.I)
_FLIGHT = re.compile(r"day\s*(\d+)\s*:?\s*fly\s+from\s+(.+?)\s+to\s+(.+?)\s*\.?\s*$", re.I)


def _key(name: str) -> str:
    return " ".join(name.strip().strip(".,;:").split()).casefold()


def parse_plan(plan: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The plan's lines as ``{"kind": "stay", "start", "end", "city", "days"}`` or
    ``{"kind": "flight", "day", "from", "to"}`` in order (markdown ``**``, ``\\*`` and bullets
    ignored), plus the non-blank lines that are neither."""
    items: list[dict[str, Any]] = []
    ignored: list[str] = []
    for raw in plan.splitlines():
        line = re.sub(r"^[\s\-•]+", "", raw.replace("\\", "").replace("*", "")).strip()
        if not line:
            continue
        if m := _FLIGHT.search(line):
            items.append({"kind": "flight", "day": int(m[1]), "from": m[2], "to": m[3]})
        elif m := _STAY.search(line):
            start, end, city, days = int(m[1]), int(m[2]), m[3], int(m[4])
            items.append({"kind": "stay", "start": start, "end": end, "city": city, "days": days})
        elif m := _STAY_ONE.search(line):
            day, city, days = int(m[1]), m[2], int(m[3])
            items.append({"kind": "stay", "start": day, "end": day, "city": city, "days": days})
        else:
            ignored.append(line)
    return items, ignored


def validate_travel(
    plan: str | None,
    *,
    total_days: int,
    cities: Sequence[City],
    flights: Iterable[tuple[str, str]],
) -> tuple[bool, dict[str, Any]]:
    """Check a ``<Plan>`` block against every constraint (Natural Plan rules, seed 001 §B):
    stays are consecutive from day 1 to ``total_days`` with the flight day counted for both
    cities (arrive day x, stay y days → leave day x + y − 1); each city is visited exactly once
    for its number of days (the line's "for n days" must match its day range); a fixed window
    must lie inside the city's stay; every stated flight is a listed *directed* direct flight
    on the day of the change, and the flights between two stays lead from the one to the other
    (with no flight line, the two cities themselves must have a direct flight)."""
    breakdown: dict[str, Any] = {"extracted": plan is not None, "stays": [], "errors": []}
    errors: list[str] = breakdown["errors"]
    if plan is None:
        errors.append("no <Plan> block")
        return False, breakdown
    by_key = {_key(c.name): c for c in cities}
    direct = {(_key(a), _key(b)) for a, b in flights}
    items, ignored = parse_plan(plan)
    breakdown["ignored_lines"] = ignored
    stays = [it for it in items if it["kind"] == "stay"]
    if not stays:
        errors.append("no 'Day x-y: … visit CITY for n days' line in the plan")
        return False, breakdown
    seen: Counter = Counter()
    for it in stays:
        city = by_key.get(_key(it["city"]))
        span = it["end"] - it["start"] + 1
        breakdown["stays"].append([it["city"].strip(), it["start"], it["end"]])
        label = f"{it['city'].strip()} (day {it['start']}-{it['end']})"
        if span != it["days"]:
            errors.append(f"{label}: says {it['days']} days but spans {span}")
        if city is None:
            errors.append(f"{label}: not a city of the problem")
            continue
        seen[city.name] += 1
        if span != city.days:
            errors.append(f"{label}: {span} days, {city.days} required")
        if city.fixed and not (it["start"] <= city.fixed[0] and city.fixed[1] <= it["end"]):
            errors.append(f"{label}: misses the fixed days {city.fixed[0]}-{city.fixed[1]}")
    for city in cities:
        if seen[city.name] == 0:
            errors.append(f"{city.name}: not visited")
        elif seen[city.name] > 1:
            errors.append(f"{city.name}: visited {seen[city.name]} times")
    if stays[0]["start"] != 1:
        errors.append(f"the plan starts on day {stays[0]['start']}, not day 1")
    if stays[-1]["end"] != total_days:
        errors.append(f"the plan ends on day {stays[-1]['end']}, not day {total_days}")
    errors.extend(_flight_errors(items, stays, direct))
    return not errors, breakdown


def _flight_errors(items, stays, direct) -> list[str]:
    errors: list[str] = []
    for it in items:
        if it["kind"] == "flight" and (_key(it["from"]), _key(it["to"])) not in direct:
            errors.append(f"day {it['day']}: no direct flight from {it['from']} to {it['to']}")
    # The flight lines between consecutive stays, in plan order.
    legs: list[list[dict[str, Any]]] = [[] for _ in stays]
    index = -1
    for it in items:
        if it["kind"] == "stay":
            index += 1
        elif index < 0:
            errors.append(f"day {it['day']}: a flight before the first stay")
        else:
            legs[index].append(it)
    if legs[-1]:
        errors.append("a flight after the last stay")
    for i in range(len(stays) - 1):
        here, there = stays[i], stays[i + 1]
        if there["start"] != here["end"]:
            errors.append(
                f"{there['city'].strip()} starts on day {there['start']}, "
                f"but {here['city'].strip()} ends on day {here['end']}"
            )
        hops = [(_key(f["from"]), _key(f["to"])) for f in legs[i]] or [
            (_key(here["city"]), _key(there["city"]))
        ]
        chain_ok = hops[0][0] == _key(here["city"]) and hops[-1][1] == _key(there["city"])
        chain_ok = chain_ok and all(a[1] == b[0] for a, b in pairwise(hops))
        if not chain_ok:
            errors.append(f"the flights do not lead from {here['city']} to {there['city']}")
        elif not legs[i] and hops[0] not in direct:
            errors.append(f"no direct flight from {here['city']} to {there['city']}")
        for f in legs[i]:
            if f["day"] != here["end"]:
                errors.append(f"day {f['day']}: the flight is not on the change day {here['end']}")
    return errors


def cities_from(value: Any) -> list[City]:
    """``[{"name", "days", "fixed": [a, b]?}, …]`` → cities; raises ValueError naming the entry."""
    if not isinstance(value, list) or not value:
        raise ValueError("must be a non-empty array of {name, days, fixed?}")
    out = []
    for i, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            raise ValueError(f"entry {i} must be an object {{name, days, fixed?}}")
        name, days, fixed = entry.get("name"), entry.get("days"), entry.get("fixed")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"entry {i}: 'name' must be a non-empty string")
        if isinstance(days, bool) or not isinstance(days, int) or days < 1:
            raise ValueError(f"entry {i}: 'days' must be a positive integer")
        if fixed is not None and not (
            isinstance(fixed, list)
            and len(fixed) == 2
            and all(isinstance(d, int) and not isinstance(d, bool) for d in fixed)
            and fixed[0] <= fixed[1]
        ):
            raise ValueError(f"entry {i}: 'fixed' must be [first_day, last_day]")
        out.append(City(name.strip(), days, tuple(fixed) if fixed else None))
    return out


_FIXED = re.compile(r"\bdays?\s*(\d+)\s*(?:and|to|-|–|through)\s*(?:day\s*)?(\d+)", re.I)
_DURATIONS = (
    re.compile(r"(\d+)\s+days?\s+in\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"),
    re.compile(
        r"(?:visit|stay in|stay at)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)\s+for\s+(\d+)\s+days?"
    ),
)


def parse_travel_problem(text: str) -> tuple[int, list[City], list[tuple[str, str]]]:
    """The constraints of a Natural Plan / LongProc trip problem written in English (F.6, G.6):
    ``… for T days in total``; per city "spend n days in C", "visit C for n days" or "stay in C
    for n days"; a sentence naming a city with "day a and day b" / "day a to day b" is its fixed
    window; after "direct flights:", "from A to B" is a directed flight and "A and B" goes both
    ways. Raises ValueError when a part cannot be found."""
    flat = " ".join(text.split())
    total = re.search(r"for\s+(\d+)\s+days\s+in\s+total", flat, re.I)
    if not total:
        raise ValueError("no '… for N days in total' in the problem")
    head, sep, tail = flat.partition("direct flights:")
    if not sep:
        raise ValueError("no 'direct flights:' list in the problem")
    sentences = re.split(r"(?<=[.!?])\s+", head)
    days: dict[str, int] = {}
    for sentence in sentences:
        for pattern in _DURATIONS:
            for m in pattern.finditer(sentence):
                n, city = (m[1], m[2]) if m[1].isdigit() else (m[2], m[1])
                days.setdefault(city.strip(), int(n))
    if not days:
        raise ValueError("no city durations ('spend n days in CITY') in the problem")
    fixed: dict[str, tuple[int, int]] = {}
    for sentence in sentences:
        window = _FIXED.search(sentence)
        named = [c for c in days if re.search(rf"\b{re.escape(c)}\b", sentence)]
        if window and len(named) == 1:
            fixed[named[0]] = (int(window[1]), int(window[2]))
    flights: list[tuple[str, str]] = []
    body = re.split(r"\bFind a trip plan\b", tail, maxsplit=1)[0]
    for chunk in re.split(r"[,\n]", body):
        chunk = chunk.strip().rstrip(".").strip()
        if m := re.fullmatch(r"(?:and\s+)?from\s+(.+?)\s+to\s+(.+)", chunk, re.I):
            flights.append((m[1].strip(), m[2].strip()))
        elif m := re.fullmatch(r"(.+?)\s+and\s+(.+)", chunk):
            flights += [(m[1].strip(), m[2].strip()), (m[2].strip(), m[1].strip())]
    if not flights:
        raise ValueError("no flights after 'direct flights:'")
    cities = [City(name, n, fixed.get(name)) for name, n in days.items()]
    return int(total[1]), cities, flights
