"""ML004 retained-intermediates."""

from __future__ import annotations

from collections import Counter
from typing import Optional

import libcst as cst

from memlint.analysis.chains import longest_chain
from memlint.analysis.tables import VIEW_METHODS
from memlint.analysis.walk import code_children, code_descendants, code_with_parents
from memlint.diagnostics import Severity
from memlint.rule import Invalid, NodeFix, Rule, Valid
from memlint.rules.ml004_retained_intermediates.meta import META

_BLOCKERS = (cst.Lambda, cst.FunctionDef, cst.ClassDef, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class RetainedIntermediates(Rule):
    """
    ## What it does
    Finds a `forward` that binds a chain of distinct names, each used exactly once by the next
    step, so that all of them stay alive until the function returns:
    `out_1 = self.conv1(x); out_2 = self.conv2(out_1); out_3 = self.conv3(out_2)`. Reported once,
    on the `def forward` line, listing the names of the longest chain (at least
    `min-retained-chain` names, default 3).

    Not reported: names rebound in place (`x = layer(x)`); values that must coexist (a name used
    twice, e.g. a branch later combined by `torch.cat` or `+`, or also returned); chains of views
    (`.view`, `.permute`, ...: they allocate nothing); chains behind `if` / `for` blocks. Accepted
    limits: long skip connections are not reported (keeping a skip alive is usually required; the
    remedy, checkpointing, is a design decision), and only straight-line statements at the top of
    `forward` are followed.

    ## Why is this bad?
    A local name keeps its tensor alive until it is rebound or the function returns. Reusing one
    name lets each intermediate be freed as soon as the next step has consumed it.

    ## Example
    ```python
    def forward(self, x):
        out_1 = self.conv1(x)
        out_2 = self.conv2(out_1)
        out_3 = self.conv3(out_2)
        return out_3
    ```

    ## Use instead
    ```python
    def forward(self, x):
        x = self.conv1(x)
        x = self.conv2(x)
        x = self.conv3(x)
        return x
    ```

    ## Fix safety
    Renames the chain to one name: the function's input when it is not used after the chain
    starts, otherwise the chain's first name. Safe: every renamed name is bound once and used once,
    by the next step, and nothing else (a closure, a comprehension, `locals()`, `del`) refers to it;
    when something might, there is no fix.

    ## Measured effect
    Three convolutions with named `out_1..out_3` versus reusing `x`, PyTorch 2.13 on CPU (exact
    tensor-storage tracker): a training step peaks at 83.2 MiB either way (each layer saves its
    input for backward, so the tensors are alive anyway); the forward under `torch.no_grad()` peaks
    at 49.1 MiB versus 47.1 MiB (one activation). The gain is for inference, or when the retained
    tensor is not saved for backward.

    Fixtures, `memlint confirm fixtures` (PyTorch 2.13.0+cpu, exact tensor-storage tracker;
    docs/measured-savings.md): four Linear layers (512-2048-2048-2048-10), batch 256,
    `out_1..out_3` versus reusing `x`: training step 78,334,040 B before, 78,334,040 B after (no
    change); forward under `torch.no_grad()` 44,681,256 B before, 42,573,864 B after (2.0 MiB, 4.7%
    saved): one 256x2048 activation.
    """

    meta = META
    severity = Severity.INFO
    fix_safety = "safe"

    VALID = [
        Valid(  # rebinding one name
            """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        x = self.conv1(x)
        x = self.conv2(x)
        x = self.conv3(x)
        return x
"""
        ),
        Valid(  # the values must coexist: combined later
            """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        a = self.conv1(x)
        b = self.conv2(a)
        c = self.conv3(b)
        return torch.cat([a, b, c], dim=1)
"""
        ),
        Valid(  # only two chained names
            """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        h = self.fc1(x)
        y = self.fc2(h)
        return y
"""
        ),
        Valid(  # views allocate nothing
            """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        a = x.view(x.size(0), -1)
        b = a.permute(1, 0)
        c = b.reshape(-1)
        return self.fc(c)
"""
        ),
        Valid(  # a longer minimum configured
            """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        out_1 = self.conv1(x)
        out_2 = self.conv2(out_1)
        out_3 = self.conv3(out_2)
        return out_3
""",
            config={"min-retained-chain": 4},
        ),
        Valid(  # metadata, not activations: position ids built from the input's shape
            """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        grid = torch.tensor([[1, x.shape[2], x.shape[3]]])
        ids = make_position_ids(grid)
        pos = self.rotary(ids)
        return self.blocks(x, pos)
"""
        ),
        Valid(  # not a forward
            """
import torch
def helper(conv1, conv2, conv3, x):
    out_1 = conv1(x)
    out_2 = conv2(out_1)
    out_3 = conv3(out_2)
    return out_3
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        out_1 = self.conv1(x)
        out_2 = self.conv2(out_1)
        out_3 = self.conv3(out_2)
        return out_3
""",
            line=3,
            column=5,
            message="`out_1` -> `out_2` -> `out_3`",
            fixed="""
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        x = self.conv1(x)
        x = self.conv2(x)
        x = self.conv3(x)
        return x
""",
        ),
        Invalid(  # the input is used after the chain starts: reuse the chain's first name
            """
import torch
import torch.nn.functional as F
class Block(torch.nn.Module):
    def forward(self, x):
        h1 = self.norm(x)  # pre-norm
        h2 = F.gelu(self.fc1(h1))
        h3 = self.fc2(h2)
        return x + h3
""",
            line=4,
            column=5,
            fixed="""
import torch
import torch.nn.functional as F
class Block(torch.nn.Module):
    def forward(self, x):
        h1 = self.norm(x)  # pre-norm
        h1 = F.gelu(self.fc1(h1))
        h1 = self.fc2(h1)
        return x + h1
""",
        ),
        Invalid(  # a closure refers to a name of the chain: reported without a fix
            """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        a = self.l1(x)
        b = self.l2(a)
        c = self.l3(b)
        return (lambda: c)()
""",
            line=3,
            column=5,
        ),
    ]

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value != "forward" or self.ctx.class_name is None or not isinstance(node.body, cst.IndentedBlock):
            return
        chain, source = _longest_chain(node)
        if len(chain) < self.option("min-retained-chain"):
            return
        names = " -> ".join(f"`{n}`" for n in chain)
        message = (
            f"`forward` keeps {names} alive until it returns, though each is used once by the next step; "
            "reusing one name frees each as soon as it is consumed. Under autograd this saves nothing when the "
            "next layer saves its input anyway; under no-grad (inference), or when a retained tensor is not "
            "saved for backward, it saves one activation per retained tensor"
        )
        self.report(node, message, _fix(node, chain, source))


def _longest_chain(function: cst.FunctionDef) -> tuple[list[str], Optional[str]]:
    bound: Counter[str] = Counter()
    used: Counter[str] = Counter()
    for node, parents in code_with_parents(function.body, nearest=4):  # all _is_store looks at
        if type(node) is cst.Name:
            parent = parents[-1]
            kind = type(parent)
            if kind is cst.Attribute and parent.attr is node:
                continue
            if kind is cst.Arg and parent.keyword is node:
                continue
            if _is_store(node, parents):
                bound[node.value] += 1
            else:
                used[node.value] += 1
    params = function.params
    for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
        bound[param.name.value] += 1
    # Each allocating assignment of a name bound and used once, with the single earlier such name
    # it consumes (none when it reads zero or several of them): the links of a chain.
    steps: list[tuple[str, list[str]]] = []
    earlier: set[str] = set()
    single = {n for n in bound if bound[n] == 1 and used[n] == 1}
    activations = _activation_names(function)
    for statement in function.body.body:  # type: ignore[union-attr]
        target, value = _simple_assignment(statement)
        if target is None or target not in single or target not in activations or not _allocates(value):
            continue
        names_in = [n.value for n in code_descendants(value) if type(n) is cst.Name]
        inputs = [n for n in names_in if n in single and n in earlier]
        steps.append((target, inputs if len(inputs) == 1 else []))
        earlier.add(target)
    best = longest_chain(steps)
    if len(best) < 2:
        return [], None
    first_value = _value_of(function, best[0])
    source = _first_argument_name(first_value) if first_value is not None else None
    return best, source


def _activation_names(function: cst.FunctionDef) -> set[str]:
    """Names that may hold activations: forward's inputs and what is computed from them (not
    through `.shape`, `.size()`, `.dtype`, `.device` or `len()`, which give metadata)."""
    params = function.params
    names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]} - {"self", "cls"}
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            names.add(extra.name.value)
    for statement in function.body.body:  # type: ignore[union-attr]
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and small.value is not None:
                    if _refers_to_data(small.value, names):
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        names.update(n.value for t in targets for n in [t, *code_descendants(t)] if type(n) is cst.Name)
        else:  # names bound in nested blocks: cannot tell, assume they may hold data
            names.update(n.value for n in code_descendants(statement) if type(n) is cst.Name)
    return names


def _refers_to_data(expr: cst.CSTNode, names: set[str]) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value in names
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("shape", "dtype", "device", "ndim", "is_cuda"):
        return False
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("size", "dim", "numel", "get_device"):
            return False
        if isinstance(func, cst.Name) and func.value == "len":
            return False
    return any(_refers_to_data(child, names) for child in code_children(expr))


def _is_store(node: cst.Name, parents: tuple) -> bool:
    parent = parents[-1]
    kind = type(parent)  # concrete libcst node classes have no subclasses: `type(...) in` is isinstance
    if kind in _TARGET_HOLDERS and getattr(parent, "target", None) is node:
        return True
    if kind in _BINDERS:
        return True
    return kind in _UNPACKING and any(type(p) in _UNPACKING_TARGETS for p in parents[-4:])


_TARGET_HOLDERS = frozenset({cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor})
_BINDERS = frozenset({cst.AsName, cst.Param, cst.FunctionDef, cst.ClassDef})
_UNPACKING = frozenset({cst.Tuple, cst.List, cst.Element, cst.StarredElement})
_UNPACKING_TARGETS = frozenset({cst.AssignTarget, cst.For, cst.CompFor})


def _simple_assignment(statement: cst.CSTNode) -> tuple[Optional[str], Optional[cst.BaseExpression]]:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            return small.targets[0].target.value, small.value
    return None, None


def _allocates(value: Optional[cst.BaseExpression]) -> bool:
    """A call that produces a new tensor: a layer, a function; not a view method."""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value in VIEW_METHODS:
        return False
    return True


def _value_of(function: cst.FunctionDef, name: str) -> Optional[cst.BaseExpression]:
    for statement in function.body.body:  # type: ignore[union-attr]
        target, value = _simple_assignment(statement)
        if target == name:
            return value
    return None


def _first_argument_name(value: cst.BaseExpression) -> Optional[str]:
    if isinstance(value, cst.Call):
        for argument in value.args:
            if isinstance(argument.value, cst.Name) and not argument.keyword:
                return argument.value.value
            if isinstance(argument.value, cst.Call):
                return _first_argument_name(argument.value)
    return None


def _fix(function: cst.FunctionDef, chain: list[str], source: Optional[str]) -> Optional[NodeFix]:
    names = set(chain)
    for node in code_descendants(function.body):
        if isinstance(node, _BLOCKERS) and any(isinstance(n, cst.Name) and n.value in names for n in code_descendants(node)):
            return None  # a closure or comprehension refers to the chain
        if isinstance(node, cst.Del):
            return None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("locals", "vars", "eval", "exec"):
            return None
    params = {p.name.value for p in [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]}
    new = chain[0]
    if source is not None and source in params and not _used_after_chain_start(function, chain[0], source):
        new = source
    renamed = function.with_changes(body=function.body.visit(_Rename(names, new)))
    return Rule.replace(function, renamed, f"Reuse `{new}` for {', '.join(f'`{n}`' for n in chain)}")


def _used_after_chain_start(function: cst.FunctionDef, first: str, name: str) -> bool:
    started = False
    for statement in function.body.body:  # type: ignore[union-attr]
        target, value = _simple_assignment(statement)
        if started and any(isinstance(n, cst.Name) and n.value == name for n in code_descendants(statement)):
            return True
        if target == first:
            started = True
            if sum(1 for n in code_descendants(value) if isinstance(n, cst.Name) and n.value == name) > 1:
                return True
    return False


class _Rename(cst.CSTTransformer):
    def __init__(self, names: set[str], new: str) -> None:
        super().__init__()
        self.names = names
        self.new = new

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.new) if original.value in self.names else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)
