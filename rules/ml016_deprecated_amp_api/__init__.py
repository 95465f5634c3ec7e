"""ML016 deprecated-amp-api: the rule (rule.py)."""
