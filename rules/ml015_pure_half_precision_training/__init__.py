"""ML015 pure-half-precision-training: the rule (rule.py)."""
