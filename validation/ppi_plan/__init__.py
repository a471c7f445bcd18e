"""Plan a study: how many human labels and judge verdicts for a target interval or budget."""
