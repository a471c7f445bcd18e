"""Models arrive with their issue."""
