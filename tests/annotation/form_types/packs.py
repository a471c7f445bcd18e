"""A tiny real scorer pack for solve-mode tests (exact match of the answer with ``target``),
registered once in the scorer-pack registry under ``test-exact``."""

from benchmarks.packs.registry import PackScorer, Scored, register


def _exact(record):
    if "target" not in record:
        raise ValueError("target: missing")
    return Scored({"correct": int(str(record["prediction"]).strip() == str(record["target"]))})


EXACT = register(PackScorer(name="test-exact", metrics=("correct",), score=_exact))
