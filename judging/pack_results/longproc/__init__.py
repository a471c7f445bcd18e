"""LongProc's results tables (Tables 3 and 5) and its score-against-length curve."""
