"""ML011 retain-graph-in-loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from memlint.analysis.bindings import target_names
from memlint.analysis.call_edits import remove_argument
from memlint.analysis.graph_reach import built_after
from memlint.analysis.iteration import every_iteration, names_in, own_statements
from memlint.analysis.precision_api import keyword, retaining_argument
from memlint.analysis.tables import AUTOGRAD_FUNCTIONS, BACKWARD_METHODS
from memlint.analysis.walk import code_descendants
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml011_retain_graph_in_loop.meta import META


# Objects whose `.backward(loss)` runs backward through their argument.
_BACKWARD_WRAPPERS = frozenset({"accelerator", "fabric", "engine", "model_engine", "deepspeed", "strategy", "trainer"})


@dataclass
class _Backward:
    node: cst.Call
    function: Optional[tuple]
    loops: tuple  # enclosing loops of the same function, outermost first
    retains: bool
    every_iteration: bool
    # the earlier retaining backwards of the same iteration whose graph this one cannot reach
    # (analysis/graph_reach.py: its loss is built only from values computed after them)
    clear_of: frozenset = frozenset()


class RetainGraphInLoop(Rule):
    """
    ## What it does
    Finds `loss.backward(retain_graph=True)` on every iteration of a loop when no second backward
    goes through the graph. The call runs on every iteration when it is in the loop body or in a
    function the loop calls unconditionally in the same file; no second backward or
    `torch.autograd.grad` call goes through the same graph when nothing else in the loop, in the
    function, or in the helpers the loop calls runs backward.

    When a name is fed back into the call that rebinds it (`out, hidden = model(x, hidden)`), the
    graph is carried across iterations: the message says to detach that state, and there is no fix
    (dropping `retain_graph=True` alone would make the next backward fail).

    The spelling before PyTorch 0.4, `loss.backward(retain_variables=True)` (deprecated in 0.2,
    removed in 0.4), is the same request and is reported the same way (`tables.RETAIN_GRAPH_KEYWORDS`).

    The loss is followed through a reduction (`loss.mean().backward(retain_graph=True)`) and a
    scaler (`scaler.scale(loss).backward(...)`). `torch.autograd.grad(loss, params,
    retain_graph=True)` keeps the graph as backward does; with `create_graph=` (MAML, gradient
    penalties: the gradients are differentiated again) it is not reported.

    Not reported: a loss computed before the loop (the same graph is backpropagated on every
    iteration, which needs the retained graph); a second backward in the same loop or function (GAN
    updates, multi-loss training, gradient penalties: they need the retained graph), unless it is
    a later statement of the same iteration whose loss is built only from values computed after
    the first backward or known to carry no history (`analysis/graph_reach.py`: infoGAN's generator
    step re-runs G and D after the discriminator's `backward(retain_graph=True)`, from noise and
    labels). Two networks whose forwards both ran before the first backward (PPO's critic loss
    retained while the actor's loss goes through a separate network) are not told apart, and stay
    silent; a backward in a
    helper called from a loop that rebinds a name from a call on its own previous value (`x =
    layer(x)`: each iteration's graph extends the last, and the helper's loss may reach back through
    it); a backward behind an `if` or in an exception handler; `retain_graph=` given as anything but
    the literal `True`.

    ## Why is this bad?
    `retain_graph=True` keeps the buffers autograd saved for backward (the activations) after
    backward has used them. With no second backward to use them, each iteration's activations stay
    alive until the next iteration rebinds the loss, so the loop holds two steps' activations at
    its peak instead of one. When the graph is shared across iterations (a recurrent hidden state
    that is never detached), it grows every iteration instead.

    ## Example
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward(retain_graph=True)
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    Dropping `retain_graph=True` is unsafe: when a later iteration backpropagates through part of
    this iteration's graph (a hidden state carried across iterations without `.detach()`), backward
    then raises "Trying to backward through the graph a second time"; the right fix there is to
    detach the carried state. On the pre-0.4 `retain_variables=True` the fix drops that argument
    too (`loss.backward()`); it never rewrites it into `retain_graph=`, so the code keeps running on the
    version it was written for.

    ## Measured effect
    `fixtures/ml011_retain_graph.py`, PyTorch 2.13 on CPU, exact tensor-storage tracker, `memlint confirm fixtures` (docs/measured-savings.md): with `retain_graph=True` on every
    iteration the peak is 16,629,852 B; after memlint's fix, 14,518,360 B (2.01 MiB, 12.7% less:
    one step's saved activations), same result.
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "unsafe"

    VALID = [
        Valid(  # the generator step backpropagates through `fake` of the discriminator step's graph: the retained graph is needed
            """
import torch
from torch import nn
G, D, bce = nn.Linear(100, 784), nn.Linear(784, 1), nn.BCEWithLogitsLoss()
ones, zeros = torch.ones(64, 1), torch.zeros(64, 1)
for x, _ in loader:
    z = torch.rand(64, 100)
    fake = G(z)
    d_loss = bce(D(x), ones) + bce(D(fake), zeros)
    d_loss.backward(retain_graph=True)
    d_opt.step()
    g_loss = bce(D(fake), ones)
    g_loss.backward()
    g_opt.step()
"""
        ),
        Valid(  # two losses through one graph
            """
import torch
for x, y in loader:
    out = model(x)
    loss_a = criterion(out, y)
    loss_b = aux(out)
    loss_a.backward(retain_graph=True)
    loss_b.backward()
    optimizer.step()
"""
        ),
        Valid(  # a MAML inner step: the gradients are differentiated again (create_graph)
            """
import torch
def adapt(model, tasks, criterion, lr):
    for x, y in tasks:
        loss = criterion(model(x), y)
        grads = torch.autograd.grad(loss, list(model.parameters()), create_graph=True, retain_graph=True)
        fast = [p - lr * g for p, g in zip(model.parameters(), grads)]
""",
        ),
        Valid(  # gradient penalty with autograd.grad in the same function
            """
import torch
def train(loader):
    for x in loader:
        d = critic(x)
        d.mean().backward(retain_graph=True)
        grads = torch.autograd.grad(d.sum(), x)
        optimizer.step()
"""
        ),
        Valid(  # not in a loop
            """
import torch
loss = criterion(model(x), y)
loss.backward(retain_graph=True)
"""
        ),
        Valid(  # only on some iterations
            """
import torch
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y)
    if step % 4 == 0:
        loss.backward(retain_graph=True)
"""
        ),
        Valid(
            """
import torch
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward(retain_graph=False)
"""
        ),
        Valid(  # the same graph backpropagated again and again: retain_graph is required
            """
import torch
loss = model(x).sum()
for _ in range(1000):
    loss.backward(retain_graph=True)
"""
        ),
        Valid(  # the caller's loop stacks layers on the last output: each backward goes through earlier graphs
            """
import torch
def show_receptive_field(img, out):
    loss = out[0, :, 5, 5].sum()
    loss.backward(retain_graph=True)
    grads = img.grad.abs()
    img.grad.fill_(0)
    return grads
img = torch.zeros(1, 1, 11, 11, requires_grad=True)
out = img
for _ in range(4):
    out = conv(out)
    show_receptive_field(img, out)
"""
        ),
    ]

    INVALID = [
        Invalid(  # gradients taken with autograd.grad, keeping the graph for nothing (issue 27)
            """
import torch
def train(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        grads = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
        for p, g in zip(model.parameters(), grads):
            p.grad = g
        optimizer.step()
""",
            line=6,
            column=17,
            unsafe=True,
            message="torch.autograd.grad(retain_graph=True)",
            fixed="""
import torch
def train(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        grads = torch.autograd.grad(loss, list(model.parameters()))
        for p, g in zip(model.parameters(), grads):
            p.grad = g
        optimizer.step()
""",
        ),
        Invalid(  # the later backward's loss comes from a fresh forward after the first backward: it cannot reach the retained graph (infoGAN, issue 27)
            """
import torch
from torch import nn
G, D, bce = nn.Linear(100, 784), nn.Linear(784, 1), nn.BCEWithLogitsLoss()
ones, zeros = torch.ones(64, 1), torch.zeros(64, 1)
for x, _ in loader:
    z = torch.rand(64, 100)
    fake = G(z)
    d_loss = bce(D(x), ones) + bce(D(fake), zeros)
    d_loss.backward(retain_graph=True)
    d_opt.step()
    fake = G(z)
    g_loss = bce(D(fake), ones)
    g_loss.backward()
    g_opt.step()
""",
            line=9,
            column=5,
            unsafe=True,
            fixed="""
import torch
from torch import nn
G, D, bce = nn.Linear(100, 784), nn.Linear(784, 1), nn.BCEWithLogitsLoss()
ones, zeros = torch.ones(64, 1), torch.zeros(64, 1)
for x, _ in loader:
    z = torch.rand(64, 100)
    fake = G(z)
    d_loss = bce(D(x), ones) + bce(D(fake), zeros)
    d_loss.backward()
    d_opt.step()
    fake = G(z)
    g_loss = bce(D(fake), ones)
    g_loss.backward()
    g_opt.step()
""",
        ),
        Invalid(
            """
import torch
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward(retain_graph=True)
    optimizer.step()
""",
            line=5,
            column=5,
            unsafe=True,
            message="retain_graph=True",
            fixed="""
import torch
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
        ),
        Invalid(  # the pre-0.4 spelling of retain_graph (MCD_DA's solver); `img_t = Variable(img_t)` wraps this iteration's batch, no carried state
            """
import torch
from torch.autograd import Variable
for batch_idx, data in enumerate(datasets):
    img_s = data["S"]
    img_t = data["T"]
    img_s = Variable(img_s.cuda())
    img_t = Variable(img_t.cuda())
    reset_grad()
    feat_s = G(img_s)
    loss_s = criterion(C1(feat_s), label_s) + criterion(C2(feat_s), label_s)
    loss_s.backward(retain_variables=True)
    feat_t = G(img_t)
    opt_g.step()
""",
            line=11,
            column=5,
            unsafe=True,
            message="backward(retain_variables=True)` (the pre-0.4 spelling of `retain_graph=True`) on every iteration with no second backward",
            fixed="""
import torch
from torch.autograd import Variable
for batch_idx, data in enumerate(datasets):
    img_s = data["S"]
    img_t = data["T"]
    img_s = Variable(img_s.cuda())
    img_t = Variable(img_t.cuda())
    reset_grad()
    feat_s = G(img_s)
    loss_s = criterion(C1(feat_s), label_s) + criterion(C2(feat_s), label_s)
    loss_s.backward()
    feat_t = G(img_t)
    opt_g.step()
""",
        ),
        Invalid(  # in a helper the loop calls; another keyword stays
            """
import torch
def step(model, x, y, opt):
    loss = model(x, y)
    loss.backward(inputs=list(model.parameters()), retain_graph=True)
    opt.step()
for x, y in loader:
    step(model, x, y, opt)
""",
            line=4,
            column=5,
            unsafe=True,
            fixed="""
import torch
def step(model, x, y, opt):
    loss = model(x, y)
    loss.backward(inputs=list(model.parameters()))
    opt.step()
for x, y in loader:
    step(model, x, y, opt)
""",
        ),
        Invalid(  # a recurrent state carried across iterations: detach it, no fix
            """
import torch
hidden = None
for x, y in loader:
    out, hidden = rnn_model(x, hidden)
    loss = criterion(out, y)
    loss.backward(retain_graph=True)
    optimizer.step()
""",
            line=6,
            column=5,
            message="hidden = hidden.detach()",
        ),
        Invalid(  # `hidden = hidden.cuda()` moves the last iteration's state, it does not bind it afresh: still carried, detach it, no fix
            """
import torch
def train(model, loader, optimizer, hidden):
    for x, y in loader:
        hidden = hidden.cuda()
        out, hidden = model(x, hidden)
        loss = (out - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
""",
            line=8,
            column=9,
            message="hidden = hidden.detach()",
        ),
        Invalid(  # through a reduction of the loss (minimalRL's PPO-LSTM), recomputed every epoch
            """
import torch
for i in range(K_epoch):
    v_s = model.v(s, first_hidden)
    loss = F.smooth_l1_loss(v_s, td_target.detach())
    optimizer.zero_grad()
    loss.mean().backward(retain_graph=True)
    optimizer.step()
""",
            line=6,
            column=5,
            unsafe=True,
            fixed="""
import torch
for i in range(K_epoch):
    v_s = model.v(s, first_hidden)
    loss = F.smooth_l1_loss(v_s, td_target.detach())
    optimizer.zero_grad()
    loss.mean().backward()
    optimizer.step()
""",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._backwards: list[_Backward] = []

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        func = node.func
        is_method = isinstance(func, cst.Attribute) and func.attr.value in BACKWARD_METHODS
        qualified = None if is_method else ctx.resolve(func)
        if not is_method and qualified not in AUTOGRAD_FUNCTIONS:
            return
        retain = retaining_argument(node)  # `retain_graph=True`, or the pre-0.4 `retain_variables=True`
        # `torch.autograd.grad(loss, params, retain_graph=True)` keeps the graph as backward's does;
        # with `create_graph=` the gradients are differentiated again (MAML, gradient penalties)
        retains = (
            not (qualified == "torch.autograd.grad" and keyword(node, "create_graph") is not None)
            and retain is not None
            and isinstance(retain.value, cst.Name)
            and retain.value.value == "True"
        )
        loops = tuple(ctx.loops)
        self._backwards.append(
            _Backward(node, ctx.function_key, loops, retains, every_iteration(ctx) and self._fresh_loss(node), self._clear_of(node, loops))
        )

    def _clear_of(self, node: cst.Call, loops: tuple) -> frozenset:
        """The earlier retaining backwards of this loop's iteration that this backward's loss cannot
        reach (built only from values computed after them, or carrying no history)."""
        if not loops:
            return frozenset()
        earlier = [
            b for b in self._backwards
            if b.retains and b.function == self.ctx.function_key and len(b.loops) == len(loops)
            and all(x is y for x, y in zip(b.loops, loops))
        ]  # fmt: skip
        if not earlier:
            return frozenset()
        names = _loss_names(node, self.ctx)
        return frozenset(id(b.node) for b in earlier if built_after(self.ctx, loops[-1], b.node, node, names))

    def _fresh_loss(self, node: cst.Call) -> bool:
        """Is the loss recomputed on every iteration (bound in the loop, or locally in a helper)?

        `for _ in range(n): loss.backward(retain_graph=True)` with `loss` computed before the loop
        backpropagates the same graph again and again: there retain_graph is required.
        """
        ctx = self.ctx
        names = _loss_names(node, ctx)
        if not names:
            return False
        if ctx.in_loop:
            return all(ctx.bound_in_current_loop(name) for name in names)
        return all(name in ctx.frame.names and not ctx.is_param(name) for name in names)

    def finish(self, facts) -> None:
        for candidate in self._backwards:
            if not candidate.retains or not candidate.every_iteration:
                continue
            if candidate.loops:
                loop = candidate.loops[-1]
            elif candidate.function is not None and candidate.function in facts.loop_called_functions:
                loop = None
                if any(site.loop is not None and _rebinds_from_itself(site.loop) for site in facts.call_sites.get(candidate.function, ())):
                    # The caller's loop stacks each iteration on the last (`x = layer(x)`): the
                    # helper's loss may reach back through earlier iterations' graph, which then
                    # must be retained.
                    continue
            else:
                continue
            if self._another_backward(candidate, loop, facts):
                continue
            arg = retaining_argument(candidate.node)
            spelled = f"{arg.keyword.value}=True"  # type: ignore[union-attr]
            # the pre-0.4 spelling: the fix drops it as it drops `retain_graph=True` (never rewrites it)
            old = " (the pre-0.4 spelling of `retain_graph=True`)" if arg.keyword.value != "retain_graph" else ""  # type: ignore[union-attr]
            carried = _carried_state(loop) if loop is not None else None
            if carried is not None:
                # Dropping retain_graph would make the next backward fail: the state must be detached.
                self.report(
                    candidate.node,
                    f"`backward({spelled})`{old} on every iteration while `{carried}` carries each iteration's "
                    "graph into the next: the retained graph grows with every iteration; detach "
                    f"`{carried}` at the start of each iteration (`{carried} = {carried}.detach()`) and drop "
                    f"`{spelled}`",
                )
                continue
            fix = self.replace(candidate.node, remove_argument(candidate.node, arg), f"Drop `{spelled}`", safe=False)
            called = "torch.autograd.grad" if self.ctx.resolve(candidate.node.func) == "torch.autograd.grad" else "backward"
            self.report(
                candidate.node,
                f"`{called}({spelled})`{old} on every iteration with no second backward through the same "
                "graph: the activations saved for backward stay alive until the next iteration rebinds the "
                f"loss (two steps' activations at the peak); drop `{spelled}`",
                fix,
            )

    def _another_backward(self, candidate: _Backward, loop, facts) -> bool:
        helpers = {
            key
            for key, sites in facts.call_sites.items()
            if any(site.callers[-1:] == (candidate.function,) if candidate.function else not site.callers for site in sites)
        }
        for other in self._backwards:
            if other is candidate or id(candidate.node) in other.clear_of:
                continue  # (a later backward of a fresh forward does not need this graph)
            if other.function == candidate.function or other.function in helpers:
                return True
        return False


def _carried_state(loop) -> Optional[str]:
    """`out, hidden = model(x, hidden)` in the loop: a name fed back into the call that rebinds it.
    Not a name the iteration binds afresh before that call (the loop's target, or an unconditional
    statement of the body above it: `img = data["T"]` then `img = Variable(img)` wraps this
    iteration's batch, which carries nothing over)."""
    fresh = _bound_afresh_before(loop)
    for node in own_statements(loop):
        if not isinstance(node, cst.Assign) or not isinstance(node.value, cst.Call):
            continue
        targets = set()
        for target in node.targets:
            inner = target.target
            elements = inner.elements if isinstance(inner, (cst.Tuple, cst.List)) else [inner]
            for element in elements:
                value = element.value if isinstance(element, (cst.Element, cst.StarredElement)) else element
                if isinstance(value, cst.Name):
                    targets.add(value.value)
        for arg in node.value.args:
            if isinstance(arg.value, cst.Name) and arg.value.value in targets - fresh.get(id(node), frozenset()):
                return arg.value.value
    return None


def _bound_afresh_before(loop) -> dict[int, frozenset]:
    """id(assignment at the top of the loop's body) -> the names bound before it on every iteration:
    the loop's target and the plain assignments of the body's earlier statements.  An assignment
    that reads the name it binds (`hidden = hidden.cuda()`) carries the last iteration's value on,
    unless the name was already bound afresh above it (`img = data["T"]; img = Variable(img)`)."""
    bound = set(target_names(loop.target)) if isinstance(loop, cst.For) else set()
    found: dict[int, frozenset] = {}
    for statement in getattr(loop.body, "body", ()):
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is cst.Assign:
                found[id(small)] = frozenset(bound)
                read = set(names_in(small.value))
                bound.update(name for target in small.targets for name in target_names(target.target) if name not in read)
    return found


def _loss_names(call: cst.Call, ctx) -> list[str]:
    """The variables the backward goes through: `loss` in `loss.backward()`,
    `scaler.scale(loss).backward()`, `accelerator.backward(loss)`, `torch.autograd.backward([loss])`."""
    func = call.func
    positional = [a.value for a in call.args if a.keyword is None]
    if ctx.resolve(func) == "torch.autograd.grad":
        positional = positional[:1]  # `torch.autograd.grad(loss, inputs)`: through the outputs, to the inputs
    exprs = positional
    if isinstance(func, cst.Attribute) and ctx.resolve(func) is None:
        receiver = func.value
        wrapper = func.attr.value == "manual_backward" or (
            isinstance(receiver, (cst.Name, cst.Attribute)) and _last(receiver) in _BACKWARD_WRAPPERS
        )
        if isinstance(receiver, cst.Call):
            inner = [a.value for a in receiver.args if a.keyword is None]
            if inner:  # scaler.scale(loss).backward()
                exprs = inner
            elif isinstance(receiver.func, cst.Attribute):  # loss.mean().backward(): through the loss
                exprs = [receiver.func.value]
            else:
                exprs = []
        elif not wrapper:  # loss.backward(gradient): the receiver is the loss
            exprs = [receiver]
    return [name for expr in exprs for name in _root_names(expr, ctx)]


def _last(expr: cst.BaseExpression) -> str:
    return expr.value if isinstance(expr, cst.Name) else expr.attr.value  # type: ignore[union-attr]


def _root_names(expr: cst.BaseExpression, ctx) -> list[str]:
    if isinstance(expr, cst.Name):
        return [] if ctx.resolve(expr) is not None or expr.value == "self" else [expr.value]
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [n for element in expr.elements for n in _root_names(element.value, ctx)]
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return _root_names(expr.value, ctx)
    return []


def _rebinds_from_itself(loop) -> bool:
    """`x = layer(x)`, `h = conv(h) + v` in the loop: a name rebound from a call on its own previous
    value, so each iteration's graph extends the last one's (`step = step + 1` is not)."""
    for node in own_statements(loop):
        if not isinstance(node, cst.Assign):
            continue
        targets = {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}
        if not targets:
            continue
        for call in [node.value, *code_descendants(node.value)]:
            if isinstance(call, cst.Call) and any(not targets.isdisjoint(names_in(a.value)) for a in call.args):
                return True
    return False
