"""One training step — forward, loss, backward, optimizer step, zero_grad — measured by the
storage tracker on fake tensors (nothing allocated: the estimate) or for real
(the check).

The optimizer's state, which torch creates lazily in the first step, is created before the
measured step, so that step is the steady state (state present from the forward pass on).
"""

from __future__ import annotations

import contextlib
import logging
import re
import traceback
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional, Sequence

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "Failed to initialize NumPy" when numpy is absent
    import torch
    from torch import nn
    from torch._subclasses.fake_tensor import (
        DataDependentOutputException,
        DynamicOutputShapeException,
        FakeTensor,
        FakeTensorMode,
        UnsupportedOperatorException,
    )
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv
    from torch.nn.modules.module import register_module_buffer_registration_hook, register_module_parameter_registration_hook
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

from memlint.confirm.tracker import StorageTracker
from memlint.estimate.checkpointing import checkpoint_blocks, describe
from memlint.estimate.eager import EagerLinear
from memlint.estimate.kernels import KernelScratch
from memlint.estimate.optimizer_sim import make_optimizer
from memlint.estimate.rejects import RealDtypeChecks
from memlint.estimate.timeline import RESIDENT

CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations", "temporaries")
DTYPES = ("float32", "bf16-autocast", "fp16-autocast", "bf16")
INPUT_DTYPES = {"float32": torch.float32, "int64": torch.int64}
# How the step is written (`--step`): what the caller's variables keep alive.
STEPS = {
    "loop": "the model output, the loss and the batch stay alive through backward and the optimizer step, "
    "into the next step's forward, as in `for x in loader: out = model(x); loss = f(out); loss.backward(); opt.step()`",
    "lean": "the model output is freed before backward and the batch after it, as in `f(model(x)).backward()` "
    "with `del x` before `opt.step()`",
}


class SimulationError(Exception):
    """The model or the step could not be simulated; the message says where."""


@dataclass(frozen=True)
class StepConfig:
    input_shapes: tuple[tuple[int, ...], ...]
    input_dtypes: tuple[str, ...] = ("float32",)  # one per input, or one for all
    optimizer: str = "adam"
    dtype: str = "float32"
    checkpoint_blocks: bool = False
    accumulation_steps: int = 1  # micro-batches per optimizer step (the batch dimension is split)
    vocabulary: int = 2  # upper bound (exclusive) for int64 inputs (token ids)
    step: str = "loop"  # see STEPS

    def input_dtype(self, index: int) -> str:
        return self.input_dtypes[0] if len(self.input_dtypes) == 1 else self.input_dtypes[index]


@dataclass
class StepEstimate:
    params: int
    peak_bytes: int
    breakdown: dict = field(default_factory=dict)
    note: str = ""
    # for re-using this step with another optimizer (see `with_optimizer`)
    forward_backward_peak: int = 0  # the peak before the optimizer step, its state included
    state_bytes: int = 0  # persistent optimizer state
    peak_phase: str = ""  # where the peak was reached: "forward pass", "backward pass", ...
    forward_only: bool = False  # no trainable parameters: only the forward pass was simulated
    carried_bytes: int = 0  # the output, loss and batch alive through the optimizer step (--step loop)
    measured: list = field(default_factory=list)  # memory measured on a real kernel (kernels.py)
    unsimulated: list = field(default_factory=list)  # memory known to be missing from the figure
    timeline: Optional[dict] = None  # live bytes by kind through the step (memlint.estimate.timeline), on request


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
    for index, shape in enumerate(config.input_shapes):
        if shape and config.accumulation_steps > 1:
            shape = (max(1, shape[0] // config.accumulation_steps), *shape[1:])
        if config.input_dtype(index) == "int64":
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


def _fake_mode() -> FakeTensorMode:
    """Fake CPU tensors allocate nothing yet dispatch like CPU tensors (the same attention kernel,
    autocast applies). The meta device would be faster, but picks other kernels: it overestimated
    a transformer block by 15%.

    `Tensor.__deepcopy__` deep-copies a tensor's `__dict__`, and a fake tensor's holds its mode: so
    `copy.deepcopy(module)` (what `nn.TransformerEncoder` does with its layer, and EMA or teacher
    copies) would make tensors of a second fake mode that cannot meet the first ("Mixing fake modes
    NYI"). The mode copies as itself. Tensors made outside it (a module-level constant, a mask kept
    as a plain attribute) are converted when an operator meets them."""
    mode = FakeTensorMode(shape_env=ShapeEnv(), allow_non_fake_inputs=True)
    mode.__deepcopy__ = lambda memo: mode  # copy.deepcopy looks the hook up on the instance
    return mode


@contextlib.contextmanager
def _fake_parameters(mode: Optional[FakeTensorMode]):
    """While the factory runs, for real, every parameter and buffer becomes a fake tensor as it is
    registered on its module, so the model never exists in real memory (an `empty` parameter is
    never touched; the largest one is the most that is ever allocated). Running the factory for
    real rather than under the fake mode lets model code compute with small tensors at
    construction: timm's `[x.item() for x in torch.linspace(0, drop_path_rate, depth)]` and the
    `if rate > 0.0` after it cannot run on fake values."""
    if mode is None:
        yield
        return

    def to_fake(module, name, value):
        if value is None or isinstance(value, FakeTensor):
            return None  # unchanged (a tied weight registered again is fake already)
        return mode.from_tensor(value, static_shapes=True)

    handles = [register_module_parameter_registration_hook(to_fake), register_module_buffer_registration_hook(to_fake)]
    try:
        with _ZeroValuedFakes():
            yield
    finally:
        for handle in handles:
            handle.remove()


class _ZeroValuedFakes(TorchDispatchMode):
    """While the model is built, a value read from a fake parameter (`bool(mask.any())` in torch's
    own `trunc_normal_`, which redraws until no value is out of range) reads as zero: the values of
    parameters do not change the memory of a step, and a fake tensor has none."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in _SCALAR_READS and args and isinstance(args[0], FakeTensor):
            return False if func is _IS_NONZERO or args[0].dtype == torch.bool else 0 if not args[0].is_floating_point() else 0.0
        return func(*args, **(kwargs or {}))


_IS_NONZERO = torch.ops.aten.is_nonzero.default
_SCALAR_READS = (torch.ops.aten._local_scalar_dense.default, _IS_NONZERO)


def _fake_leftovers(model: nn.Module, mode: FakeTensorMode) -> None:
    """Parameters and buffers put in place without registration (`module._parameters[name] = p`,
    reassigning a registered buffer) are converted after the factory returns."""
    for module in model.modules():
        for table in (module._parameters, module._buffers):
            for name, value in table.items():
                if value is not None and not isinstance(value, FakeTensor):
                    table[name] = mode.from_tensor(value, static_shapes=True)


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


_VALUE_DEPENDENT = (DataDependentOutputException, DynamicOutputShapeException, GuardOnDataDependentSymNode)


_LIBRARIES = (str(Path(torch.__file__).parent), str(Path(__file__).resolve().parent.parent), contextlib.__file__.rsplit("/", 1)[0])


def _user_frame(error: BaseException) -> str:
    """" (at model.py:12)": the innermost frame of the failing code outside torch and memlint."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(_LIBRARIES)]
    return f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""


def _explain(stage: str, error: BaseException, hint: str = "") -> SimulationError:
    where = _user_frame(error)
    if isinstance(error, _VALUE_DEPENDENT):
        text = " ".join(str(error).split())
        caused = re.search(r"Caused by: \(([^)]*)\)", str(error))
        detail = type(error).__name__ + where if where else f"{type(error).__name__} at {caused.group(1)}" if caused else f"{type(error).__name__}: {text[:160]}"
        message = (
            f"{stage} failed: it depends on the values in tensors ({detail.replace(' (at', ',').rstrip(')')}), which a "
            "simulation without data cannot follow (.item(), .tolist(), nonzero(), a Python `if` on a tensor)"
        )
    elif isinstance(error, UnsupportedOperatorException):
        message = f"{stage} failed: the operator {error.func} cannot run on fake tensors (it has no fake implementation){where}"
    else:
        message = f"{stage} failed: {type(error).__name__}: {error}{where}"
    return SimulationError(message + (f"; {hint}" if hint else ""))


@contextlib.contextmanager
def _stage(name: str, hint: Callable[[Exception], str] = lambda error: ""):
    """Errors inside become a SimulationError that names the stage that really failed."""
    try:
        yield
    except SimulationError:
        raise
    except (Exception, SystemExit) as error:  # model code calling sys.exit() is a failure too
        raise _explain(name, error, hint(error)) from error


def _input_hint(model: nn.Module, config: StepConfig) -> Callable[[Exception], str]:
    """A forward that fails on float inputs while the model embeds tokens wants int64 inputs."""

    def hint(error: Exception) -> str:
        text = str(error)
        embeds = any(isinstance(m, (nn.Embedding, nn.EmbeddingBag)) for m in model.modules())
        if "int64" not in config.input_dtypes and (embeds or "indices" in text or "Long" in text):
            return "if the model takes token ids, pass --input-dtype int64 and --vocab-size (the vocabulary size)"
        return ""

    return hint


def build_model(factory: Callable[[], nn.Module], config: StepConfig, mode: Optional[FakeTensorMode]) -> nn.Module:
    """Call the factory (its parameters and buffers made fake when there is a fake mode) and apply the dtype."""
    with _stage("building the model"), _fake_parameters(mode):
        model = factory()
    if not isinstance(model, nn.Module):
        raise SimulationError(f"the factory returned {type(model).__name__}, not a torch.nn.Module")
    if mode is not None:
        _fake_leftovers(model, mode)
    if config.dtype == "bf16":
        with _stage("converting the model to bf16"):
            model = model.to(torch.bfloat16)
    return model


def caveats(model: nn.Module) -> list[str]:
    """Memory a CUDA run has that this CPU-kernel simulation cannot show, by what the model holds."""
    found = []
    if any(isinstance(m, nn.RNNBase) for m in model.modules()):
        found.append("on CUDA, cuDNN's RNN reserve space and workspace (nn.LSTM, nn.GRU, nn.RNN) are not simulated")
    return found


def simulate(
    factory: Callable[[], nn.Module],
    config: StepConfig,
    *,
    loss_fn: Optional[Callable] = None,
    fake: bool = True,
    steps: int = 1,
    timeline: bool = False,
) -> StepEstimate:
    """Peak tensor bytes of `steps` training steps of `factory()` and what they are made of."""
    loss_fn = loss_fn or default_loss
    kernels = KernelScratch() if fake else None
    mode = _fake_mode() if fake else None
    with warnings.catch_warnings(), _quiet_fake_tensor_log():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        model = build_model(factory, config, mode)
    with mode if mode is not None else contextlib.nullcontext(), warnings.catch_warnings(), _quiet_fake_tensor_log():
        warnings.simplefilter("ignore")
        note = ""
        if config.checkpoint_blocks:
            blocks = checkpoint_blocks(model)
            note = f"checkpoints {describe(blocks)}" if blocks else "no repeated blocks to checkpoint"
        model.train()
        params = [p for p in model.parameters() if p.requires_grad]
        forward_hint = _input_hint(model, config)
        if not params:
            return _forward_only(model, config, kernels, forward_hint, timeline)
        with _stage("creating the optimizer"):
            optimizer = make_optimizer(config.optimizer, params)
        with _stage("creating the optimizer's state (a first step on zero gradients)"):
            _create_optimizer_state(params, optimizer)
        eager = EagerLinear()
        tracker = StorageTracker(snapshot_peak=True, kernels=kernels, in_place_of=eager.in_place_of, events=timeline)
        tracker.phase = RESIDENT
        tracker.track([model], "parameters")
        before_state = tracker.usage.live
        tracker.track(_state_tensors(optimizer), "optimizer_state")
        state_bytes = tracker.usage.live - before_state
        forward_backward_peak = carried_bytes = 0
        loop = config.step == "loop"
        with tracker, eager, RealDtypeChecks():
            # as a loop: the second step starts with the first one's output, loss and batch alive
            for _ in range(max(steps, 2) if loop else steps):
                for micro in range(config.accumulation_steps):
                    tracker.category, tracker.phase = "activations", "forward pass"
                    batch = _inputs(config, micro)
                    with _stage("the forward pass", forward_hint), _autocast(config):
                        output = model(*batch)
                    with _stage("the loss"), _autocast(config):
                        loss = loss_fn(output)
                        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
                            raise SimulationError("the loss is not a one-element tensor (pass --loss PATH.py:FN)")
                    if not loop:
                        del output
                    tracker.category, tracker.phase = "temporaries", "backward pass"
                    with _stage("the backward pass"):
                        if config.accumulation_steps > 1:
                            loss = loss / config.accumulation_steps
                        if not loss.requires_grad:
                            raise SimulationError("the loss does not depend on any trainable parameter")
                        loss.backward()
                    if not loop:
                        del loss, batch
                    tracker.mark((p.grad for p in params if p.grad is not None), "gradients")
                forward_backward_peak = max(forward_backward_peak, tracker.usage.window_peak)
                if loop:
                    carried_bytes = _storage_bytes([output, loss, batch])
                tracker.phase = "optimizer step"
                with _stage("the optimizer step"):
                    optimizer.step()
                tracker.mark(_state_tensors(optimizer), "optimizer_state")
                tracker.phase = "zero_grad"
                with _stage("zero_grad"):
                    optimizer.zero_grad(set_to_none=True)
                tracker.reset_window()  # the next forward and backward are measured apart from this step
    return StepEstimate(
        params=sum(p.numel() for p in model.parameters()),
        peak_bytes=tracker.usage.peak,
        breakdown=_breakdown(tracker.peak_by_role()),
        note=note,
        forward_backward_peak=forward_backward_peak,
        state_bytes=state_bytes,
        carried_bytes=carried_bytes,
        timeline=_timeline(tracker),
        peak_phase=tracker.usage.peak_phase,
        measured=list(kernels.notes) if kernels else [],
        unsimulated=caveats(model) + (list(kernels.unsimulated) if kernels else []),
    )


def _timeline(tracker: StorageTracker) -> Optional[dict]:
    from memlint.estimate.timeline import build

    return build(tracker.events) if tracker.events is not None else None


def _forward_only(model: nn.Module, config: StepConfig, kernels, hint, timeline: bool = False) -> StepEstimate:
    """A model without trainable parameters has no backward and no optimizer step: its forward."""
    eager = EagerLinear()
    tracker = StorageTracker(snapshot_peak=True, kernels=kernels, in_place_of=eager.in_place_of, events=timeline)
    tracker.phase = RESIDENT
    tracker.track([model], "parameters")
    with tracker, eager, RealDtypeChecks():
        tracker.category, tracker.phase = "activations", "forward pass"
        for _ in range(2 if config.step == "loop" else 1):  # a loop keeps the last output into the next forward
            batch = _inputs(config, 0)
            with _stage("the forward pass", hint), _autocast(config):
                output = model(*batch)
        del output, batch
    return StepEstimate(
        params=sum(p.numel() for p in model.parameters()),
        peak_bytes=tracker.usage.peak,
        breakdown=_breakdown(tracker.peak_by_role()),
        note="the model has no trainable parameters: this is its forward pass alone (no backward, no optimizer step)",
        peak_phase=tracker.usage.peak_phase,
        forward_only=True,
        timeline=_timeline(tracker),
        measured=list(kernels.notes) if kernels else [],
        unsimulated=caveats(model) + (list(kernels.unsimulated) if kernels else []),
    )


def with_optimizer(factory, config: StepConfig, base: StepEstimate, optimizer_name: str) -> StepEstimate:
    """The same step with another optimizer, without simulating forward and backward again: they
    do not depend on the optimizer, except through the state that is resident meanwhile. The peak
    is the larger of the base forward/backward peak with the other state, and the other optimizer's
    step (weights, gradients, state and its temporaries)."""
    mode = _fake_mode()
    with warnings.catch_warnings(), _quiet_fake_tensor_log():
        warnings.simplefilter("ignore")
        model = build_model(factory, config, mode)
    with mode, warnings.catch_warnings(), _quiet_fake_tensor_log():
        warnings.simplefilter("ignore")
        params = [p for p in model.parameters() if p.requires_grad]
        with _stage("creating the optimizer"):
            optimizer = make_optimizer(optimizer_name, params)
        with _stage("creating the optimizer's state (a first step on zero gradients)"):
            _create_optimizer_state(params, optimizer)
        tracker = StorageTracker()
        tracker.track([model], "parameters")
        before_state = tracker.usage.live
        tracker.track(_state_tensors(optimizer), "optimizer_state")
        state_bytes = tracker.usage.live - before_state
        with tracker, _stage("the optimizer step"):
            for p in params:
                p.grad = torch.zeros_like(p)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    peak = max(base.forward_backward_peak - base.state_bytes + state_bytes, tracker.usage.peak + base.carried_bytes)
    return StepEstimate(params=base.params, peak_bytes=peak, state_bytes=state_bytes, carried_bytes=base.carried_bytes)


def _storage_bytes(values) -> int:
    """Bytes of the distinct storages of the tensors in `values` (nested tuples, lists, dicts)."""
    seen = {}
    for value in tree_flatten(values)[0]:
        if isinstance(value, torch.Tensor):
            seen[StorageTracker.key(value)] = value.untyped_storage().nbytes()
    return sum(seen.values())


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
    ("gradient checkpointing of every repeated block", {"checkpoint_blocks": True}),
    ("half the batch, 2-step gradient accumulation", {"accumulation_steps": 2}),
)


def what_if(
    factory, config: StepConfig, *, loss_fn=None, base: Optional[StepEstimate] = None, progress: Callable[[str], None] = lambda _: None
) -> list[tuple[str, Optional[StepEstimate], str]]:
    """The same step with each technique applied (skipping those already in use). With the `base`
    estimate, another optimizer is costed without simulating forward and backward again."""
    results = []
    if base is not None and base.forward_only:
        return results  # no backward, no optimizer: none of the techniques applies
    for change, fields in WHAT_IF:
        if all(getattr(config, k) == v for k, v in fields.items()):
            continue
        if "accumulation_steps" in fields and not any(s and s[0] >= 2 for s in config.input_shapes):
            continue
        progress(f"what if: {change}")
        try:
            if base is not None and list(fields) == ["optimizer"] and config.accumulation_steps == 1:
                results.append((change, with_optimizer(factory, config, base, fields["optimizer"]), ""))
                continue
            estimate = simulate(factory, replace(config, **fields), loss_fn=loss_fn)
            if "checkpoint_blocks" in fields and base is not None and estimate.peak_bytes >= base.peak_bytes:
                why = "the peak is in the optimizer step" if base.peak_phase == "optimizer step" else ""
                estimate.note = "; ".join(filter(None, [estimate.note, "saves nothing here" + (f": {why}" if why else "")]))
            missing = [text for text in estimate.unsimulated if base is None or text not in base.unsimulated]
            if missing:
                estimate.note = "; ".join(filter(None, [estimate.note, "not simulated: " + "; ".join(missing)]))
            results.append((change, estimate, ""))
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
