"""ML017 training-without-mixed-precision: the rule (rule.py)."""
