"""Scorer packs for the other seeds (LongProc, CustomPlans, ProcBench, SciRecipe): pure
functions, one module per benchmark, registered by name in :mod:`benchmarks.packs.registry`."""
