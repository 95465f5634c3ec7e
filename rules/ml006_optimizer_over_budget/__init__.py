"""ML006 optimizer-over-budget: the rule (rule.py)."""
