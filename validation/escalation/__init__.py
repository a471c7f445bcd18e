"""Escalate what the judge cannot decide: a confidence threshold with a guarantee of agreement."""
