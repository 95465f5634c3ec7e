"""One training step — forward, loss, backward, optimizer step, zero_grad — measured by the
storage tracker on fake tensors (nothing allocated: the estimate) or for real
(the check).

The optimizer's state, which torch creates lazily in the first step, is created before the
measured step, so that step is the steady state (state present from the forward pass on).
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Sequence

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "Failed to initialize NumPy" when numpy is absent
    import torch
    from torch import nn
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    from torch.utils._pytree import tree_flatten
    from torch.utils.checkpoint import checkpoint

from memlint.confirm.tracker import StorageTracker
from memlint.estimate.optimizer_sim import make_optimizer

CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations", "temporaries")
DTYPES = ("float32", "bf16-autocast", "fp16-autocast", "bf16")
INPUT_DTYPES = {"float32": torch.float32, "int64": torch.int64}


class SimulationError(Exception):
    """The model or the step could not be simulated; the message says where."""


@dataclass(frozen=True)
class StepConfig:
    input_shapes: tuple[tuple[int, ...], ...]
    input_dtype: str = "float32"
    optimizer: str = "adam"
    dtype: str = "float32"
    checkpoint_blocks: bool = False
    accumulation_steps: int = 1  # micro-batches per optimizer step (the batch dimension is split)
    vocabulary: int = 2  # upper bound (exclusive) for int64 inputs (token ids)


@dataclass
class StepEstimate:
    params: int
    peak_bytes: int
    breakdown: dict = field(default_factory=dict)
    note: str = ""
    # for re-using this step with another optimizer (see `with_optimizer`)
    forward_backward_peak: int = 0  # the peak before the optimizer step, its state included
    state_bytes: int = 0  # persistent optimizer state


class _Checkpointed(nn.Module):
    """Runs a block under non-reentrant activation checkpointing."""

    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, *args, **kwargs):
        return checkpoint(self.block, *args, use_reentrant=False, **kwargs)


def top_level_blocks(model: nn.Module) -> Optional[nn.Module]:
    """The repeated blocks to checkpoint: the ModuleList/Sequential holding most parameters."""
    best, best_params = None, 0
    for module in model.modules():
        if isinstance(module, (nn.ModuleList, nn.Sequential)) and len(module) >= 2:
            count = sum(p.numel() for p in module.parameters())
            if count > best_params:
                best, best_params = module, count
    return best


def checkpoint_blocks(model: nn.Module) -> int:
    container = top_level_blocks(model)
    if container is None:
        return 0
    for index in range(len(container)):
        if any(True for _ in container[index].parameters()):
            container[index] = _Checkpointed(container[index])
    return len(container)


def default_loss(output) -> torch.Tensor:
    """The mean of the model's first floating-point output."""
    for value in tree_flatten(output)[0]:
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.float().mean()
    logits = getattr(output, "logits", None)  # transformers' ModelOutput
    if isinstance(logits, torch.Tensor):
        return logits.float().mean()
    raise SimulationError("the model's output holds no floating-point tensor to take a loss from")


def _inputs(config: StepConfig, micro: int) -> list[torch.Tensor]:
    tensors = []
    for shape in config.input_shapes:
        if shape and config.accumulation_steps > 1:
            shape = (max(1, shape[0] // config.accumulation_steps), *shape[1:])
        if config.input_dtype == "int64":
            tensors.append(torch.randint(0, config.vocabulary, shape))
        else:
            dtype = torch.bfloat16 if config.dtype == "bf16" else torch.float32
            tensors.append(torch.randn(shape, dtype=dtype))
    return tensors


def _autocast(config: StepConfig):
    if config.dtype == "bf16-autocast":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    if config.dtype == "fp16-autocast":
        return torch.autocast("cpu", dtype=torch.float16)
    return contextlib.nullcontext()


def _backend(fake: bool):
    """Fake CPU tensors allocate nothing yet dispatch like CPU tensors (the same attention kernel,
    autocast applies). The meta device would be faster, but picks other kernels: it overestimated
    a transformer block by 15%."""
    return FakeTensorMode(shape_env=ShapeEnv()) if fake else contextlib.nullcontext()


@contextlib.contextmanager
def _quiet_fake_tensor_log():
    """A failing operator is reported as SimulationError; torch would also log its traceback."""
    logger = logging.getLogger("torch._subclasses.fake_tensor")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def simulate(
    factory: Callable[[], nn.Module],
    config: StepConfig,
    *,
    loss_fn: Optional[Callable] = None,
    fake: bool = True,
    steps: int = 1,
) -> StepEstimate:
    """Peak tensor bytes of `steps` training steps of `factory()` and what they are made of."""
    loss_fn = loss_fn or default_loss
    with _backend(fake), warnings.catch_warnings(), _quiet_fake_tensor_log():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        try:
            model = factory()
        except Exception as error:
            raise SimulationError(f"building the model failed: {type(error).__name__}: {error}") from error
        if not isinstance(model, nn.Module):
            raise SimulationError(f"the factory returned {type(model).__name__}, not a torch.nn.Module")
        if config.dtype == "bf16":
            model = model.to(torch.bfloat16)
        note = ""
        if config.checkpoint_blocks and not checkpoint_blocks(model):
            note = "no repeated blocks (ModuleList/Sequential) to checkpoint"
        model.train()
        params = [p for p in model.parameters() if p.requires_grad]
        optimizer = make_optimizer(config.optimizer, params)
        try:
            _create_optimizer_state(params, optimizer)
        except Exception as error:
            raise SimulationError(f"the optimizer step failed: {type(error).__name__}: {error}") from error
        tracker = StorageTracker(snapshot_peak=True)
        tracker.track([model], "parameters")
        before_state = tracker.usage.live
        tracker.track(_state_tensors(optimizer), "optimizer_state")
        state_bytes = tracker.usage.live - before_state
        forward_backward_peak = 0
        try:
            with tracker:
                for _ in range(steps):
                    for micro in range(config.accumulation_steps):
                        tracker.category = "activations"
                        batch = _inputs(config, micro)
                        with _autocast(config):
                            loss = loss_fn(model(*batch))
                        tracker.category = "temporaries"
                        if config.accumulation_steps > 1:
                            loss = loss / config.accumulation_steps
                        loss.backward()
                        del loss, batch
                        tracker.mark((p.grad for p in params if p.grad is not None), "gradients")
                    forward_backward_peak = max(forward_backward_peak, tracker.usage.peak)
                    optimizer.step()
                    tracker.mark(_state_tensors(optimizer), "optimizer_state")
                    optimizer.zero_grad(set_to_none=True)
        except SimulationError:
            raise
        except Exception as error:
            raise SimulationError(f"the training step failed: {type(error).__name__}: {error}") from error
    return StepEstimate(
        params=sum(p.numel() for p in model.parameters()),
        peak_bytes=tracker.usage.peak,
        breakdown=_breakdown(tracker.peak_by_role()),
        note=note,
        forward_backward_peak=forward_backward_peak,
        state_bytes=state_bytes,
    )


def with_optimizer(factory, config: StepConfig, base: StepEstimate, optimizer_name: str) -> StepEstimate:
    """The same step with another optimizer, without simulating forward and backward again: they
    do not depend on the optimizer, except through the state that is resident meanwhile. The peak
    is the larger of the base forward/backward peak with the other state, and the other optimizer's
    step (weights, gradients, state and its temporaries)."""
    with _backend(True), warnings.catch_warnings(), _quiet_fake_tensor_log():
        warnings.simplefilter("ignore")
        model = factory()
        if config.dtype == "bf16":
            model = model.to(torch.bfloat16)
        params = [p for p in model.parameters() if p.requires_grad]
        optimizer = make_optimizer(optimizer_name, params)
        try:
            _create_optimizer_state(params, optimizer)
            tracker = StorageTracker()
            tracker.track([model], "parameters")
            before_state = tracker.usage.live
            tracker.track(_state_tensors(optimizer), "optimizer_state")
            state_bytes = tracker.usage.live - before_state
            with tracker:
                for p in params:
                    p.grad = torch.zeros_like(p)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
        except Exception as error:
            raise SimulationError(f"the optimizer step failed: {type(error).__name__}: {error}") from error
    peak = max(base.forward_backward_peak - base.state_bytes + state_bytes, tracker.usage.peak)
    return StepEstimate(params=base.params, peak_bytes=peak, state_bytes=state_bytes)


def _state_tensors(optimizer) -> list:
    return [v for state in optimizer.state.values() for v in state.values() if isinstance(v, torch.Tensor)]


def _create_optimizer_state(params: list, optimizer) -> None:
    """Optimizers create their state lazily in the first step; create it before measuring (with
    zero gradients), so the measured step is the steady state: state present from the forward on."""
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def _breakdown(by_role: dict) -> dict:
    """Bytes live at the peak in the five categories (whatever was not marked is a temporary)."""
    totals = dict.fromkeys(CATEGORIES, 0)
    for kind, nbytes in by_role.items():
        totals[kind if kind in totals else "temporaries"] += nbytes
    return totals


WHAT_IF: tuple[tuple[str, dict], ...] = (
    ("SGD with momentum", {"optimizer": "sgd-momentum"}),
    ("Adafactor", {"optimizer": "adafactor"}),
    ("8-bit AdamW", {"optimizer": "adamw-8bit"}),
    ("bf16 autocast", {"dtype": "bf16-autocast"}),
    ("gradient checkpointing of the top-level blocks", {"checkpoint_blocks": True}),
    ("half the batch, 2-step gradient accumulation", {"accumulation_steps": 2}),
)


def what_if(
    factory, config: StepConfig, *, loss_fn=None, base: Optional[StepEstimate] = None
) -> list[tuple[str, Optional[StepEstimate], str]]:
    """The same step with each technique applied (skipping those already in use). With the `base`
    estimate, another optimizer is costed without simulating forward and backward again."""
    results = []
    for change, fields in WHAT_IF:
        if all(getattr(config, k) == v for k, v in fields.items()):
            continue
        if "accumulation_steps" in fields and not any(s and s[0] >= 2 for s in config.input_shapes):
            continue
        try:
            if base is not None and list(fields) == ["optimizer"] and config.accumulation_steps == 1:
                results.append((change, with_optimizer(factory, config, base, fields["optimizer"]), ""))
                continue
            results.append((change, simulate(factory, replace(config, **fields), loss_fn=loss_fn), ""))
        except SimulationError as error:
            results.append((change, None, str(error)))
    return results


def sequence_of_shapes(values: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """`("32,3,224,224",)` -> ((32, 3, 224, 224),); ValueError with the bad value named."""
    shapes = []
    for value in values:
        try:
            shape = tuple(int(part) for part in value.split(",") if part.strip())
        except ValueError:
            raise ValueError(f"--input-shape {value!r}: expected comma-separated integers such as 32,3,224,224") from None
        if not shape or any(d <= 0 for d in shape):
            raise ValueError(f"--input-shape {value!r}: expected positive sizes such as 32,3,224,224")
        shapes.append(shape)
    return tuple(shapes)
