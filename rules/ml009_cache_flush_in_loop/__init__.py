"""ML009 cache-flush-in-loop: the rule (rule.py)."""
