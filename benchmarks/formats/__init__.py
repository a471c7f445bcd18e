"""JSONL formats shared with the reference implementation (lilakk/how2everything ``how2bench``).

Pure Python, no Django: parsing and validation of example (procedure) and generation records,
and the builders of the records we export.

- :mod:`~benchmarks.formats.examples`: ``how2bench.example.v1`` (and the how2mine export kind,
  accepted on import);
- :mod:`~benchmarks.formats.generations`: ``how2bench.generation.v1``;
- :mod:`~benchmarks.formats.common`: limits, errors, line reading and the field checks both use.

Input is read line by line (bytes or str). Every problem becomes a :class:`RecordError` naming
the line number and the field; callers collect them (capped) and refuse the whole file.
Text fields are stripped of surrounding whitespace (as the reference does); topics are
canonicalised to the slugs of :mod:`benchmarks.topics`.
"""

from benchmarks.formats.common import (
    DEFAULT_MAX_ERRORS,
    ErrorCollector,
    Limits,
    ParseResult,
    RecordError,
    dumps_line,
    iter_json_lines,
    topic_display,
)
from benchmarks.formats.examples import (
    SCHEMA_VERSION_EXAMPLE,
    ExampleRecord,
    example_record,
    parse_example,
    read_examples,
)
from benchmarks.formats.generations import (
    SCHEMA_VERSION_GENERATION,
    GenerationRecord,
    fill_token_counts,
    generation_record,
    match_generations,
    parse_generation,
    read_generations,
)

__all__ = [
    "DEFAULT_MAX_ERRORS",
    "SCHEMA_VERSION_EXAMPLE",
    "SCHEMA_VERSION_GENERATION",
    "ErrorCollector",
    "ExampleRecord",
    "GenerationRecord",
    "Limits",
    "ParseResult",
    "RecordError",
    "dumps_line",
    "example_record",
    "fill_token_counts",
    "generation_record",
    "iter_json_lines",
    "match_generations",
    "parse_example",
    "parse_generation",
    "read_examples",
    "read_generations",
    "topic_display",
]
