"""ML007 checkpoint-misuse: the rule (rule.py)."""
