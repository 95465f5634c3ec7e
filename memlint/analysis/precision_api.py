"""Tables about numeric precision and PyTorch's mixed-precision API (data, in the TorchFix manner),
and small questions about dtype expressions that several rules ask."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.tables import ADAM_CLASSES, RETAIN_GRAPH_KEYWORDS

if TYPE_CHECKING:
    from memlint.analysis.context import Context

AUTOCAST = frozenset(
    {
        "torch.autocast",
        "torch.amp.autocast",
        "torch.amp.autocast_mode.autocast",
        "torch.cuda.amp.autocast",
        "torch.cuda.amp.autocast_mode.autocast",
        "torch.cpu.amp.autocast",
        "torch.cpu.amp.autocast_mode.autocast",
    }
)
GRAD_SCALERS = frozenset(
    {
        "torch.amp.GradScaler",
        "torch.amp.grad_scaler.GradScaler",
        "torch.cuda.amp.GradScaler",
        "torch.cuda.amp.grad_scaler.GradScaler",
        "torch.cpu.amp.GradScaler",
        "torch.cpu.amp.grad_scaler.GradScaler",
    }
)

# Deprecated spellings -> (replacement under torch.amp, device argument, old positional parameters).
# The old constructors take their options in a different positional order from torch.amp.autocast, so
# positional arguments are rewritten as keywords.
DEPRECATED_AMP: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "torch.cuda.amp.autocast": ("autocast", "cuda", ("enabled", "dtype", "cache_enabled")),
    "torch.cuda.amp.autocast_mode.autocast": ("autocast", "cuda", ("enabled", "dtype", "cache_enabled")),
    "torch.cpu.amp.autocast": ("autocast", "cpu", ("enabled", "dtype", "cache_enabled")),
    "torch.cpu.amp.autocast_mode.autocast": ("autocast", "cpu", ("enabled", "dtype", "cache_enabled")),
    "torch.cuda.amp.GradScaler": (
        "GradScaler", "cuda", ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
    ),
    "torch.cuda.amp.grad_scaler.GradScaler": (
        "GradScaler", "cuda", ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
    ),
    "torch.cpu.amp.GradScaler": (
        "GradScaler", "cpu", ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
    ),
    "torch.cpu.amp.grad_scaler.GradScaler": (
        "GradScaler", "cpu", ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
    ),
}  # fmt: skip

# Wrappers that keep float32 master weights for a float16 model (apex's `fp16_utils`, its `amp`, and
# the copies of them that projects vendor, Megatron's and fairseq's among them): the optimizer steps
# float32 copies of the weights and scales the loss, so a `.half()` model under one of them is mixed
# precision, not pure half. Matched by the wrapper's own name, since the copies live in the projects.
MASTER_WEIGHT_WRAPPERS = frozenset(
    {"FP16_Optimizer", "FP16_Module", "network_to_half", "prep_param_lists", "master_params_to_model_params",
     "FP16Optimizer", "MemoryEfficientFP16Optimizer", "Float16OptimizerWithFloat16Params"}
)  # fmt: skip
MASTER_WEIGHT_MODULES = ("apex.amp.", "apex.fp16_utils.")
# The calls of apex's modules that change precision: amp's set-up and its scaled loss, fp16_utils'
# master-weight optimizer and its conversions of a network to half.
APEX_PRECISION_CALLS = frozenset(
    {"initialize", "scale_loss", "FP16_Optimizer", "network_to_half", "convert_network", "BN_convert_float"}
)
# Objects of a framework whose `.autocast()` is torch's autocast in the precision they were built with.
AUTOCAST_FRAMEWORKS = frozenset(
    {"accelerate.Accelerator", "accelerate.accelerator.Accelerator", "lightning.Fabric", "lightning.fabric.Fabric",
     "lightning_fabric.Fabric", "lightning.fabric.fabric.Fabric"}
)  # fmt: skip


# Optimizers that keep two moment estimates per parameter (and divide by sqrt(v) + eps).
ADAM_FAMILY = frozenset(
    f"torch.optim.{name}" for name in ADAM_CLASSES
) | frozenset(f"torch.optim.{module}.{name}" for module, name in (
    ("adam", "Adam"), ("adamw", "AdamW"), ("nadam", "NAdam"), ("radam", "RAdam"), ("adamax", "Adamax"),
))  # fmt: skip

FLOAT64_DTYPES = frozenset({"torch.float64", "torch.double"})
FLOAT16_DTYPES = frozenset({"torch.float16", "torch.half"})
LOW_PRECISION_DTYPES = FLOAT16_DTYPES | frozenset({"torch.bfloat16"})

# Tensor / module methods that cast to a dtype.
FLOAT64_METHODS = frozenset({"double"})
FLOAT16_METHODS = frozenset({"half"})
# The legacy tensor types (`x.type(torch.DoubleTensor)`, `torch.set_default_tensor_type("torch.DoubleTensor")`)
# and the dtype each stands for.
LEGACY_TENSOR_TYPES = {
    "torch.DoubleTensor": "torch.float64", "torch.cuda.DoubleTensor": "torch.float64",
    "torch.HalfTensor": "torch.float16", "torch.cuda.HalfTensor": "torch.float16",
    "torch.BFloat16Tensor": "torch.bfloat16", "torch.cuda.BFloat16Tensor": "torch.bfloat16",
    "torch.FloatTensor": "torch.float32", "torch.cuda.FloatTensor": "torch.float32",
}  # fmt: skip


def dtype_of(expr: cst.BaseExpression, ctx: "Context") -> Optional[str]:
    """`torch.float64` -> "torch.float64" (through imports); anything else -> None."""
    qualified = ctx.resolve(expr)
    if qualified is not None and qualified.startswith("torch."):
        return qualified
    return None


def cast_target(call: cst.Call, ctx: "Context") -> Optional[str]:
    """The dtype a `.double()` / `.half()` / `.to(torch.float64)` / `.to(dtype=...)` / `.type(...)` call
    casts its receiver to, as a qualified torch dtype; None when it is not such a cast."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    if method in FLOAT64_METHODS and not call.args:
        return "torch.float64"
    if method in FLOAT16_METHODS and not call.args:
        return "torch.float16"
    if method == "bfloat16" and not call.args:
        return "torch.bfloat16"
    if method in ("to", "type"):
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value == "dtype":
                dtype = dtype_of(arg.value, ctx) if method == "to" else tensor_type_dtype(arg.value, ctx)
                if dtype in FLOAT64_DTYPES | LOW_PRECISION_DTYPES:
                    return dtype
    return None


def tensor_type_dtype(expr: cst.BaseExpression, ctx: "Context") -> Optional[str]:
    """The dtype a dtype or a legacy tensor type names: `torch.float64`, `torch.DoubleTensor`,
    `"torch.cuda.DoubleTensor"` -> "torch.float64"; anything else -> None."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return LEGACY_TENSOR_TYPES.get(value) if isinstance(value, str) else None
    qualified = dtype_of(expr, ctx)
    return LEGACY_TENSOR_TYPES.get(qualified, qualified) if qualified is not None else None


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def retaining_argument(call: cst.Call) -> Optional[cst.Arg]:
    """The argument of a backward call that asks to keep its graph, in either spelling
    (`tables.RETAIN_GRAPH_KEYWORDS`: `retain_graph=True`, or `retain_variables=True` before PyTorch 0.4)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in RETAIN_GRAPH_KEYWORDS:
            return arg
    return None


def has_star_args(call: cst.Call) -> bool:
    return any(arg.star for arg in call.args)


def mixed_precision_call(call: cst.Call, ctx: "Context") -> bool:
    """Whether `call` is evidence that its file trains in mixed precision: torch's autocast or
    GradScaler (any spelling, through imports), a framework's `.autocast()` (`accelerator.autocast()`,
    `fabric.autocast()`), or a wrapper that keeps float32 master weights and scales the loss
    (`keeps_master_weights`: apex's `amp.initialize(model, optimizer, opt_level="O1")` and
    `amp.scale_loss(loss, optimizer)`, its `FP16_Optimizer`, the copies projects vendor). apex's O1
    patches torch functions to run under autocast-style casts and O2 keeps float32 master weights: either
    is mixed, not full float32 and not pure half. (O0, plain float32, is not read from `opt_level`: a
    file that sets apex amp up is taken to use it, which can only silence a finding.)"""
    func = call.func
    qualified = ctx.resolve(func)
    if qualified in AUTOCAST or qualified in GRAD_SCALERS:
        return True
    if type(func) is cst.Attribute and func.attr.value == "autocast":
        return _framework_object(func.value, ctx)  # not any object's `.autocast()`: a simulator's is not
    name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None
    if name in MASTER_WEIGHT_WRAPPERS:  # FP16_Optimizer, network_to_half, and the copies projects vendor
        return True
    # of apex's modules, only the calls that change precision (not `to_python_float(loss)`)
    return qualified is not None and qualified.startswith(MASTER_WEIGHT_MODULES) and qualified.rsplit(".", 1)[-1] in APEX_PRECISION_CALLS


def _framework_object(receiver: cst.BaseExpression, ctx: "Context") -> bool:
    """`accelerator` / `fabric` bound (in the innermost scope that binds it) only to accelerate's
    `Accelerator(...)` or Lightning's `Fabric(...)`, or such a construction itself."""
    if type(receiver) is cst.Name:
        for frame in reversed(ctx.frames):
            if frame.kind == "class":
                continue
            if receiver.value in frame.params:  # type: ignore[attr-defined]
                return False
            built = ctx.model.constructed(frame.node).get(receiver.value)  # type: ignore[attr-defined]
            if built:
                return len(built) == 1 and ctx.resolve(built[0].func) in AUTOCAST_FRAMEWORKS
            if receiver.value in frame.names:  # type: ignore[attr-defined]
                return False
        return False
    return type(receiver) is cst.Call and ctx.resolve(receiver.func) in AUTOCAST_FRAMEWORKS  # type: ignore[attr-defined]


def keeps_master_weights(call: cst.Call, ctx: "Context") -> bool:
    """Whether `call` sets up float32 master weights for a half model: `FP16_Optimizer(optimizer, ...)`,
    `amp.initialize(model, optimizer, ...)` from apex, `network_to_half(model)` (MASTER_WEIGHT_WRAPPERS)."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    if name in MASTER_WEIGHT_WRAPPERS:
        return True
    qualified = ctx.resolve(func)
    return qualified is not None and qualified.startswith(MASTER_WEIGHT_MODULES)
