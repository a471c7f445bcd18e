"""Real-browser fixtures (browser, page, shots) live in tests/conftest.py, shared by every browser test."""
