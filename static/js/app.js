// Small progressive enhancements; pages work without it.
