"""ML011 retain-graph-in-loop: the rule (rule.py)."""
