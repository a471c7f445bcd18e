"""The judge validation report: one judge against a study's human majority with bootstrap CIs, κ and AC1, constant baselines, leave-one-out humans and other judges."""
