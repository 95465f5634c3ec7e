"""`memlint confirm`: run fixtures before and after memlint's fixes and measure peak tensor memory.

Only `harness` and `tracker` import torch, and only inside the measuring child processes (and in
`memlint estimate`); the command itself, `variants`, `runner` and `report` stay torch-free so that
`memlint check` never pays for torch.
"""
