"""python manage.py score SCORER FILE [--breakdown] [--option NAME=VALUE …]

Scores a JSONL file with one of the scorer packs (``procbench``, ``longproc-countdown`` …) and
prints one JSON object per record, ``{"id": …, <metric>: value, …}``, then
``{"summary": {<metric>: mean, …, "n": N}}``. The whole file is checked first: any bad line
(malformed JSON, a missing or mistyped field, a duplicate id) stops the command with
``FILE:LINE: field 'NAME': what is wrong`` for each and a non-zero exit, and nothing is printed
on stdout. ``FILE`` may be ``-`` for standard input. ``--list`` lists the packs.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from benchmarks.formats.common import DEFAULT_MAX_ERRORS, ErrorCollector, iter_json_lines
from benchmarks.formats.common import RecordError as LineError
from benchmarks.packs.registry import RecordError, get_pack, json_type, pack_names


def _records(stream):
    """``(line, decoded value or LineError)`` for each non-blank line (the project's JSONL
    line reader, which also names a line nested too deeply to decode)."""
    return iter_json_lines(stream)


def parse_options(pairs: list[str], known: dict[str, Any]) -> dict[str, Any]:
    """``NAME=VALUE`` pairs (VALUE read as JSON when it parses, else as a string)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise CommandError(f"--option {pair!r}: expected NAME=VALUE")
        if name not in known:
            names = ", ".join(sorted(known)) or "none"
            raise CommandError(f"--option {name}: unknown option; this scorer has: {names}")
        try:
            options[name] = json.loads(raw)
        except json.JSONDecodeError:
            options[name] = raw
    return options


def check_id(value: Any, line: int, seen: dict[Any, int]) -> LineError | None:
    if not isinstance(value, dict):
        return LineError(line, None, f"expected a JSON object, got {json_type(value)}")
    if "id" not in value:
        return LineError(line, "id", "is required (a string or an integer)")
    item_id = value["id"]
    if isinstance(item_id, bool) or not isinstance(item_id, str | int):
        return LineError(line, "id", f"must be a string or an integer, got {json_type(item_id)}")
    if item_id in seen:
        return LineError(line, "id", f"{item_id!r} already appears on line {seen[item_id]}")
    seen[item_id] = line
    return None


class Command(BaseCommand):
    help = "Score a JSONL file with a scorer pack; one JSON line per record, then a summary."

    def add_arguments(self, parser):
        parser.add_argument("scorer", nargs="?", help="pack name, e.g. procbench")
        parser.add_argument("file", nargs="?", help="JSONL file, or - for standard input")
        parser.add_argument("--breakdown", action="store_true", help="add each record's breakdown")
        parser.add_argument(
            "--option",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a pack option ([FLAG] choice), VALUE as JSON or text; repeatable",
        )
        parser.add_argument("--max-errors", type=int, default=DEFAULT_MAX_ERRORS)
        parser.add_argument("--list", action="store_true", help="list the scorer packs")

    def handle(self, *args, **opts):
        if opts["list"]:
            for name in pack_names():
                pack = get_pack(name)
                defaults = json.dumps(dict(pack.options), sort_keys=True)
                self.stdout.write(
                    f"{name}\t{', '.join(pack.metrics)}\t{pack.description}\t{defaults}"
                )
            return
        if not opts["scorer"] or not opts["file"]:
            raise CommandError("usage: manage.py score SCORER FILE (or --list)")
        try:
            pack = get_pack(opts["scorer"])
        except KeyError as exc:
            raise CommandError(str(exc.args[0])) from None
        options = parse_options(opts["option"], dict(pack.options))
        path = opts["file"]
        try:
            stream = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
        except OSError as exc:
            raise CommandError(f"{path}: cannot read ({exc.strerror})") from None
        with stream:
            rows, errors = self._score_all(pack, stream, options, opts)
        if errors:
            shown = [
                f"{path}:{e.line}: " + (f"field '{e.field}': " if e.field else "") + e.message
                for e in errors.errors
            ]
            if errors.total > len(errors.errors):
                shown.append(f"... and {errors.total - len(errors.errors)} more error(s)")
            raise CommandError(f"{errors.total} bad line(s), nothing scored:\n" + "\n".join(shown))
        for row in rows:
            self.stdout.write(json.dumps(row, ensure_ascii=False))
        metrics = [{k: v for k, v in r.items() if k not in ("id", "breakdown")} for r in rows]
        self.stdout.write(json.dumps({"summary": pack.summary(metrics)}, ensure_ascii=False))

    def _score_all(self, pack, stream, options, opts):
        errors = ErrorCollector(cap=max(1, opts["max_errors"]))
        rows: list[dict[str, Any]] = []
        seen: dict[Any, int] = {}
        for line, value in _records(stream):
            if isinstance(value, LineError):
                errors.add(value)
                continue
            problem = check_id(value, line, seen)
            if problem:
                errors.add(problem)
                continue
            try:
                scored = pack.score_with(value, options)
            except RecordError as exc:
                errors.add(LineError(line, exc.field, exc.message))
                continue
            except RecursionError:
                errors.add(LineError(line, None, "cannot be scored: nested too deeply"))
                continue
            except (ValueError, TypeError, KeyError, ArithmeticError) as exc:
                if isinstance(exc, ValueError) and any(name in str(exc) for name in options):
                    raise CommandError(f"--option: {exc}") from None
                errors.add(LineError(line, None, f"cannot be scored: {exc}"))
                continue
            row = {"id": value["id"], **scored.metrics}
            if opts["breakdown"]:
                row["breakdown"] = scored.breakdown
            rows.append(row)
        return rows, errors
