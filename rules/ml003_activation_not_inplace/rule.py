"""ML003 activation-not-inplace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from memlint.analysis.activations import inplace_argument, with_inplace
from memlint.analysis.inventory import inventory, torch_nn_name
from memlint.analysis.tables import INPLACE_FUNCTIONS, INPLACE_MODULES, OUTPUT_NOT_SAVED
from memlint.analysis.walk import code_children, code_descendants, code_with_parents, descendants
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml003_activation_not_inplace.meta import META

_EFFECT = (
    "saves one activation buffer at the forward peak; the training-step peak, reached in backward, "
    "often does not change"
)


@dataclass
class _Pending:
    activation: cst.Call
    kind: str
    after: str  # the layer before it
    class_name: Optional[str]
    attribute: Optional[str]  # `self.<attribute> = nn.Sequential(...)`, checked for other uses at the end


class ActivationNotInplace(Rule):
    """
    ## What it does
    Finds an activation or dropout that could run in place but is built out of place (`nn.ReLU()`,
    `nn.LeakyReLU(0.1)`, `nn.SiLU()`, `nn.Dropout(p)`, ... with no `inplace=` or `inplace=False`;
    `F.relu(x)` and friends in `forward`), in the places where in-place is provably safe:

    - in an `nn.Sequential(...)` (or the `OrderedDict`, or a list display that is unpacked into
      `nn.Sequential(*layers)` in the same function) right after a layer that does not need its own
      output for backward: Conv*, Linear, BatchNorm*, GroupNorm, LayerNorm, InstanceNorm*,
      Embedding, pooling;
    - in `forward`, a functional activation whose input is the fresh output of such a layer
      (`F.relu(self.bn(x))`, or `x = self.conv(x)` on the previous line) that is not used again.

    Never reported: the first element of a Sequential (it would overwrite the caller's tensor, a
    residual input for example); an activation after an op that saves its output (Sigmoid, Tanh,
    Softmax, another activation); an input used again later (skip connections, returned feature
    maps); a Sequential stored on `self` and then indexed or iterated in the class (its
    intermediate outputs may be kept); `inplace=False` with a comment next to it;
    an `inplace` argument that is not a literal.

    Accepted limits (silence when unsure): layers passed in as arguments or built by factories,
    `self.relu = nn.ReLU()` modules called in `forward` (they are often reused), lists built with
    `append`, and Sequential subclasses are not analysed.

    ## Why is this bad?
    An out-of-place activation allocates a second buffer the size of its input while the input is
    still alive. After a layer that does not keep its output for backward, the activation can
    overwrite that output instead.

    ## Example
    ```python
    features = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU())
    ```

    ## Use instead
    ```python
    features = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(inplace=True))
    ```

    ## Fix safety
    Adds `inplace=True` (or turns a literal `False` into `True`). Safe: the rule only reports where
    the overwritten tensor is a fresh output that nothing else reads and whose producer does not
    need it for backward.

    ## Measured effect
    Conv-BN-ReLU CNN, PyTorch 2.13 on CPU (exact tensor-storage tracker): forward-only peak 161.7 MiB
    with `nn.ReLU()`, 129.7 MiB with `nn.ReLU(inplace=True)` (one activation per ReLU); the full
    training-step peak is 193.7 MiB either way, because it is reached in backward.

    Fixtures, `memlint confirm fixtures` (PyTorch 2.13.0+cpu, exact tensor-storage tracker;
    docs/measured-savings.md): three conv-BN-ReLU blocks (32 channels, batch 16 at 64x64) with
    memlint's `inplace=True` fix: forward pass 59,587,904 B before, 51,201,988 B after (8.0 MiB,
    14.1% saved); full training step 68,057,624 B before, 68,057,624 B after (no change).
    """

    meta = META
    severity = Severity.INFO
    fix_safety = "safe"

    VALID = [
        Valid(  # first element of a Sequential: it would overwrite the caller's tensor (a residual input)
            """
from torch import nn
block = nn.Sequential(nn.ReLU(), nn.Conv2d(64, 64, 3))
"""
        ),
        Valid(  # after an op that saves its output
            """
import torch.nn as nn
head = nn.Sequential(nn.Linear(8, 8), nn.Sigmoid(), nn.Dropout(0.1))
gate = nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=True), nn.Dropout(0.1))
"""
        ),
        Valid(  # already in place, or not a literal
            """
from torch import nn
def make(inplace):
    return nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(inplace=True), nn.Linear(8, 8), nn.ReLU(inplace=inplace))
"""
        ),
        Valid(  # explicitly out of place, with the reason
            """
from torch import nn
net = nn.Sequential(
    nn.Linear(8, 8),
    nn.ReLU(inplace=False),  # the pre-activation is read by a forward hook
)
"""
        ),
        Valid(  # a user's own ReLU class and Sequential are not torch's
            """
import torch
class ReLU:
    pass
def Sequential(*layers):
    return list(layers)
layers = Sequential(torch.nn.Linear(2, 2), ReLU())
"""
        ),
        Valid(  # the input is used again: a skip connection
            """
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1)
    def forward(self, x):
        y = self.conv(x)
        z = F.relu(y)
        return z + y
"""
        ),
        Valid(  # the input is a parameter of forward: it belongs to the caller
            """
import torch.nn.functional as F
from torch import nn
class Head(nn.Module):
    def forward(self, x):
        return F.relu(x)
"""
        ),
        Valid(  # a parameter registered as None, a functional form on a parameter (timm's csatv2)
            """
import torch.nn.functional as F
from torch import nn
class Dct(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_parameter("bias", None)
    def forward(self, x):
        return F.relu(F.linear(x, self.weights, self.bias))
"""
        ),
        Valid(  # intermediate outputs of the Sequential are collected
            """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())
    def forward(self, x):
        feats = []
        for layer in self.body:
            x = layer(x)
            feats.append(x)
        return feats
"""
        ),
        Valid(  # a list that is not turned into a Sequential (ModuleList users may keep intermediates)
            """
from torch import nn
def blocks():
    layers = [nn.Linear(4, 4), nn.ReLU()]
    return nn.ModuleList(layers)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
from torch import nn
features = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU())
""",
            line=2,
            column=67,
            message="one activation buffer at the forward peak",
            fixed="""
from torch import nn
features = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(inplace=True))
""",
        ),
        Invalid(  # aliases, a positional argument, explicit False without a reason
            """
import torch.nn as tnn
from torch.nn import LeakyReLU as LR
mlp = tnn.Sequential(tnn.Linear(8, 16), LR(0.2, False))
""",
            line=3,
            column=41,
            fixed="""
import torch.nn as tnn
from torch.nn import LeakyReLU as LR
mlp = tnn.Sequential(tnn.Linear(8, 16), LR(0.2, True))
""",
        ),
        Invalid(  # OrderedDict form, multi-line with a trailing comma
            """
from collections import OrderedDict
from torch import nn
head = nn.Sequential(OrderedDict([
    ("fc", nn.Linear(512, 256)),
    ("drop", nn.Dropout(
        0.5,
    )),
]))
""",
            line=5,
            column=14,
            fixed="""
from collections import OrderedDict
from torch import nn
head = nn.Sequential(OrderedDict([
    ("fc", nn.Linear(512, 256)),
    ("drop", nn.Dropout(
        0.5, inplace=True,
    )),
]))
""",
        ),
        Invalid(  # a list display unpacked into a Sequential
            """
from torch import nn
def make_layers(cfg):
    layers = []
    for v in cfg:
        layers += [nn.Conv2d(3, v, 3), nn.ReLU()]
    return nn.Sequential(*layers)
""",
            line=5,
            column=40,
            fixed="""
from torch import nn
def make_layers(cfg):
    layers = []
    for v in cfg:
        layers += [nn.Conv2d(3, v, 3), nn.ReLU(inplace=True)]
    return nn.Sequential(*layers)
""",
        ),
        Invalid(  # functional form on a fresh layer output
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
    def forward(self, x):
        x = self.conv(x)
        return F.relu(self.bn(x))
""",
            line=10,
            column=16,
            fixed="""
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
    def forward(self, x):
        x = self.conv(x)
        return F.relu(self.bn(x), inplace=True)
""",
        ),
        Invalid(  # nested in another call, the PyTorch tutorial's CNN
            """
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        return x
""",
            line=9,
            column=23,
            fixed="""
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x), inplace=True))
        return x
""",
        ),
        Invalid(  # functional form on the name the previous line bound, rebound right away
            """
from torch import nn
from torch.nn import functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
    def forward(self, x):
        h = self.fc(x)
        h = F.dropout(h, 0.1, self.training)
        return h
""",
            line=9,
            column=13,
            fixed="""
from torch import nn
from torch.nn import functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
    def forward(self, x):
        h = self.fc(x)
        h = F.dropout(h, 0.1, self.training, inplace=True)
        return h
""",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._pending: list[_Pending] = []
        self._lists: dict[int, list[tuple[str, list[cst.BaseExpression]]]] = {}  # per function: name, display
        self._sequential_targets: dict[int, str] = {}  # id(nn.Sequential call) -> the self attribute it is stored in

    # ------------------------------------------------------------------ Sequential

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        if target is not None and _self_attr(target) is not None and isinstance(node.value, cst.Call):
            self._sequential_targets[id(node.value)] = target.attr.value  # type: ignore[union-attr]
        if isinstance(target, cst.Name) and isinstance(node.value, cst.List):
            self._note_list(target.value, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and isinstance(node.operator, cst.AddAssign) and isinstance(node.value, cst.List):
            self._note_list(node.target.value, node.value)

    def _note_list(self, name: str, display: cst.List) -> None:
        scope = self.ctx.function_node
        if scope is not None:
            self._lists.setdefault(id(scope), []).append((name, [e.value for e in display.elements]))

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        if torch_nn_name(ctx, node.func) == "Sequential" and ctx.resolve(node.func) is not None:
            self._check_sequence(_sequence_elements(node, ctx), self._sequential_targets.get(id(node)))

    def _check_sequence(self, elements: list[tuple[cst.BaseExpression, Optional[cst.CSTNode]]], attribute: Optional[str]) -> None:
        ctx = self.ctx
        for (previous, _), (element, holder) in zip(elements, elements[1:]):
            if not isinstance(element, cst.Call) or not isinstance(previous, cst.Call):
                continue
            kind = torch_nn_name(ctx, element.func)
            before = torch_nn_name(ctx, previous.func)
            if kind not in INPLACE_MODULES or before not in OUTPUT_NOT_SAVED or ctx.resolve(element.func) is None:
                continue
            argument, value = inplace_argument(element, INPLACE_MODULES[kind])
            if value is not False:
                continue
            if argument is not None and holder is not None and _has_comment(holder):
                continue  # `inplace=False  # why`
            self._pending.append(_Pending(element, kind, before, ctx.class_name, attribute))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        for name, display in self._lists.pop(id(node), []):
            if _unpacked_into_sequential_only(node, name, self.ctx):
                self._check_sequence([(e, None) for e in display], None)
        if node.name.value == "forward" and self.ctx.class_name is not None:
            self._forward_pairs(node)

    def finish(self, facts) -> None:
        classes = {}
        for pending in self._pending:
            if pending.attribute is not None and pending.class_name is not None:
                if pending.class_name not in classes:
                    classes[pending.class_name] = _class_node(self.ctx.module, pending.class_name)
                if _used_other_than_called(classes[pending.class_name], pending.attribute):
                    continue
            position = INPLACE_MODULES[pending.kind]
            message = f"`nn.{pending.kind}` after `nn.{pending.after}` can run in place: `inplace=True` {_EFFECT}"
            fix = self.replace(pending.activation, with_inplace(pending.activation, position), "Add `inplace=True`")
            self.report(pending.activation, message, fix)

    # ------------------------------------------------------------------ functional forms in forward

    def _forward_pairs(self, function: cst.FunctionDef) -> None:
        ctx = self.ctx
        classes = inventory(ctx)
        described = classes.get(ctx.class_name or "")
        if described is None:
            return
        safe_attrs = {a for a, layer in described.attributes.items() if layer.kind in OUTPUT_NOT_SAVED}

        def fresh(expr: cst.BaseExpression) -> bool:
            return isinstance(expr, cst.Call) and _self_attr(expr.func) in safe_attrs

        for block in _blocks_of(function):
            previous: Optional[cst.CSTNode] = None
            for statement in block:
                self._check_statement(statement, previous, fresh, function)
                previous = statement

    def _check_statement(self, statement, previous, fresh, function: cst.FunctionDef) -> None:
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return
        small = statement.body[0]
        direct: Optional[cst.BaseExpression] = None  # the statement's own value: `x = F.relu(x)`
        target: Optional[str] = None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            target, direct = small.targets[0].target.value, small.value
        elif isinstance(small, cst.Return):
            direct = small.value
        elif not isinstance(small, cst.Expr):
            return
        for call in [n for n in [small, *code_descendants(small)] if type(n) is cst.Call]:
            if not self._functional_inplace(call) or _inside_lambda(small, call):
                continue
            self._check_call(call, statement, previous, fresh, function, target if call is direct else None, call is direct)

    def _functional_inplace(self, call: cst.Call) -> bool:
        """`F.relu(x, ...)` or another functional form with an `inplace` parameter (the cheap test first)."""
        if not call.args or call.args[0].keyword or call.args[0].star:
            return False
        qualified = self.ctx.resolve(call.func) or ""
        module, _, function_name = qualified.rpartition(".")
        return module == "torch.nn.functional" and function_name in INPLACE_FUNCTIONS

    def _check_call(self, call: cst.Call, statement, previous, fresh, function, target, is_direct: bool) -> None:
        if not call.args or call.args[0].keyword or call.args[0].star:
            return
        qualified = self.ctx.resolve(call.func) or ""
        module, _, function_name = qualified.rpartition(".")
        if module != "torch.nn.functional" or function_name not in INPLACE_FUNCTIONS:
            return
        argument, value = inplace_argument(call, INPLACE_FUNCTIONS[function_name])
        if value is not False or (argument is not None and _statement_has_comment(statement)):
            return
        source = call.args[0].value
        if fresh(source):  # a temporary: `F.relu(self.bn(x))`, also nested in another call
            after = _self_attr(source.func)  # type: ignore[union-attr]
        elif is_direct and isinstance(source, cst.Name) and _binds_fresh(previous, source.value, fresh):
            if target != source.value and _occurrences(function, source.value) != 2:
                return  # used again later (or bound elsewhere): not provably dead
            after = _self_attr(previous.body[0].value.func)  # type: ignore[union-attr]
        else:
            return
        message = f"`F.{function_name}` on the fresh output of `self.{after}` can run in place: `inplace=True` {_EFFECT}"
        fix = self.replace(call, with_inplace(call, INPLACE_FUNCTIONS[function_name]), "Add `inplace=True`")
        self.report(call, message, fix)


def _inside_lambda(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    for node in code_descendants(root):
        if type(node) is cst.Lambda and any(n is target for n in code_descendants(node)):
            return True
    return False


# ---------------------------------------------------------------------------- helpers


def _sequence_elements(call: cst.Call, ctx) -> list[tuple[cst.BaseExpression, Optional[cst.CSTNode]]]:
    """The layers of `nn.Sequential(...)` in order, each with the node whose comments belong to it."""
    if len(call.args) == 1 and not call.args[0].star and isinstance(call.args[0].value, cst.Call):
        inner = call.args[0].value
        from memlint.analysis.inventory import resolve_global

        if resolve_global(ctx, inner.func) in ("collections.OrderedDict", "typing.OrderedDict") and inner.args:
            display = inner.args[0].value
            if isinstance(display, (cst.List, cst.Tuple)):
                pairs = []
                for element in display.elements:
                    if isinstance(element.value, cst.Tuple) and len(element.value.elements) == 2:
                        pairs.append((element.value.elements[1].value, element))
                    else:
                        return []
                return pairs
            return []
    elements: list[tuple[cst.BaseExpression, Optional[cst.CSTNode]]] = []
    for argument in call.args:
        if argument.keyword is not None:
            return []
        if argument.star == "*" and isinstance(argument.value, (cst.List, cst.Tuple)):
            elements.extend((e.value, e) for e in argument.value.elements)
        elif argument.star:
            elements.append((argument.value, None))  # unknown layers: breaks adjacency
        else:
            elements.append((argument.value, argument))
    return elements


def _has_comment(node: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Comment) for n in descendants(node))


def _statement_has_comment(statement: cst.SimpleStatementLine) -> bool:
    return statement.trailing_whitespace.comment is not None or any(l.comment for l in statement.leading_lines)


def _self_attr(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return expr.attr.value
    return None


def _binds_fresh(previous, name: str, fresh) -> bool:
    if not isinstance(previous, cst.SimpleStatementLine) or len(previous.body) != 1:
        return False
    small = previous.body[0]
    return (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and small.targets[0].target.value == name
        and fresh(small.value)
    )


def _occurrences(function: cst.FunctionDef, name: str) -> int:
    return sum(1 for n in code_descendants(function.body) if type(n) is cst.Name and n.value == name)


def _blocks_of(function: cst.FunctionDef):
    """Every statement list in the function's body (nested blocks too, not nested functions)."""
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in _NO_BLOCKS_INSIDE:
            continue
        if kind is cst.IndentedBlock:
            yield node.body
        stack.extend(code_children(node))


# A nested function or class has blocks of its own; a simple statement line has no block in it.
_NO_BLOCKS_INSIDE = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.SimpleStatementLine})


def _unpacked_into_sequential_only(function: cst.FunctionDef, name: str, ctx) -> bool:
    """Is the list `name` turned into `nn.Sequential(*name)` and otherwise only extended?"""
    nodes = list(code_descendants(function.body))
    # `type(...) is` for isinstance: libcst's concrete node classes have no subclasses.
    if not any(
        type(node) is cst.Call
        and any(a.star == "*" and type(a.value) is cst.Name and a.value.value == name for a in node.args)
        and torch_nn_name(ctx, node.func) == "Sequential"
        for node in nodes
    ):
        return False
    for node in nodes:
        kind = type(node)
        if kind is cst.Call and any(type(a.value) is cst.Name and a.value.value == name for a in node.args):
            if torch_nn_name(ctx, node.func) != "Sequential":
                return False  # passed somewhere else as well
        elif kind is cst.Subscript and type(node.value) is cst.Name and node.value.value == name:
            return False  # `layers[-1]` replaced or read
        elif kind is cst.Attribute and type(node.value) is cst.Name and node.value.value == name:
            if node.attr.value not in ("append", "extend"):
                return False
    return True


def _class_node(module: cst.Module, name: str) -> Optional[cst.ClassDef]:
    for node in code_descendants(module):
        if isinstance(node, cst.ClassDef) and node.name.value == name:
            return node
    return None


def _used_other_than_called(class_node: Optional[cst.ClassDef], attribute: str) -> bool:
    """Is `self.<attribute>` used in the class in any way but being called or assigned?"""
    if class_node is None:
        return True
    for node, parents in code_with_parents(class_node):
        if not (isinstance(node, cst.Attribute) and node.attr.value == attribute and _self_attr(node) == attribute):
            continue
        parent = parents[-1]
        if isinstance(parent, cst.Call) and parent.func is node:
            continue
        if isinstance(parent, cst.AssignTarget):
            continue
        return True
    return False
