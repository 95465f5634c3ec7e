"""ML012 zero-grad-keeps-buffers: the rule (rule.py)."""
