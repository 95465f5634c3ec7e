"""`memlint estimate`: simulate one training step of a model under fake tensors (nothing is
allocated) with the storage tracker of `memlint confirm`, and say whether it fits a memory budget.

Only `simulate` (and what it imports) loads torch; the command module stays torch-free until it runs.
"""
