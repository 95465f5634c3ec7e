"""ML014 device-outputs-accumulated: the rule (rule.py)."""
