"""ML013 host-then-device: the rule (rule.py)."""
