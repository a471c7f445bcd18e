"""The project's packages in layer order, lowest first: a package may import (or name in a
dotted string) its own layer and those before it, never one after it
(tests/core/test_layers.py). The one place the order is written; a new app is one entry, at
its layer."""

LAYERS = ("config", "core", "benchmarks", "mining", "annotation", "judging", "validation", "demo")
