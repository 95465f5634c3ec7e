"""The gradient-checkpointing what-if: which blocks a user would checkpoint, and wrapping them.

People checkpoint the repeated blocks of a model: each residual block of a ResNet, each layer of a
transformer, each stage of a U-Net. A block here is a module that holds at least `MIN_LAYERS`
layers with parameters (a block, not a single conv-norm-activation) and has a sibling of the same
class; of nested candidates the innermost are taken (a Swin stage's blocks, not the stage).

A block is checkpointed by replacing its `forward` on the instance, not by wrapping the module, so
code that reaches into it (`nn.TransformerEncoder` reads `layers[0].self_attn`) still finds it.
"""

from __future__ import annotations

import warnings
from collections import Counter

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "Failed to initialize NumPy" when numpy is absent
    from torch import nn
    from torch.utils.checkpoint import checkpoint

MIN_LAYERS = 3


def _layers_with_parameters(module: nn.Module) -> int:
    return sum(1 for m in module.modules() if any(True for _ in m.parameters(recurse=False)))


def repeated_blocks(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """(qualified name, module) of the blocks to checkpoint, in model order."""
    candidates: dict[int, tuple[str, nn.Module]] = {}
    for parent_name, parent in model.named_modules():
        children = [(name, child) for name, child in parent.named_children() if _layers_with_parameters(child) >= MIN_LAYERS]
        classes = Counter(type(child) for _, child in children)
        for name, child in children:
            if classes[type(child)] >= 2:
                candidates[id(child)] = (f"{parent_name}.{name}" if parent_name else name, child)
    innermost = []
    for name, block in candidates.values():
        if not any(id(m) in candidates for m in block.modules() if m is not block):
            innermost.append((name, block))
    return innermost


def _checkpointed(forward):
    def run(*args, **kwargs):
        return checkpoint(forward, *args, use_reentrant=False, **kwargs)

    return run


def checkpoint_blocks(model: nn.Module) -> list[str]:
    """Checkpoint every repeated block of `model` in place; the class names of those blocks."""
    blocks = repeated_blocks(model)
    for _, block in blocks:
        block.forward = _checkpointed(block.forward)
    return [type(block).__name__ for _, block in blocks]


def describe(classes: list[str]) -> str:
    """"8 BasicBlock" or "6 DoubleConv, 4 Up"."""
    counts = Counter(classes)
    return ", ".join(f"{n} {name}" for name, n in counts.most_common())
