"""The content hash (what a judge sees of an item; equal hashes reuse a judgment) is written with
orjson: it must be the sha256 of the very bytes ``json.dumps`` wrote before, or
every judgment stored earlier would stop being found and be asked again."""

from __future__ import annotations

import hashlib
import json

from judging.prompting import clean_steps, content_hash


def _as_before(goal, reference_steps, steps) -> str:
    payload = json.dumps(
        {
            "goal": goal.strip(),
            "reference_steps": clean_steps(reference_steps),
            "steps": clean_steps(steps),
        },
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


CASES = [
    ("Make tea", ["Boil water", "Steep"], ["Boil", "Pour"]),
    ('  "Quoted" goal \\ with a backslash  ', ["a\tb", "c\nd", "e\r\x01\x1f"], ["\b\f"]),
    ("Évaluer — 漢字 🫖 \u2028\u2029 </script>", ["ß", "  ", "", 3, 4.5, None], []),
    ("", [], ["only steps"]),
    ("x" * 5000, ["step " * 200] * 30, ["y"] * 100),
]


def test_the_hash_is_the_one_json_dumps_gave():
    for goal, reference, steps in CASES:
        assert content_hash(goal=goal, reference_steps=reference, steps=steps) == _as_before(
            goal, reference, steps
        )


def test_a_hash_stored_before_is_found_again():
    # sha256 of '{"goal":"Make tea","reference_steps":["Boil water"],"steps":["Boil"]}', as
    # json.dumps wrote it (the hash a judgment stored before this change carries)
    assert content_hash(goal="Make tea", reference_steps=["Boil water"], steps=["Boil"]) == (
        "1f791b589c0b4187ac6f88f149e3c715dd687ecb0e4be488d2d5c08fb744e76d"
    )
