"""Import of judgments made elsewhere (reference judgment JSONL) as a judge of backend
"imported". The whole file is validated first; a refused file writes nothing."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from benchmarks import formats as bformats
from benchmarks.models import Dataset, Generation, Generator
from benchmarks.selectors.catalog import dataset_resolve
from benchmarks.services.imports import ImportRefused
from judging.formats import parse_judgment
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
from judging.prompting import clean_steps
from judging.services.items import item_content_hash
from judging.services.judges import imported_judge_get_or_create
from judging.services.run_items import run_counters


@dataclass(frozen=True)
class JudgmentImportReport:
    created: int = 0
    unchanged: int = 0
    run_id: int | None = None
    notes: tuple[str, ...] = ()  # lines cleaned of control characters (core.text), named

    def __str__(self) -> str:
        text = f"created {self.created}, unchanged {self.unchanged} (run {self.run_id})"
        return "\n".join([text, *self.notes])


def _lines(path: Path | str | None, lines: Iterable[bytes | str] | None):
    if lines is not None:
        return list(lines)
    with open(path, "rb") as handle:
        return handle.readlines()


def _predicted_mismatch(judged: list[str] | None, stored: list) -> str:
    """How the steps a record says were judged differ from the stored generation's (compared
    as the judge saw them: stripped, empty steps left out); "" when they agree or the record
    gives none."""
    if judged is None:
        return ""
    a, b = clean_steps(judged), clean_steps(stored or [])
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"step {i + 1} is {x[:80]!r} in the file but {y[:80]!r} stored"
    if len(a) != len(b):
        return f"{len(a)} step(s) in the file, {len(b)} stored"
    return ""


def judgments_import(
    *,
    judge: str,
    generator: str,
    dataset: str | None = None,
    path: Path | str | None = None,
    lines: Iterable[bytes | str] | None = None,
    max_errors: int = bformats.DEFAULT_MAX_ERRORS,
) -> JudgmentImportReport:
    source = str(path) if path else "input"
    errors = bformats.ErrorCollector(cap=max_errors)
    gen = Generator.objects.filter(name=generator).first()
    if gen is None:
        raise ValueError(f"no generator named {generator!r}")
    ds: Dataset | None = None
    if dataset:
        ds = dataset_resolve(dataset)
    existing_judge = Judge.objects.filter(name=judge).first()
    if existing_judge is not None and existing_judge.backend != Judge.Backend.IMPORTED:
        raise ValueError(
            f"judge {judge!r} exists with backend {existing_judge.backend!r}; imports need an "
            f"'imported' judge: choose another name"
        )

    records = []
    notes: list[str] = []
    seen: dict[str, int] = {}
    for line, value in bformats.iter_json_lines(_lines(path, lines), notes):
        if isinstance(value, bformats.RecordError):
            errors.add(value)
            continue
        rec, errs = parse_judgment(value, line=line)
        errors.extend(errs)
        if rec is None:
            continue
        if rec.source_example_id in seen:
            errors.add(
                bformats.RecordError(
                    line,
                    "source_example_id",
                    f"{rec.source_example_id!r} already given on line {seen[rec.source_example_id]}",
                )
            )
            continue
        seen[rec.source_example_id] = line
        records.append(rec)

    # match to generations of this generator by source_example_id
    gens = Generation.objects.filter(
        generator=gen, procedure__source_example_id__in=list(seen)
    ).select_related("procedure")
    if ds is not None:
        gens = gens.filter(procedure__dataset=ds)
    by_sid: dict[str, list[Generation]] = {}
    for g in gens:
        by_sid.setdefault(g.procedure.source_example_id, []).append(g)
    matched: list[tuple] = []
    for rec in records:
        found = by_sid.get(rec.source_example_id, [])
        if not found:
            where = f" in dataset {ds}" if ds else ""
            errors.add(
                bformats.RecordError(
                    rec.line,
                    "source_example_id",
                    f"no generation of generator {generator!r} for {rec.source_example_id!r}{where}",
                )
            )
        elif len(found) > 1:
            names = ", ".join(sorted(str(g.procedure.dataset) for g in found))
            errors.add(
                bformats.RecordError(
                    rec.line,
                    "source_example_id",
                    f"{rec.source_example_id!r} is in several datasets ({names}); choose one with --dataset",
                )
            )
        else:
            mismatch = _predicted_mismatch(rec.predicted_steps, found[0].predicted_steps)
            if mismatch:
                errors.add(
                    bformats.RecordError(
                        rec.line,
                        "predicted_steps",
                        f"differ from the stored generation of {generator!r} for "
                        f"{rec.source_example_id!r}: {mismatch}",
                    )
                )
                continue
            matched.append((rec, found[0], item_content_hash(found[0])))
    if not records and not errors:
        errors.add(bformats.RecordError(0, None, "the file holds no judgment"))

    judge_obj = existing_judge or Judge(
        name=judge, backend=Judge.Backend.IMPORTED, structured_output=False
    )
    judge_key = judge_obj.judge_id or judge_obj.compute_judge_id()
    stored = {
        j.content_hash: j
        for j in Judgment.objects.filter(
            judge_key=judge_key, content_hash__in=[h for _, _, h in matched]
        )
    }
    for rec, _generation, h in matched:
        old = stored.get(h)
        if old is not None and (old.critical_failures, old.parse_failed, old.reasoning) != (
            rec.critical_failures,
            rec.parse_failed,
            rec.reasoning,
        ):
            errors.add(
                bformats.RecordError(
                    rec.line,
                    "critical_failures",
                    f"judge {judge!r} already holds a different verdict for this content",
                )
            )
    if errors:
        raise ImportRefused(errors, source=source)

    with transaction.atomic():
        judge_obj = imported_judge_get_or_create(
            name=judge, model=matched[0][0].judge_model if matched else ""
        )
        run, _ = JudgeRun.objects.get_or_create(
            judge=judge_obj,
            selection={"imported": True, "generators": [gen.pk]},
            defaults={"status": JudgeRun.Status.DONE},
        )
        new = [
            Judgment(
                judge=judge_obj,
                judge_key=judge_obj.judge_id,
                content_hash=h,
                source_example_id=rec.source_example_id,
                reasoning=rec.reasoning,
                critical_failures=rec.critical_failures,
                has_failure=rec.has_failure,
                n_failures=rec.n_failures,
                parse_failed=rec.parse_failed,
                raw_output=rec.raw_output,
            )
            for rec, g, h in matched
            if h not in stored
        ]
        Judgment.objects.bulk_create(new, ignore_conflicts=True, batch_size=1000)
        ids = dict(
            Judgment.objects.filter(
                judge_key=judge_obj.judge_id, content_hash__in=[h for _, _, h in matched]
            ).values_list("content_hash", "id")
        )
        JudgeRunItem.objects.bulk_create(
            [
                JudgeRunItem(run=run, generation=g, content_hash=h, judgment_id=ids[h])
                for _, g, h in matched
            ],
            ignore_conflicts=True,
            batch_size=1000,
        )
        JudgeRun.objects.filter(pk=run.pk).update(**run_counters(run), status=JudgeRun.Status.DONE)
    return JudgmentImportReport(
        created=len(new), unchanged=len(matched) - len(new), run_id=run.pk, notes=tuple(notes)
    )
