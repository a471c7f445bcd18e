"""The prompt versions of one judge family compared on a study: agreement, κ, AC1, the alt-test's ω and McNemar's test (the PromptVersion model is judging's)."""
