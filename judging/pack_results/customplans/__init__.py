"""CustomPlans' results tables (Table 2, Figs. 9–12) and the reader of a CustomPlans human study."""
