"""ML008 eval-loader-full-batch: the rule (rule.py)."""
