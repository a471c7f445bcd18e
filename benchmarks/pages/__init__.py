"""What the benchmark pages show: the template contexts built from the selectors."""
