"""ML001 accumulated-graph: the rule (rule.py)."""
