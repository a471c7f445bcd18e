"""SciRecipe's results tables (Table 1, SCORE, BLEU, the level split)."""
