"""Label sets: a file of people\x27s and judges\x27 labels, uploaded or read, and what it answers."""
