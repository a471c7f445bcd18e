"""Probes of a judge against people: calibration of its vote share over seeded samples, and length bias."""
