"""ML002 eval-without-no-grad: the rule (rule.py)."""
