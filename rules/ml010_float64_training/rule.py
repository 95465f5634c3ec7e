"""ML010 float64-training."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from memlint.analysis import GradMode, Kind
from memlint.analysis.evaluation import is_model_call
from memlint.analysis.gradient_updates import updates_parameters
from memlint.analysis.loaders import loader_feeds_model
from memlint.analysis.optimizers import builds_optimizer
from memlint.analysis.project_facts import training_work
from memlint.analysis.precision_api import FLOAT64_DTYPES, cast_target, dtype_of, keyword, tensor_type_dtype
from memlint.analysis.tables import BACKWARD_METHODS, MODEL_NAME
from memlint.analysis.walk import dotted_name
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml010_float64_training.meta import META

_DATALOADER = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
_TENSOR_DATASET = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
_SET_DEFAULT_DTYPE = frozenset({"torch.set_default_dtype", "torch.set_default_tensor_type"})
# Calls that run training somewhere else: `train(model, loader)`, `fit(...)`, `trainer.fit(model)`,
# HF's `trainer.train()` (a model's own `.train()` only switches its mode).
_TRAINING_ENTRY = re.compile(r"^(?:train|fit|train_model|train_net|train_epoch|train_one_epoch|run_training|training_loop)$")
_PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_GRADCHECK = frozenset(
    {"torch.autograd.gradcheck", "torch.autograd.gradgradcheck", "torch.autograd.gradcheck.gradcheck",
     "torch.autograd.gradcheck.gradgradcheck"}
)  # fmt: skip


class Float64Training(Rule):
    """
    ## What it does
    Finds training in float64. What is reported: `model.double()` (or `.to(torch.float64)`, `.type(torch.DoubleTensor)`)
    on a module, an input cast with `.double()` / `.to(torch.float64)` or made with
    `dtype=torch.float64` (`torch.tensor(a, dtype=torch.float64)`, `torch.DoubleTensor(a)`; also
    bound in a tuple assignment) that is fed to a model with gradients on, or given to a
    `TensorDataset` whose `DataLoader` feeds a model, `torch.set_default_dtype(torch.float64)` (or the legacy
    `torch.set_default_tensor_type(torch.DoubleTensor)`), and layers or `nn.Parameter`s created with
    `dtype=torch.float64`. A module is a model known to the analysis, something named like one, a
    class of the file or of a project module being constructed (`Policy(4, 2).double()`), or a name
    whose `.parameters()` the file reads. Only in files that train (they call backward in a loop, or in straight-line code beside an update
    of parameters, an optimizer's `step()` or `p.data -= lr * p.grad`, build a
    `torch.optim` optimizer, or hand the model to training: `train(model, loader)`, `fit(...)`,
    `trainer.fit(model)`, `trainer.train()`, or a function of another file of the project that
    backpropagates or steps an optimizer: `trpo_step(policy_net, ...)`) and do not check gradients numerically (`gradcheck`,
    `gradgradcheck`, which need float64). A single submodule cast on purpose (`model.fc1.double()`) is
    not reported, nor a float64 default that the file sets back to float32 later (a demonstration).

    Not reported: float64 in metric bookkeeping (accuracy counters, `.double()` on a comparison,
    sums of losses), local computations cast back, buffers, and casts of values that never reach a
    model in the file.

    ## Why is this bad?
    float64 doubles the bytes of every parameter, gradient, optimizer state and activation compared
    with float32 (and is 4 to 64 times slower on most GPUs); deep-learning training does not need
    its precision.

    ## Example
    ```python
    model = Net().double()
    optimizer = torch.optim.Adam(model.parameters())
    for x, y in loader:
        loss = criterion(model(x.double()), y)
        loss.backward()
    ```

    ## Use instead
    ```python
    model = Net()
    optimizer = torch.optim.Adam(model.parameters())
    for x, y in loader:
        loss = criterion(model(x.float()), y)
        loss.backward()
    ```

    ## Fix safety
    No automatic fix: where float64 came from (data loaded as float64 NumPy arrays is common) and
    whether a computation needs it is for the author to decide.

    ## Measured effect
    `fixtures/ml010_float64_training.py`, PyTorch 2.13 on CPU, exact tensor-storage tracker, `memlint confirm fixtures` (docs/measured-savings.md): the float64 training script peaks at
    34,104,576 B, the float32 one at 17,052,800 B (exactly half: weights, gradients, optimizer
    state and activations all halve), same result within tolerance.
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "none"

    VALID = [
        Valid(  # a test comparing two layers' outputs and gradients: backward, but no update and no batch loop
            """
import torch
def test_same_gradients():
    ref = torch.nn.BatchNorm2d(4).double()
    mine = MyBatchNorm(4).double()
    x = torch.rand(2, 4, 3, 3).double().requires_grad_()
    (ref(x) ** 2).sum().backward()
    (mine(x) ** 2).sum().backward()
    assert torch.allclose(ref.weight.grad, mine.weight.grad)
"""
        ),
        Valid(  # metric bookkeeping
            """
import torch
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    correct += (out.argmax(1) == y).double().sum()
"""
        ),
        Valid(  # gradcheck needs float64
            """
import torch
from torch.autograd import gradcheck
layer = MyLayer().double()
x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
assert gradcheck(layer, (x,))
out = layer(x)
out.sum().backward()
"""
        ),
        Valid(  # one sensitive layer kept in float64 on purpose
            """
import torch
model = Net()
model.head.double()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
        ),
        Valid(  # no training in the file
            """
import torch
model = load_model().double()
with torch.no_grad():
    print(model(batch))
"""
        ),
        Valid(  # a local computation cast back
            """
import torch
for x, y in loader:
    cov = (x.double().T @ x.double()).float()
    loss = criterion(model(x), y)
    loss.backward()
"""
        ),
        Valid(  # a float64 default shown and set back (a tutorial's demonstration)
            """
import torch as t
t.set_default_tensor_type("torch.DoubleTensor")
a = t.Tensor(2, 3)
t.set_default_tensor_type("torch.FloatTensor")
x = t.ones(2, requires_grad=True)
(x * 2).sum().backward()
"""
        ),
        Valid(  # made in float64, cast back to float32 before it reaches the model
            """
import torch
X = torch.tensor(data, dtype=torch.float64)
X = X.float()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    loss = model(X).sum()
    loss.backward()
"""
        ),
        Valid(  # float64 data only for statistics, never to a model
            """
import torch
from torch.utils.data import DataLoader, TensorDataset
X = torch.from_numpy(features).double()
stats_loader = DataLoader(TensorDataset(X), batch_size=1024)
total = sum(xb.sum() for (xb,) in stats_loader)
optimizer = torch.optim.Adam(net.parameters())
loss = criterion(net(inputs), targets)
loss.backward()
"""
        ),
    ]

    INVALID = [
        Invalid(  # an epoch loop whose update writes the parameters by plain assignment
            """
import torch
model = Net().double()
for epoch in range(100):
    loss = model(x).sum()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.data = p.data - 0.1 * p.grad
""",
            line=2,
            column=9,
        ),
        Invalid(  # the update is a helper of another library, called in the batch loop
            """
import torch
net = Net().double()
for epoch in range(3):
    for x, y in batches(data, 32):
        loss(net(x), y).sum().backward()
        sgd(list(net.parameters()), 0.1)
""",
            line=2,
            column=7,
        ),
        Invalid(  # batches sliced by a range loop, the update in a helper
            """
import torch
model = Net().double()
for epoch in range(10):
    for i in range(0, n, 32):
        crit(model(x[i:i + 32]), y[i:i + 32]).backward()
        update(model, 0.1)
""",
            line=2,
            column=9,
        ),
        Invalid(  # an update by a foreach kernel in an iteration loop
            """
import torch
model = Net().double()
params = list(model.parameters())
for it in range(1000):
    model(x).sum().backward()
    with torch.no_grad():
        torch._foreach_add_(params, [p.grad for p in params], alpha=-0.1)
""",
            line=2,
            column=9,
        ),
        Invalid(  # a backward outside a batch loop that the file's manual update applies
            """
import torch
model = Net().double()
loss = model(x).sum()
loss.backward()
for p in model.parameters():
    p.data -= 0.1 * p.grad
""",
            line=2,
            column=9,
        ),
        Invalid(
            """
import torch
model = Net().double()
optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
            line=2,
            column=9,
            message="float64",
        ),
        Invalid(  # the file trains by building an optimizer whose name is its only word of training (transformers' `Adafactor`)
            """
import torch
from transformers import Adafactor
def build(net):
    net = net.double()
    return Adafactor(net.parameters(), lr=1e-3)
""",
            line=4,
            column=11,
        ),
        Invalid(  # an optimizer of apex (`FusedAdam`) is built over the float64 model: the file trains
            """
import torch
from apex.optimizers import FusedAdam
def build(net):
    net = net.double()
    return FusedAdam(net.parameters(), lr=1e-3)
""",
            line=4,
            column=11,
        ),
        Invalid(  # an input cast fed to the model
            """
import torch
for x, y in loader:
    x = x.to(torch.float64)
    loss = criterion(model(x), y)
    loss.backward()
""",
            line=3,
            column=9,
        ),
        Invalid(  # a global default
            """
import torch
torch.set_default_dtype(torch.double)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
""",
            line=2,
            column=1,
        ),
        Invalid(  # a layer built in float64
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 10, dtype=torch.float64)
def train(net, loader, opt):
    for x in loader:
        net(x).sum().backward()
""",
            line=6,
            column=19,
        ),
        Invalid(  # a module-level default in a script that hands the model to a training function
            """
import torch
from trainer import train
from models import MLP
torch.set_default_dtype(torch.float64)
model = MLP()
train(model, train_loader, epochs=10)
""",
            line=4,
            column=1,
            message="set_default_dtype",
        ),
        Invalid(  # a project class cast to float64 before the training loop
            """
import torch
from model import Policy
policy = Policy(4, 2).double()
optimizer = torch.optim.Adam(policy.parameters())
for obs, target in batches:
    loss = (policy(obs) - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            line=3,
            column=10,
            message="cast to float64",
        ),
        Invalid(  # the legacy type cast of a name whose parameters are trained
            """
import torch
agent = make_agent()
agent.type(torch.DoubleTensor)
optimizer = torch.optim.SGD(agent.parameters(), lr=0.01)
for obs, target in batches:
    optimizer.zero_grad()
    agent.loss(obs, target).backward()
    optimizer.step()
""",
            line=3,
            column=1,
        ),
        Invalid(  # float64 inputs made by a constructor, bound in a tuple assignment
            """
import torch
X_train, X_test = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    loss = model(X_train).sum()
    loss.backward()
""",
            line=2,
            column=19,
            message="float64 input",
        ),
        Invalid(  # float64 tensors in a TensorDataset whose loader feeds the trained model
            """
import torch
from torch.utils.data import DataLoader, TensorDataset
X = torch.from_numpy(features).double()
train_ds = TensorDataset(X, torch.from_numpy(labels))
train_loader = DataLoader(train_ds, batch_size=32, shuffle=True)
optimizer = torch.optim.Adam(net.parameters())
for xb, yb in train_loader:
    loss = criterion(net(xb), yb)
    loss.backward()
""",
            line=3,
            column=5,
            message="through `train_loader`",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._found: list[tuple[cst.CSTNode, str]] = []
        self._trains = False
        self._backward = False  # a backward in no loop: training if the file updates parameters
        self._updates = False  # the file updates parameters (gradient_updates.updates_parameters)
        self._gradcheck = False
        # Names bound to a float64 cast in the current function: (function, name) -> the cast call.
        self._cast_names: dict[tuple, cst.Call] = {}
        self._defaults: list[tuple[cst.Call, bool]] = []  # set_default_* calls: is each float64?
        self._parameter_owners: set[str] = set()  # `X` in `X.parameters()`: X is a module
        self._maybe_modules: list[tuple[cst.Call, str]] = []  # casts of a name not yet known as a module
        self._float64_datasets: dict[tuple, cst.Call] = {}  # (function, name) -> the float64 tensor it holds
        self._float64_loaders: list[tuple[cst.Call, str]] = []  # (the float64 tensor, the loader's name)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target, value = node.targets[0].target, node.value
        # `x = x.double()`, and `X_tr, X_te = torch.tensor(a, dtype=torch.float64), ...` element by element
        pairs = [(target, value)]
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(target.elements) == len(value.elements):
            pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
        if isinstance(target, cst.Name) and isinstance(value, cst.Call):
            self._data_pipeline(target.value, value)
        for bound, bound_value in pairs:
            if not isinstance(bound, cst.Name):
                continue
            key = (self.ctx.function_key, bound.value)
            made = self._float64_made(bound_value)
            if made is not None:
                self._cast_names[key] = made
            else:
                self._cast_names.pop(key, None)

    def _data_pipeline(self, name: str, value: cst.Call) -> None:
        """`ds = TensorDataset(X.double(), y)` and then `loader = DataLoader(ds, ...)`: the loader
        yields float64 batches (asked in `finish`: does it feed a model?)."""
        key = (self.ctx.function_key, name)
        self._float64_datasets.pop(key, None)
        made = self._float64_dataset(value)
        if made is not None:
            self._float64_datasets[key] = made
            return
        if self.ctx.resolve(value.func) in _DATALOADER and value.args and value.args[0].keyword is None:
            dataset = value.args[0].value
            made = self._float64_dataset(dataset) if isinstance(dataset, cst.Call) else (
                self._float64_datasets.get((self.ctx.function_key, dataset.value)) if isinstance(dataset, cst.Name) else None
            )
            if made is not None:
                self._float64_loaders.append((made, name))

    def _float64_dataset(self, value: cst.Call) -> Optional[cst.Call]:
        if self.ctx.resolve(value.func) not in _TENSOR_DATASET:
            return None
        for arg in value.args:
            made = self._float64_input(arg.value) if arg.keyword is None and not arg.star else None
            if made is not None:
                return made
        return None

    def _float64_made(self, value: cst.BaseExpression) -> Optional[cst.Call]:
        """A float64 tensor made here: a cast of a value that is not a module (`x.double()`), or a
        torch constructor given `dtype=torch.float64` (`torch.tensor(a, dtype=torch.float64)`) or
        the legacy `torch.DoubleTensor(...)`."""
        if not isinstance(value, cst.Call):
            return None
        func = value.func
        if isinstance(func, cst.Attribute) and cast_target(value, self.ctx) in FLOAT64_DTYPES:
            return value if not self._is_module(func.value) else None
        qualified = self.ctx.resolve(func) or ""
        if qualified in ("torch.DoubleTensor", "torch.cuda.DoubleTensor"):
            return value
        if qualified.startswith("torch.") and qualified.rpartition(".")[0] == "torch":
            dtype = keyword(value, "dtype")
            if dtype is not None and dtype_of(dtype.value, self.ctx) in FLOAT64_DTYPES:
                return value
        return None

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        func = node.func
        qualified = ctx.resolve(func)
        if isinstance(func, cst.Attribute) and func.attr.value in BACKWARD_METHODS:
            # a backward in any loop trains (its update may sit in a helper: `sgd(params, lr)`); one
            # in straight-line code trains only beside an update of parameters (alone it may only
            # compare gradients once: a numerical test of a layer)
            if ctx.loops:
                self._trains = True
            else:
                self._backward = True
        if not self._updates and updates_parameters(node):
            self._updates = True
        if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
            owner = dotted_name(func.value)
            if owner is not None:
                self._parameter_owners.add(owner)
        work = training_work(node, ctx)
        if _runs_training(node) or "step" in work:
            self._trains = True
        elif "backward" in work:
            if ctx.loops:
                self._trains = True
            else:
                self._backward = True  # (a helper of another file that backpropagates: `trpo_step(policy_net, ...)`)
        if qualified is not None:
            if builds_optimizer(qualified):  # an optimizer is built: the file trains
                self._trains = True
            if qualified in _GRADCHECK:
                self._gradcheck = True
            if qualified in _SET_DEFAULT_DTYPE and node.args:
                float64 = tensor_type_dtype(node.args[0].value, ctx) in FLOAT64_DTYPES
                self._defaults.append((node, float64))
                if float64:
                    name = qualified.rpartition(".")[2]
                    self._found.append((node, f"`torch.{name}(float64)` makes every parameter and activation float64"))
                return
            if self._is_float64_layer(qualified, node):
                self._found.append((node, "this layer is created in float64: its weights, gradients and optimizer state take twice the memory"))
                return
        if isinstance(func, cst.Attribute) and cast_target(node, ctx) in FLOAT64_DTYPES:
            if self._is_module(func.value):
                self._found.append((node, _MODEL_CAST))
            else:
                name = dotted_name(func.value)
                if name is not None and name != "self":
                    self._maybe_modules.append((node, name))  # a module if the file trains its parameters
            return
        if ctx.grad_mode is GradMode.ENABLED:
            # The inputs first: a float64 one is rare, and whether the call runs a model is a valuation.
            casts = [cast for cast in (self._float64_input(arg.value) for arg in node.args) if cast is not None]
            if casts and is_model_call(node, ctx):
                for cast in casts:
                    self._found.append((cast, "a float64 input is fed to the model with gradients on: its activations (and a float64 model's parameters) take twice the memory"))

    def _float64_input(self, value: cst.BaseExpression) -> Optional[cst.Call]:
        if isinstance(value, cst.Call):
            return self._float64_made(value)
        if isinstance(value, cst.Name):
            return self._cast_names.get((self.ctx.function_key, value.value))
        return None

    def _is_float64_layer(self, qualified: str, node: cst.Call) -> bool:
        dtype = keyword(node, "dtype")
        if qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[1][:1].isupper() and qualified not in _PARAMETER:
            return dtype is not None and dtype_of(dtype.value, self.ctx) in FLOAT64_DTYPES
        if qualified in _PARAMETER and node.args:
            inner = node.args[0].value
            if isinstance(inner, cst.Call):
                inner_dtype = keyword(inner, "dtype")
                if inner_dtype is not None and dtype_of(inner_dtype.value, self.ctx) in FLOAT64_DTYPES:
                    return True
                return cast_target(inner, self.ctx) in FLOAT64_DTYPES
        return False

    def visit_Name(self, node: cst.Name) -> None:
        # Test code that checks gradients numerically needs float64 (`gradcheck`, `check_gradgrad=`).
        if not self._gradcheck and ("gradcheck" in node.value or "gradgrad" in node.value):
            self._gradcheck = True

    def _is_module(self, expr: cst.BaseExpression) -> bool:
        """A whole model: known from the analysis, named like a model, or `Net()` of this file.

        A submodule (`model.fc1.double()`) is left alone: casting one sensitive layer is deliberate.
        """
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("cuda", "to", "cpu", "train"):
            expr = expr.func.value
        if isinstance(expr, cst.Attribute) and not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return False
        if self.ctx.value_of(expr).kind is Kind.MODULE:
            return True
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in self.ctx.module_classes:
            return True
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value[:1].isupper():
            qualified = self.ctx.resolve(expr.func)
            if qualified is None:
                return expr.func.value.endswith(("Net", "Model", "Module", "Network"))
            # a class the file imports from a project module (`from model import Policy`): not torch's,
            # NumPy's or the standard library's tensors and containers
            return qualified.partition(".")[0] not in _NOT_MODEL_PACKAGES
        name = expr.value if isinstance(expr, cst.Name) else expr.attr.value if isinstance(expr, cst.Attribute) else None
        return name is not None and MODEL_NAME.match(name) is not None and name not in ("module",)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if not self._updates and updates_parameters(node):
            self._updates = True  # `p.data -= lr * p.grad`

    def finish(self, facts) -> None:
        trains = self._trains or (self._backward and self._updates)
        if not trains or self._gradcheck:
            return
        for node, name in self._maybe_modules:
            if name in self._parameter_owners:  # its parameters go to an optimizer (or are read as a module's)
                self._found.append((node, _MODEL_CAST))
        for made, loader in self._float64_loaders:
            if loader_feeds_model(self.ctx.module, loader):
                self._found.append((made, f"a float64 input reaches the model through `{loader}`: its activations (and a float64 model's parameters) take twice the memory"))
        seen: set[int] = set()
        self._found = [(n, m) for n, m in self._found if not (id(n) in seen or seen.add(id(n)))]
        # a float64 default set back to float32 later in the file (a demonstration) is not a training default
        reset = [index for index, (_, float64) in enumerate(self._defaults) if not float64]
        temporary = {id(node) for index, (node, float64) in enumerate(self._defaults) if float64 and any(r > index for r in reset)}
        for node, message in self._found:
            if id(node) not in temporary:
                self.report(node, f"{message}; train in float32 (or mixed precision)")


_MODEL_CAST = "the model is cast to float64: weights, gradients, optimizer state and activations take twice the memory of float32"
# Packages whose capitalised callables are not models (tensors, arrays, containers).
_NOT_MODEL_PACKAGES = frozenset({"torch", "numpy", "np", "collections", "typing", "pandas", "scipy", "sklearn"})


def _runs_training(call: cst.Call) -> bool:
    """`train(model, loader)`, `fit(...)`, `trainer.fit(model)`, `trainer.train()`: training run by a
    function or a framework the file calls."""
    func = call.func
    if isinstance(func, cst.Name):
        return bool(call.args) and _TRAINING_ENTRY.match(func.value) is not None
    if isinstance(func, cst.Attribute) and func.attr.value in ("fit", "train"):
        receiver = dotted_name(func.value) or ""
        return "trainer" in receiver.lower()
    return False
