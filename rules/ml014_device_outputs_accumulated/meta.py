"""ML014 device-outputs-accumulated: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML014",
    name="device-outputs-accumulated",
    # The text keeps values (`.append` / `.extend`, or a running `torch.cat`) and mentions a device.
    words=(
        ("append", "extend", "cat", "concat", "concatenate", "stack", "vstack"),
        # a device, or a Lightning evaluation hook (the Trainer picks the accelerator)
        ("cuda", "to", "device", "accelerator", "gpus", "validation_step", "test_step", "predict_step"),
    ),
)
