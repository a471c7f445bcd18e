"""ProcBench's results tables (Table 2) and its PML-against-N curve."""
