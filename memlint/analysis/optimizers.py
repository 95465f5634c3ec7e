"""Optimizer state per parameter: the one table the rules read (ML006 checks a budget with it;
ML005 names the file's optimizer). `memlint estimate` does not read it: it runs the optimizer's
step under fake tensors (memlint/estimate/optimizer_sim.py).

Bytes of persistent state per fp32 parameter, on top of the 4 B weight and 4 B gradient, as
measured with PyTorch 2.13 (the team's memory-facts notes: SGD 0, SGD+momentum 4, RMSprop 4,
Adagrad 4, Adam/AdamW 8, Adam with amsgrad 12, torch.optim.Adafactor ~0.01, 8-bit AdamW ~2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

WEIGHT_BYTES = 4  # fp32
GRADIENT_BYTES = 4  # fp32; mixed precision (autocast) keeps fp32 weights, gradients and state


@dataclass(frozen=True)
class OptimizerState:
    name: str  # how messages name it
    bytes_per_param: float  # persistent state, fp32
    momentum_bytes: float = 0.0  # extra when `momentum` is non-zero (SGD)
    amsgrad_bytes: float = 0.0  # extra when `amsgrad=True`
    adam_family: bool = False  # keeps two moments per parameter


# Qualified class name -> its state.  Keys are what `ctx.resolve` returns for the constructor.
OPTIMIZERS: dict[str, OptimizerState] = {
    "torch.optim.SGD": OptimizerState("SGD", 0, momentum_bytes=4),
    "torch.optim.RMSprop": OptimizerState("RMSprop", 4, momentum_bytes=4),
    "torch.optim.Adagrad": OptimizerState("Adagrad", 4),
    "torch.optim.Adadelta": OptimizerState("Adadelta", 8),
    "torch.optim.Rprop": OptimizerState("Rprop", 8),
    "torch.optim.ASGD": OptimizerState("ASGD", 4),
    "torch.optim.Adam": OptimizerState("Adam", 8, amsgrad_bytes=4, adam_family=True),
    "torch.optim.AdamW": OptimizerState("AdamW", 8, amsgrad_bytes=4, adam_family=True),
    "torch.optim.NAdam": OptimizerState("NAdam", 8, adam_family=True),
    "torch.optim.RAdam": OptimizerState("RAdam", 8, adam_family=True),
    "torch.optim.Adamax": OptimizerState("Adamax", 8, adam_family=True),
    "torch.optim.SparseAdam": OptimizerState("SparseAdam", 8, adam_family=True),
    "torch.optim.Adafactor": OptimizerState("torch.optim.Adafactor", 0.01),
    "transformers.Adafactor": OptimizerState("Adafactor", 0.01),
    "transformers.optimization.Adafactor": OptimizerState("Adafactor", 0.01),
    "bitsandbytes.optim.AdamW8bit": OptimizerState("8-bit AdamW", 2),
    "bitsandbytes.optim.Adam8bit": OptimizerState("8-bit Adam", 2),
    "bitsandbytes.optim.PagedAdamW8bit": OptimizerState("paged 8-bit AdamW", 2),
}
# The same classes under their defining modules (`from torch.optim.adam import Adam`).
for _qualified, _state in list(OPTIMIZERS.items()):
    if _qualified.startswith("torch.optim."):
        _class = _qualified.rsplit(".", 1)[1]
        OPTIMIZERS.setdefault(f"torch.optim.{_class.lower()}.{_class}", _state)
OPTIMIZERS["torch.optim.sparse_adam.SparseAdam"] = OPTIMIZERS["torch.optim.SparseAdam"]
OPTIMIZERS["torch.optim._adafactor.Adafactor"] = OPTIMIZERS["torch.optim.Adafactor"]

# The lighter alternatives messages suggest, with their state per parameter.
ALTERNATIVES: tuple[tuple[str, float], ...] = (
    ("SGD with momentum", 4),
    ("torch.optim.Adafactor (factored second moment)", 0.01),
    ("8-bit AdamW from bitsandbytes", 2),
)


def lookup(qualified: Optional[str]) -> Optional[OptimizerState]:
    return OPTIMIZERS.get(qualified or "")


def state_bytes_per_param(qualified: str, *, momentum: bool = False, amsgrad: bool = False) -> Optional[float]:
    """Persistent optimizer state per parameter in bytes, or None for an optimizer not in the table."""
    state = lookup(qualified)
    if state is None:
        return None
    return state.bytes_per_param + (state.momentum_bytes if momentum else 0) + (state.amsgrad_bytes if amsgrad else 0)


def training_bytes_per_param(state_bytes: float) -> float:
    """Weights + gradients + optimizer state, per fp32 parameter."""
    return WEIGHT_BYTES + GRADIENT_BYTES + state_bytes


# Functions of libraries that return a ready optimizer.
OPTIMIZER_FACTORIES = frozenset(
    {
        "timm.optim.create_optimizer",
        "timm.optim.create_optimizer_v2",
        "timm.optim.optim_factory.create_optimizer",
        "timm.optim.optim_factory.create_optimizer_v2",
        "transformers.optimization.create_optimizer",
        "transformers.create_optimizer",
    }
)

# The words a file that builds an optimizer names (the callee's own name: `Adafactor` imported from
# transformers, `create_optimizer_v2` from timm; `optim` and `optimizers`, the packages whose classes
# builds_optimizer takes); a screen asking "does the file train?" reads them.
OPTIMIZER_WORDS = frozenset(qualified.rpartition(".")[2] for qualified in (*OPTIMIZERS, *OPTIMIZER_FACTORIES)) | {"optim", "optimizers"}


def builds_optimizer(qualified: Optional[str]) -> bool:
    """Does a call of `qualified` (a callee resolved through the imports) return an optimizer?  The one
    test of construction: ML010 (the file trains), optimizer_bindings and the summaries (a `.step()`
    on what it built), ML005 (before its guess at an optimizer it has no state figure for)."""
    if not qualified:
        return False
    if qualified in OPTIMIZERS or qualified in OPTIMIZER_FACTORIES:
        return True
    package, _, name = qualified.rpartition(".")
    if not any(package == p or package.startswith(p + ".") for p in _OPTIMIZER_PACKAGES) or not name[:1].isupper():
        return False
    # `torch.optim.sgd.SGD` is one; a learning-rate scheduler, SWA's averaged model and the base class are not
    return package not in _NOT_OPTIMIZER_MODULES and name != "Optimizer"


# Packages every public class of which is an optimizer (apex's FusedAdam, FusedLAMB, FusedSGD),
# beside the modules of torch.optim that hold something else.
_OPTIMIZER_PACKAGES = ("torch.optim", "apex.optimizers")
_NOT_OPTIMIZER_MODULES = frozenset({"torch.optim.lr_scheduler", "torch.optim.swa_utils"})
