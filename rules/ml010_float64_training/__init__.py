"""ML010 float64-training: the rule (rule.py)."""
