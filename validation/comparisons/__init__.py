"""Judges against a study's human majority, judge↔judge agreement, and the generator rankings two judges produce (Kendall's τ-b with a bootstrap CI)."""
