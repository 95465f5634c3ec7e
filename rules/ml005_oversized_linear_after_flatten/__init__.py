"""ML005 oversized-linear-after-flatten: the rule (rule.py)."""
