"""The reference's YAML suite config (``h2e bench --config X.yaml``), loaded and checked.

Keys (as the reference reads them): ``out_root`` (required), ``generator_defaults``,
``models`` (names or mappings), ``evaluator`` (omitted: the How2Judge 8B on vLLM),
``inputs``, ``prompts``, ``paths``. Relative paths are relative to the current directory, as
in the reference. Defaults: temperature 0.0, max_new_tokens 4096, 1000 requests and 100,000
tokens per minute for API models.

Backends: ``deluge`` (the reference's API client; here mapped onto the OpenAI-compatible
backend at the provider's endpoint: ``openai``, ``anthropic``, ``gemini``), ``vllm`` (offline,
on the ``gpu`` queue) and, how2review's addition, ``openai``: any OpenAI-compatible server
given by ``base_url``, ``model`` and ``api_key_env`` (the NAME of the variable holding the
key; none for a local server).

Every problem is a :class:`BenchConfigError` naming the file and the key. Pure: no Django.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judging.bench import spec as sp
from judging.bench.spec import (
    DATASET_ENV,
    BenchConfigError,
    Inputs,
    LLMSpec,
    ModelSpec,
    Problems,
)

TOP_KEYS = {"out_root", "generator_defaults", "models", "evaluator", "inputs", "prompts", "paths"}
LEGACY_KEYS = {"generator", "llm", "generation", "generations_root", "stage_llm_overrides"}
INPUT_KEYS = {
    "path",
    "hf_repo",
    "hf_split",
    "hf_streaming",
    "hf_cache_dir",
    "kind",
    "format",
    "compression",
    "include_globs",
}
KINDS = ("auto", "how2mine_export", "bench")
FORMATS = ("auto", "jsonl", "csv", "arrow", "parquet")
COMPRESSIONS = ("auto", "none", "zst", "gz", "bz2", "xz")
DEFAULT_GLOBS = ("*.parquet", "*.jsonl", "*.jsonl.gz", "*.jsonl.zst", "*.arrow")


@dataclass(frozen=True)
class Prompts:
    """The prompt files: the configured paths (or the built-in ones) and their texts."""

    inference_base: Path
    inference_inst: Path
    judge: Path
    judge_template: str  # the name of the judge prompt (judging/prompts) this text is of
    # a judge prompt file the project does not ship: its text, run as a new version of
    # ``judge_template`` (None: the shipped text of ``judge_template``)
    judge_text: str | None = None
    # the paths the reference names (and hashes into judge_id): as configured, else
    # <cwd>/prompts/<file>.txt, its defaults; the text read is the file above (the same text)
    nominal: dict[str, Path] = field(default_factory=dict)

    def nominal_judge(self) -> Path:
        return self.nominal.get("judge", self.judge)

    def nominal_generation(self, prompt_style: str) -> Path:
        key = "inference_base" if prompt_style == "base" else "inference_inst"
        return self.nominal.get(key, self.generation_path(prompt_style))

    def generation_path(self, prompt_style: str) -> Path:
        return self.inference_base if prompt_style == "base" else self.inference_inst


@dataclass(frozen=True)
class SuiteConfig:
    path: Path
    out_root: Path
    models: list[ModelSpec]
    evaluator: LLMSpec
    evaluator_given: bool
    inputs: Inputs
    prompts: Prompts
    generations_path: Path | None = None
    judgments_path: Path | None = None
    warnings: list[str] = field(default_factory=list)

    # --- ids and names, as the reference computes them ------------------------------------
    def generator_id(self, model: ModelSpec) -> str:
        llm = model.llm
        generator: dict[str, Any] = {
            "backend": llm.backend,
            "provider": llm.provider,
            "model": llm.model,
            "temperature": llm.temperature,
            "max_new_tokens": llm.max_new_tokens,
            "max_requests_per_minute": llm.max_requests_per_minute,
            "max_tokens_per_minute": llm.max_tokens_per_minute,
            "reasoning_effort": llm.reasoning_effort,
            "vllm_overrides": llm.vllm or {},
        }
        if llm.backend == "openai":  # how2review's backend: the server is part of the identity
            generator["base_url"] = llm.base_url
        payload = {
            "generator_id_version": "how2bench.generator_id.v1",
            "generator": generator,
            "generation": {"model_type": model.prompt_style},
            "generation_prompt_sha256": file_sha256(
                self.prompts.generation_path(model.prompt_style)
            ),
        }
        return short_hash(payload)

    def judge_id(self) -> str:
        llm = self.evaluator
        judge: dict[str, Any] = {
            "backend": llm.backend,
            "provider": llm.provider,
            "model": llm.model,
            "temperature": llm.temperature,
            "max_new_tokens": llm.max_new_tokens,
            "reasoning_effort": llm.reasoning_effort,
            "vllm_overrides": llm.vllm or {},
        }
        if llm.backend == "openai":
            judge["base_url"] = llm.base_url
        payload = {
            "judge_id_version": "how2bench.judge_id.v1",
            "judge": judge,
            "judge_prompt_sha256": file_sha256(self.prompts.judge),
            "judge_prompt_path": str(self.prompts.nominal_judge()),
        }
        return short_hash(payload)

    def judge_dir_name(self) -> str:
        """``<short_model>_<judge_id>``: the last ``/``- or ``_``-separated part of the judge's
        model name, made filesystem-safe."""
        parts = [p for p in re.split(r"[/_]+", self.evaluator.model.strip()) if p]
        short = parts[-1] if parts else "judge"
        safe = "".join(c if (c.isalnum() or c in ".-") else "-" for c in short).strip("-")
        return f"{safe or 'judge'}_{self.judge_id()}"

    def run_dir_name(self, model: ModelSpec) -> str:
        return f"{model.run_name}_{self.generator_id(model)}"


def canonical(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): canonical(obj[k]) for k in sorted(obj, key=str)}
    if isinstance(obj, list | tuple):
        return [canonical(x) for x in obj]
    return obj


def short_hash(payload: dict[str, Any]) -> str:
    blob = json.dumps(canonical(payload), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_text(encoding="utf-8").encode("utf-8")).hexdigest()


# --- loading --------------------------------------------------------------------------------
def load_yaml(path: Path) -> dict[str, Any]:
    import yaml

    where = str(path)
    if not path.is_file():
        raise BenchConfigError([f"{where}: config file not found"])
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise BenchConfigError([f"{where}: not UTF-8 text ({exc.reason})"]) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise BenchConfigError([f"{where}: not valid YAML{at}: {problem}"]) from exc
    if not isinstance(data, dict):
        raise BenchConfigError([f"{where}: the top level must be a mapping of keys"])
    return data


def load_suite_config(path: str | Path, *, base_dir: Path | None = None) -> SuiteConfig:
    """Read and check ``path``; raises :class:`BenchConfigError` listing every problem."""
    cfg_path = Path(path).resolve()
    raw = load_yaml(cfg_path)
    base = (base_dir or Path.cwd()).resolve()
    problems = Problems(cfg_path)
    for key in sorted(LEGACY_KEYS & raw.keys()):
        problems.add(
            key,
            "is the reference's old format and no longer supported: use `models:` (+ "
            "`generator_defaults:`) and `out_root:`",
        )
    for key in sorted(raw.keys() - TOP_KEYS - LEGACY_KEYS, key=str):
        problems.warn(str(key), "unknown key, ignored (as the reference does)")

    out_root = _path(problems, raw.get("out_root"), "out_root", base, required=True)
    defaults = raw.get("generator_defaults")
    if defaults is not None and not isinstance(defaults, Mapping):
        problems.add("generator_defaults", "must be a mapping")
        defaults = None
    defaults = dict(defaults or {})
    models = _models(problems, raw.get("models"), defaults)

    evaluator_raw = raw.get("evaluator")
    if evaluator_raw is None:
        evaluator = sp.default_evaluator()
    elif not isinstance(evaluator_raw, Mapping):
        problems.add("evaluator", "must be a mapping (or omitted for the How2Judge on vLLM)")
        evaluator = sp.default_evaluator()
    else:
        evaluator = sp.llm_spec(problems, dict(evaluator_raw), {}, key="evaluator")

    inputs = _inputs(problems, raw.get("inputs"), base)
    prompts = _prompts(problems, raw.get("prompts"), base)
    paths = raw.get("paths")
    generations = judgments = None
    if paths is not None and not isinstance(paths, Mapping):
        problems.add("paths", "must be a mapping")
    elif paths is not None:
        generations = _path(problems, paths.get("generations"), "paths.generations", base)
        judgments = _path(problems, paths.get("judgments"), "paths.judgments", base)
        for key in sorted(set(paths) - {"generations", "judgments"}, key=str):
            problems.warn(f"paths.{key}", "unknown key, ignored")
    problems.raise_if_any()
    return SuiteConfig(
        path=cfg_path,
        out_root=out_root,
        models=models,
        evaluator=evaluator,
        evaluator_given=evaluator_raw is not None,
        inputs=inputs,
        prompts=prompts,
        generations_path=generations,
        judgments_path=judgments,
        warnings=list(problems.warnings),
    )


def _path(problems: Problems, value: Any, key: str, base: Path, *, required: bool = False):
    if value is None:
        if required:
            problems.add(key, "is required (a non-empty path)")
        return None
    if not isinstance(value, str) or not value.strip():
        problems.add(key, f"must be a non-empty string, got {value!r}")
        return None
    p = Path(value.strip()).expanduser()
    return p if p.is_absolute() else (base / p).resolve()


def _models(problems: Problems, raw: Any, defaults: dict[str, Any]) -> list[ModelSpec]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        problems.add("models", "must be a list of model names or mappings")
        return []
    out: list[ModelSpec] = []
    for i, entry in enumerate(raw):
        key = f"models[{i}]"
        if isinstance(entry, str):
            entry = {"model": entry}
        if not isinstance(entry, Mapping):
            problems.add(key, f"must be a model name or a mapping, got {type(entry).__name__}")
            continue
        entry = dict(entry)
        model = entry.get("model")
        if not isinstance(model, str) or not model.strip():
            problems.add(f"{key}.model", "must be a non-empty string")
            continue
        run_name_raw = entry.get("run_name")
        if run_name_raw is not None and (
            not isinstance(run_name_raw, str) or not run_name_raw.strip()
        ):
            problems.add(f"{key}.run_name", "must be a non-empty string when given")
            continue
        style_raw = entry.get("prompt_style", defaults.get("prompt_style"))
        style = str(style_raw).strip().lower() if style_raw is not None else ""
        if style not in ("base", "inst"):
            problems.add(
                f"{key}.prompt_style",
                f"must be 'base' or 'inst' (on the model or in generator_defaults), got {style_raw!r}",
            )
            continue
        llm = sp.llm_spec(problems, entry, defaults, key=key)
        if llm is None:
            continue
        out.append(
            ModelSpec(
                index=i,
                run_name=sp.safe_dirname(run_name_raw or model),
                prompt_style=style,
                llm=llm,
            )
        )
    names = [m.run_name for m in out]
    for m in out:
        if names.count(m.run_name) > 1 and m.index != min(
            x.index for x in out if x.run_name == m.run_name
        ):
            problems.warn(
                f"models[{m.index}].run_name",
                f"{m.run_name!r} is used by another model too (their generator ids keep them apart)",
            )
    return out


def _inputs(problems: Problems, raw: Any, base: Path) -> Inputs:
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        problems.add("inputs", "must be a mapping")
        return Inputs()
    for key in sorted(set(raw) - INPUT_KEYS, key=str):
        problems.warn(f"inputs.{key}", "unknown key, ignored")
    path = _path(problems, raw.get("path"), "inputs.path", base)
    hf_repo = raw.get("hf_repo")
    choice = {}
    for key, allowed in (("kind", KINDS), ("format", FORMATS), ("compression", COMPRESSIONS)):
        value = str(raw.get(key, "auto")).strip().lower() or "auto"
        if value not in allowed:
            problems.add(f"inputs.{key}", f"must be one of {', '.join(allowed)}, got {value!r}")
        choice[key] = value
    globs_raw = raw.get("include_globs")
    globs: list[str] = []
    if isinstance(globs_raw, list):
        globs = [str(g).strip() for g in globs_raw if str(g).strip()]
    elif globs_raw is not None:
        problems.add("inputs.include_globs", "must be a list of glob patterns")
    hf_repo = hf_repo.strip() if isinstance(hf_repo, str) and hf_repo.strip() else ""
    if path is None and "path" not in raw and (hf_repo or sp.DEFAULT_DATASET) == sp.DEFAULT_DATASET:
        local = os.environ.get(DATASET_ENV, "").strip()
        if local:  # a local copy of the released benchmark stands in for the download
            path = Path(local).expanduser().resolve()
            globs = globs or list(DEFAULT_GLOBS)
    return Inputs(path=path, include_globs=tuple(globs), hf_repo=hf_repo, **choice)


def _prompts(problems: Problems, raw: Any, base: Path) -> Prompts:
    from benchmarks import generation as gen
    from judging import prompting

    builtin = {
        "inference_base": gen.PROMPTS_DIR / gen.PROMPT_FILES["base"],
        "inference_inst": gen.PROMPTS_DIR / gen.PROMPT_FILES["instruct"],
        "judge": prompting.PROMPTS_DIR / f"{prompting.DEFAULT_TEMPLATE}.txt",
    }
    if raw is not None and not isinstance(raw, Mapping):
        problems.add("prompts", "must be a mapping")
        raw = None
    raw = dict(raw or {})
    for key in sorted(set(raw) - set(builtin), key=str):
        problems.warn(f"prompts.{key}", "unknown key, ignored")
    paths: dict[str, Path] = {}
    nominal: dict[str, Path] = {}
    judge_template, judge_text = prompting.DEFAULT_TEMPLATE, None
    for key, default in builtin.items():
        chosen = _path(problems, raw.get(key), f"prompts.{key}", base) if key in raw else None
        paths[key] = chosen or default
        nominal[key] = chosen or (base / "prompts" / f"{key}.txt").resolve()
        if chosen is None:
            continue
        if not chosen.is_file():
            problems.add(f"prompts.{key}", f"file not found: {chosen}")
            continue
        text = chosen.read_text(encoding="utf-8")
        if key == "judge":
            same = [n for n in prompting.template_names() if prompting.load_template(n) == text]
            if same:
                judge_template = same[0]
            else:  # any judge prompt, as the reference: a new version of the H.3 prompt
                judge_text = _judge_text(problems, chosen, text)
            continue
        if text == builtin[key].read_text(encoding="utf-8"):
            continue
        problems.add(
            f"prompts.{key}",
            f"{chosen} differs from the built-in prompt; how2review runs the generation prompts "
            f"it ships ({builtin[key]}): point prompts.{key} at it or leave it out",
        )
    return Prompts(judge_template=judge_template, judge_text=judge_text, nominal=nominal, **paths)


def _judge_text(problems: Problems, path: Path, text: str) -> str | None:
    """A judge prompt file's text: control characters stripped (the line named), refused
    when it cannot be rendered (a placeholder other than {goal}, {reference_steps}, {steps})."""
    from core.text import strip_controls, stripped_note
    from judging import prompting

    lines = []
    for number, line in enumerate(text.split("\n"), 1):
        clean, n = strip_controls(line)
        if n:
            problems.warn("prompts.judge", f"{path}: {stripped_note(number, n)}")
        lines.append(clean)
    text = "\n".join(lines)
    errors = prompting.prompt_text_errors(text)
    for message in errors:
        problems.add("prompts.judge", f"{path}: {message}")
    return None if errors else text
