"""A SIMULATED benchmark for the demo, imported through the app's own import services: numbered
procedures whose goals and steps say they are simulated, one generation per procedure by each
simulated generator, and a simulated judge's verdicts. Used by the demo's replaceability and
budget data (:mod:`demo.replace`, :mod:`demo.budget`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence

from benchmarks.services.imports import generations_import, procedures_import
from judging.services.imports import judgments_import


def _lines(records: Iterable[dict]) -> list[str]:
    return [json.dumps(r) for r in records]


def benchmark_import(
    *,
    dataset: str,
    sids: Sequence[str],
    topic_of: Callable[[int], str],
    generators: Iterable[str],
) -> None:
    """Procedure ``i`` (source example id ``sids[i]``, topic ``topic_of(i)``) and its
    generation by each of ``generators``, three simulated steps each."""
    procedures_import(
        dataset=dataset,
        lines=_lines(
            {
                "source_example_id": sid,
                "topic": topic_of(i),
                "goal": f"Simulated procedure {i} (demo data: no real task).",
                "resources": [],
                "steps": [f"Simulated reference step {k} of procedure {i}." for k in (1, 2, 3)],
            }
            for i, sid in enumerate(sids)
        ),
    )
    for generator in generators:
        generations_import(
            generator=generator,
            dataset=dataset,
            lines=_lines(
                {
                    "source_example_id": sid,
                    "predicted_steps": [
                        f"Simulated step {k} by {generator} for procedure {i}." for k in (1, 2, 3)
                    ],
                }
                for i, sid in enumerate(sids)
            ),
        )


def verdicts_import(
    *, judge: str, dataset: str, generator: str, verdicts: Iterable[tuple[str, bool]]
) -> None:
    """The simulated judge's verdict on ``generator``'s generation of each ``(sid, has_failure)``."""
    records = []
    for sid, says in verdicts:
        failures = (
            [{"failure": "Simulated failure (demo data).", "L1_steps": [2], "L2_steps": [2]}]
            if says
            else []
        )
        records.append(
            {
                "source_example_id": sid,
                "reasoning": "Simulated verdict (demo data): no model was called.",
                "critical_failures": failures,
                "has_failure": says,
                "n_failures": len(failures),
                "parse_failed": False,
            }
        )
    judgments_import(judge=judge, generator=generator, dataset=dataset, lines=_lines(records))
