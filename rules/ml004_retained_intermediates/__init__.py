"""ML004 retained-intermediates: the rule (rule.py)."""
