"""ML100 unused-suppression: the rule (rule.py); the check itself is memlint/pipeline/unused_suppressions.py."""
