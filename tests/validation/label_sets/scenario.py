"""A label-set file as a researcher brings one: 3 annotators × 60 items of binary
critical-failure labels and a judge's verdicts on 600 items (those 60 among them), the items of
two generators (groups). Seeded; the same text every time."""

from __future__ import annotations

import json

import numpy as np

GROUPS = ("model-a", "model-b")
ANNOTATORS = ("ann1", "ann2", "ann3")
JUDGE = "my-judge"


def rows(*, seed: int = 3, n_items: int = 600, n_labelled: int = 60) -> list[dict]:
    """One dict per label: people on the first ``n_labelled`` items, the judge on all."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_items):
        group = GROUPS[i % 2]
        truth = int(rng.random() < (0.25 if group == "model-a" else 0.4))
        item = f"item-{i:03d}"
        if i < n_labelled:
            for annotator in ANNOTATORS:
                label = truth if rng.random() < 0.85 else 1 - truth
                out.append({"item_id": item, "source": annotator, "kind": "human",
                            "label": str(label), "group": group, "text": ""})  # fmt: skip
        verdict = truth if rng.random() < 0.85 else 1 - truth
        out.append({"item_id": item, "source": JUDGE, "kind": "judge", "label": str(verdict),
                    "group": group, "text": f"reasoning for {item}"})  # fmt: skip
    return out


def csv_text(records: list[dict]) -> str:
    lines = ["item_id,source,kind,label,group,text"]
    lines += [
        f"{r['item_id']},{r['source']},{r['kind']},{r['label']},{r['group']},{r['text']}"
        for r in records
    ]
    return "\n".join(lines) + "\n"


def jsonl_text(records: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)
