"""The comparison of the prompt versions of one judge family on a study: judges configured alike (backend, model, endpoint, decoding, parse
profile, the prompt's name) that differ only in the prompt text they send.

Each version against the study's human majority (agreement, Cohen's κ, Gwet's AC1 with
bootstrap CIs; the alt-test's winning rate ω, :mod:`validation.alt_test.reads`), and each
other version against the judge chosen on the items both judged, both parsed and with a clear
human majority: McNemar's exact test of "right" (agrees with the majority) between the two
(:func:`judging.stats.significance.mcnemar`)."""

from __future__ import annotations

from typing import Any

from annotation.models import Study
from judging import agreement as cmp
from judging.models import Judge
from judging.selectors import verdicts as sel
from judging.stats.binary import binary_agreement
from judging.stats.significance import mcnemar
from validation.alt_test.reads import study_alt_test
from validation.alt_test.stats import DEFAULT_EPSILON


def version_label(judge: Judge) -> str:
    return str(judge.prompt_version) if judge.prompt_version_id else judge.prompt_template


def judge_family(judge: Judge) -> list[Judge]:
    """The judges of ``judge``'s family (itself included), by prompt version number."""
    candidates = Judge.objects.filter(
        prompt_template=judge.prompt_template, backend=judge.backend, model=judge.model
    ).select_related("prompt_version")
    wanted = judge.family_config()
    family = [j for j in candidates if j.family_config() == wanted]
    return sorted(
        family, key=lambda j: (j.prompt_version.number if j.prompt_version else 0, j.name)
    )


def _omega(study: Study, judge: Judge, epsilon: float) -> dict[str, Any]:
    """The alt-test's ω on the study's first label (has_failure for a critical-failure
    study), or why there is none."""
    report = study_alt_test(study=study, judge=judge, epsilon=epsilon)
    if not report["sections"]:
        return {"value": None, "undefined": report.get("undefined") or "no alt-test"}
    section = report["sections"][0]
    if section["winning_rate"] is None:
        return {"value": None, "undefined": section.get("undefined") or "no annotator tested"}
    return {
        "value": section["winning_rate"],
        "passed": section["passed"],
        "epsilon": section["epsilon"],
        "n_annotators": len(section["annotators"]),
    }


def _right(verdicts: dict, majority: dict) -> dict[int, bool]:
    """Per generation with a verdict and a clear majority: did the judge agree with it?"""
    return {
        g: bool(v) == majority[g]
        for g, v in verdicts.items()
        if v is not None and majority.get(g) is not None
    }


def prompt_version_comparison(
    *,
    study: Study,
    judge: Judge,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    epsilon: float = DEFAULT_EPSILON,
) -> dict[str, Any]:
    """The prompt versions of ``judge``'s family on ``study`` (module docstring). Versions
    with no verdict on the study's items are left out; ``judge`` is always in."""
    options = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    majority, _, item_generation = sel.study_majority(study)
    family = judge_family(judge)
    verdicts = sel.verdicts_for_generations(
        judges=family, generation_ids=list(item_generation.values())
    )
    family = [j for j in family if j.pk == judge.pk or verdicts[j.pk]]
    right = {j.pk: _right(verdicts[j.pk], majority) for j in family}
    versions = []
    for j in family:
        counts = cmp.judge_vs_majority(majority=majority, verdicts=verdicts[j.pk])
        stats = binary_agreement(counts.confusion, reference="a clear human majority", **options)
        entry: dict[str, Any] = {
            "judge": j.name,
            "judge_id": j.judge_id,
            "prompt_version": j.prompt_version.number if j.prompt_version else None,
            "prompt_version_id": j.prompt_version_id,
            "label": version_label(j),
            "note": j.prompt_version.note if j.prompt_version else "",
            "n_judged": len(verdicts[j.pk]),
            "n_compared": counts.n_compared,
            "agreement": stats["agreement"],
            "kappa": stats["kappa"],
            "gwet_ac1": stats["gwet_ac1"],
            "alt_test_winning_rate": _omega(study, j, epsilon),
        }
        if j.pk != judge.pk:
            common = sorted(right[judge.pk].keys() & right[j.pk].keys())
            test = mcnemar([right[judge.pk][g] for g in common], [right[j.pk][g] for g in common])
            # n_a_only: items only the chosen judge got right; n_b_only: only this version
            entry["mcnemar"] = {**test.to_json(), "a": judge.name, "b": j.name}
        versions.append(entry)
    return {
        "study": {"id": study.pk, "name": study.name},
        "judge": {"name": judge.name, "label": version_label(judge)},
        "family": {"prompt": judge.prompt_template, "backend": judge.backend, "model": judge.model},
        "versions": versions,
        "bootstrap": options,
        "epsilon": epsilon,
    }
