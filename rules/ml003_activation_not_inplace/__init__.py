"""ML003 activation-not-inplace: the rule (rule.py)."""
