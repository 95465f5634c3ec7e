"""ML006 optimizer-over-budget."""

from __future__ import annotations

from typing import Optional

import libcst as cst
from memlint.rules.ml006_optimizer_over_budget.meta import META

from memlint.analysis import optimizers
from memlint.analysis.inventory import env_here, inventory, layer_of
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.units import format_bytes

_BUDGET = {"gpu-memory": "1GiB"}


class OptimizerOverBudget(Rule):
    """
    ## What it does
    Finds an Adam-family optimizer whose model needs more memory for weights, gradients and
    optimizer state than the configured GPU memory budget allows. Active only when `gpu-memory`
    is set in `[tool.memlint]` (`gpu-memory = "24GiB"`, with an optional `memory-headroom`, default
    0.5, kept free for activations and the allocator). For each Adam-family optimizer (`Adam`, `AdamW`, `NAdam`, `RAdam`, `Adamax`, `amsgrad=True`) it estimates
    the parameter count of the model passed to it, statically: the layer constructors of the model's
    class in the same file (`model = Net(...)`, `self.parameters()` in a LightningModule,
    `nn.Sequential(...)`), with sizes constant-folded. It reports when fp32 weights + gradients +
    optimizer state exceed `gpu-memory * (1 - memory-headroom)`.

    Accepted limits (silence when unsure): when any layer of the model cannot be counted (a size
    from a config object, layers built in a loop or behind a condition, a model from a factory or
    another file, parameter groups or `filter(...)` over the parameters) the rule says nothing;
    `memlint estimate` is the tool that measures those models.

    ## Why is this bad?
    Adam keeps two fp32 moments per parameter (8 bytes; 12 with `amsgrad`), on top of the 4-byte
    weight and 4-byte gradient: 16 bytes per parameter before a single activation is stored.
    Mixed precision (`torch.autocast`) does not shrink this: weights, gradients and optimizer state
    stay fp32.

    ## Example
    ```python
    # pyproject.toml: [tool.memlint] gpu-memory = "16GiB"
    model = Net()  # ~700M parameters, counted from Net.__init__
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ```

    ## Use instead
    ```python
    optimizer = torch.optim.Adafactor(model.parameters(), lr=1e-2)  # factored second moment
    # or bitsandbytes.optim.AdamW8bit (~2 B/parameter), or SGD with momentum (4 B/parameter)
    ```

    ## Fix safety
    No automatic fix: changing the optimizer changes training.

    ## Measured effect
    Optimizer state per parameter, measured with PyTorch 2.13: SGD 0 B, SGD with momentum 4 B,
    RMSprop 4 B, Adagrad 4 B, Adam/AdamW 8 B, Adam with amsgrad 12 B, `torch.optim.Adafactor`
    ~0.01 B, 8-bit AdamW ~2 B (the table is `memlint/analysis/optimizers.py`; `memlint estimate` runs the optimizer step instead).

    Fixture `ml006_adam_state.py`, `memlint confirm fixtures` (PyTorch 2.13.0+cpu, exact
    tensor-storage tracker; docs/measured-savings.md): a 4.2M-parameter MLP, two steps with Adam
    versus SGD with momentum: 92,717,756 B before, 51,214,976 B after (39.6 MiB, 44.8% saved).
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "none"

    VALID = [
        Valid(  # no budget configured: silent
            """
import torch
from torch import nn
model = nn.Linear(16384, 16384)
opt = torch.optim.Adam(model.parameters())
"""
        ),
        Valid(  # fits: 1M parameters * 16 B = 16 MiB
            """
import torch
from torch import nn
model = nn.Linear(1024, 1024)
opt = torch.optim.Adam(model.parameters())
""",
            config=_BUDGET,
        ),
        Valid(  # the model cannot be counted statically (a size from a config)
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc = nn.Linear(cfg.width, cfg.width)
model = Net(cfg)
opt = torch.optim.AdamW(model.parameters())
""",
            config=_BUDGET,
        ),
        Valid(  # not an Adam-family optimizer
            """
import torch
from torch import nn
model = nn.Linear(16384, 16384)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
""",
            config=_BUDGET,
        ),
        Valid(  # a user's own `Adam` is not torch's
            """
import torch
from torch import nn
class Adam:
    def __init__(self, params):
        pass
model = nn.Linear(16384, 16384)
opt = Adam(model.parameters())
""",
            config=_BUDGET,
        ),
    ]

    INVALID = [
        Invalid(  # 268M parameters * 16 B = 4 GiB > 1 GiB * 0.5
            """
import torch
from torch import nn
model = nn.Linear(16384, 16384).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
""",
            line=4,
            column=7,
            config=_BUDGET,
            message="268,451,840 parameters",
        ),
        Invalid(  # a class of the file, a constructor default, an aliased import, amsgrad
            """
import torch.optim as optim
import torch.nn as nn
HIDDEN = 8192
class Net(nn.Module):
    def __init__(self, width=HIDDEN, classes=1000):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
        self.head = nn.Linear(width, classes)
def train():
    net = Net()
    opt = optim.AdamW(net.parameters(), amsgrad=True)
""",
            line=11,
            column=11,
            config={"gpu-memory": "4GiB", "memory-headroom": 0.4},
            message="20 B/parameter",
        ),
        Invalid(  # the model is built at module level, the optimizer in a function
            """
import torch
from torch import nn
model = nn.Sequential(nn.Linear(8192, 8192), nn.ReLU(), nn.Linear(8192, 8192))
def train(loader):
    opt = torch.optim.Adam(model.parameters())
""",
            line=5,
            column=11,
            config=_BUDGET,
        ),
        Invalid(  # a LightningModule's configure_optimizers over self.parameters()
            """
import torch
import lightning as L
from torch import nn
class Lit(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(250000, 4096)
    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-4)
""",
            line=9,
            column=16,
            config={"gpu-memory": "24GB"},
            message="memlint estimate",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._bindings: dict[tuple[int, str], Optional[cst.BaseExpression]] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.option("gpu-memory") is None:
            return
        scope = id(self.ctx.function_node or self.ctx.module)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                key = (scope, target.target.value)
                # bound twice in one scope: cannot tell which model the optimizer gets
                self._bindings[key] = node.value if key not in self._bindings else None

    def visit_Call(self, node: cst.Call) -> None:
        budget_total = self.option("gpu-memory")
        if budget_total is None:
            return
        qualified = self.ctx.resolve(node.func)
        state = optimizers.lookup(qualified)
        if state is None or not state.adam_family or not node.args or node.args[0].keyword not in (None,):
            return
        amsgrad = any(
            a.keyword is not None and a.keyword.value == "amsgrad" and isinstance(a.value, cst.Name) and a.value.value == "True"
            for a in node.args
        )
        model = _model_of(node.args[0].value)
        if model is None:
            return
        count, label = self._parameters(model)
        if count is None or count <= 0:
            return
        per_param = optimizers.training_bytes_per_param(state.bytes_per_param + (state.amsgrad_bytes if amsgrad else 0))
        needed = count * per_param
        headroom = self.option("memory-headroom")
        budget = budget_total * (1 - headroom)
        if needed <= budget:
            return
        alternatives = ", ".join(
            f"{name} {_bytes_label(b)} B/parameter ({format_bytes(count * optimizers.training_bytes_per_param(b))} in all)"
            for name, b in optimizers.ALTERNATIVES
        )
        name = state.name + (" with amsgrad" if amsgrad else "")
        message = (
            f"`{name}` over `{label}` (~{count:,} parameters, counted statically) needs {format_bytes(needed)} for "
            f"fp32 weights, gradients and optimizer state ({_bytes_label(per_param)} B/parameter), over the budget of "
            f"{format_bytes(budget)} (gpu-memory {format_bytes(budget_total)} with memory-headroom {headroom:g}). "
            f"Lighter optimizer state: {alternatives}; mixed precision does not shrink Adam state. "
            "Run `memlint estimate` for a measured answer, activations included"
        )
        self.report(node, message)

    def _parameters(self, model: cst.BaseExpression) -> tuple[Optional[int], str]:
        ctx = self.ctx
        if isinstance(model, cst.Name) and model.value == "self":
            described = inventory(ctx).get(ctx.class_name or "")
            return (described.param_count if described else None), "self"
        if isinstance(model, cst.Attribute) and isinstance(model.value, cst.Name) and model.value.value == "self":
            described = inventory(ctx).get(ctx.class_name or "")
            layer = described.attributes.get(model.attr.value) if described else None
            return (layer.params if layer else None), f"self.{model.attr.value}"
        if isinstance(model, cst.Name):
            scope = id(ctx.function_node or ctx.module)
            bound = self._bindings.get((scope, model.value))
            if bound is None and (scope, model.value) not in self._bindings and ctx.resolve(model) is None:
                if ctx.function_node is not None and model.value not in ctx.frame.names:
                    bound = self._bindings.get((id(ctx.module), model.value))  # a module-level model
            constructor = _strip_device_moves(bound) if bound is not None else None
            if isinstance(constructor, cst.Call):
                layer = layer_of(ctx, constructor, env_here(ctx))
                return (layer.params if layer else None), model.value
        return None, ""


def _model_of(params: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`model.parameters()` / `list(model.parameters())` -> `model`."""
    if isinstance(params, cst.Call) and isinstance(params.func, cst.Name) and params.func.value == "list" and len(params.args) == 1:
        params = params.args[0].value
    if (
        isinstance(params, cst.Call)
        and isinstance(params.func, cst.Attribute)
        and params.func.attr.value == "parameters"
        and not params.args
    ):
        return params.func.value
    return None


def _strip_device_moves(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`Net(...).to(device).cuda()` -> `Net(...)`."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in ("to", "cuda", "cpu", "train", "float")
    ):
        expr = expr.func.value
    return expr


def _bytes_label(value: float) -> str:
    return "~0" if value < 0.5 else f"{value:g}"
