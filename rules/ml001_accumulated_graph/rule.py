"""ML001 accumulated-graph: a query of the semantic model's kept histories.

Which statement keeps what (`analysis.accumulating_statements`), whether it keeps a history across
iterations (`analysis.kept_histories`), how the accumulator is used once its scope is seen and whether
the history is kept on purpose (`analysis.kept_history_uses`), what the kept graph costs and how the
fix keeps the numbers (`analysis.kept_history_fix`): the rule only asks, in that order, and words the
finding."""

from __future__ import annotations

import libcst as cst

from memlint.analysis.accumulating_statements import accumulated_by
from memlint.analysis.fixes import method_call
from memlint.analysis.kept_histories import KeptHistory, kept_by_comprehension, kept_history
from memlint.analysis.kept_history_fix import graph_fate, keeping_method, related_places
from memlint.analysis.kept_history_uses import accumulator_uses, backpropagated_slots, escapes, kept_for_the_caller
from memlint.analysis.uses import Use
from memlint.diagnostics import Applicability, Severity
from memlint.rule import Harness, Invalid, NodeFix, Rule, Valid
from memlint.rules.ml001_accumulated_graph.meta import META
from memlint.pipeline.text import shorten


# The examples' harness (tests/test_fix_execution.py): stand-ins for the model, loss, optimizer and
# loaders the snippets take as given, and a `print` that records the numbers printed.  The fix
# keeps every number and drops the autograd history (a tensor may become a Python number), so the
# printed values are compared as numbers.
_STAND_INS = """
import torch
def _numbers(value):
    if isinstance(value, torch.Tensor):
        return value.detach().tolist()
    if isinstance(value, (list, tuple)):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    return value
printed = []
def print(*values, **kwargs):
    printed.append(_numbers(values))
model = net = torch.nn.Linear(3, 2)
criterion = loss_fn = torch.nn.MSELoss()
optimizer = opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = val_loader = train_loader = [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(3)]
labelled = [(torch.randn(4, 3), torch.tensor([0, 1, 1, 0])) for _ in range(3)]
data = [x for x, _ in loader]
device = "cpu"
"""
_OUTPUTS = """
import types
loader = [{"x": torch.randn(4, 3)} for _ in range(3)]
model = lambda x: types.SimpleNamespace(loss=net(x).pow(2).mean())
"""
_PLOT = """
import sys, types
plt = types.SimpleNamespace(plot=print)
sys.modules["matplotlib"] = types.SimpleNamespace(pyplot=plt)
sys.modules["matplotlib.pyplot"] = plt
"""


def _run(then: str = "", setup: str = "") -> Harness:
    # `.item()` moves the running sum from the tensor's float32 to Python's double: equal within
    # float32 rounding (as `memlint confirm` compares results), not bit for bit.  `.detach()` is exact.
    return Harness(setup=_STAND_INS + setup, then=then + "\nresult = printed", rtol=1e-5)


class AccumulatedGraph(Rule):
    """
    ## What it does
    Finds a tensor with autograd history kept across the iterations of a loop. The ways of keeping
    it reported: `total += loss`, `total = total + loss`, an exponential average `s = 0.98 * s + 0.02 * loss`,
    `losses.append(loss)`, `history.extend([loss])`, `stats["loss"] += loss`, `preds.append(model(x))`,
    `outs = torch.cat([outs, model(x)])`, a running maximum `worst = torch.max(worst, loss)`, a
    comprehension over a data loader
    (`[criterion(model(x), y) for x, y in val_loader]`), and `self.train_losses.append(loss)` in a
    function that runs once per batch (Lightning's `training_step`, a helper every training loop
    calls), and `losses.update(loss, n)` on a running meter (an `AverageMeter` whose `update` adds
    the tensor to `self.sum`). Uses of the accumulator after it is rebound, following the loop in
    the same block, to a detached reduction of itself (`log_probs = torch.cat(log_probs).detach()`
    after a rollout) are uses of the new value, not of what was collected, up to the next binding of
    the name; so are the uses of what the accumulator flows into (`returns = compute_gae(next_value,
    rewards, masks, values)`, then `returns = torch.cat(returns).detach()`), where a function of the
    file that can keep what it is handed only in what it returns (`analysis/returning_helpers.py`:
    bound once in the module, not shadowed in the caller, calling nothing that may store or call
    what it is handed) is read as its result is used.
    `for` and `while` loops alike; accumulators started as a number, an
    empty container or a number-like tensor (`torch.tensor(0.0, device=device)`), tuple-unpacked
    ones included (`running_loss, seen = 0.0, 0`), and averages started by their first value
    (`avg = loss if avg is None else 0.9 * avg + 0.1 * loss`). The values kept are those the
    analysis sees carry history, also through helpers of the project that return a model's output
    or a loss.

    ## Why is this bad?
    The accumulator keeps a reference to every iteration's autograd graph until it is reset.

    - **With a backward every step** (a training loop), backward frees the activations the graph
      saved, so device memory does not grow, but the graph's nodes stay reachable from the
      accumulator on the host: about one step's graph per iteration (measured with PyTorch 2.13:
      +5.4 KB per step for a 3-layer MLP, +166 KB per step for a 4-layer `nn.TransformerEncoder`,
      ~16 GB over 100k steps), and the accumulator can no longer be backpropagated.
    - **Without backward** (evaluation without `torch.no_grad()`), every iteration's graph keeps the
      activations it saved for backward, on the device: memory grows with every batch.

    memlint stays silent when the accumulated value is the objective (`total.backward()`,
    `torch.stack(losses).sum().backward()`, `torch.autograd.grad(total, ...)`, or the accumulator
    handed to a function of the file that reads it and calls backward: gradient
    accumulation; but a list written at a slot that moves with the loop, of which the code reads
    back only fixed slots, backpropagates only those: `losses_q[k + 1] += loss_q`, then
    `losses_q[-1].backward()`, is reported, without a fix), when the accumulator is emptied on every iteration or every optimizer step (a
    gradient-accumulation window; an accumulator bound afresh for each batch around an inner loop
    whose every turn runs its own backward and optimizer step, as a discriminator trained several
    times per batch, spans several steps, and is reported), when a function sums the terms of what it was handed and returns
    the sum, running no model in the loop (`for out in outputs: loss += criterion(out, y)`: a loss per
    head, scale or task of one forward pass, for the caller's backward), when the loop walks a
    model's layers or unrolls a recurrent cell over a sequence (collecting one forward pass's
    features or intermediates), except in module-level code of a file that calls backward nowhere
    (a feature-map notebook: nothing backpropagates what it collects), in a function named like a
    forward pass (`forward`, `__call__`) unless it steps an optimizer itself (MAML's `Meta.forward`
    runs `meta_optim.step()`: a training step), when the loop runs without
    gradient tracking, when the value is
    already a number or detached (`loss.item()`, `float(loss)`, `loss.detach()`, `loss.data`), when
    it is a loss of arguments known to carry no history (`criterion(pred.detach().cpu(), y)`), and
    when no autograd is in sight: an instance of one of the file's classes that is not an
    `nn.Module` (a hand-written numpy-style model), a `.backward(...)` call on an instance of one of
    the file's classes that defines `backward(self, ...)` itself (hand-written gradients: no
    autograd backward), or one of the file's own functions, which is
    judged by what its body returns (with the project pass, also across files), never by its name
    (`get_criterion_callback`, `test_model`). It only reports values it can see carry history: the
    result of calling a model, a module or a loss function, a helper that returns one, a name the
    file backpropagates (`loss = 0.0`, `loss += term`, then `loss.backward()`), and
    arithmetic, indexing and fields of such results.

    ## Example
    ```python
    total = 0.0
    for x, y in val_loader:
        loss = criterion(model(x.cuda()), y.cuda())
        total += loss
    print(total / len(val_loader))
    ```

    ## Use instead
    ```python
    total = 0.0
    for x, y in val_loader:
        loss = criterion(model(x.cuda()), y.cuda())
        total += loss.detach()
    print(total / len(val_loader))
    ```

    ## Fix safety
    In code that uses an accelerator the fix accumulates `value.detach()`: the accumulator stays a
    tensor on the device (every later tensor use still works) and no device sync is added per
    step. It accumulates `value.item()` instead when the value is known to be a 0-d tensor (a torch
    loss that reduces by mean or sum, `.mean()`, `.sum()`; not a loss known only by its name: one of
    `reduction="none"` has an element per sample, and `.item()` would raise) and the
    accumulator is later handed to code that needs a Python number (numpy, JSON, plotting), when
    the loop copies a value to the host every iteration anyway, or when nothing in the file runs
    on an accelerator (there is no sync to add); never when a later use needs a tensor
    (`torch.stack(losses)`, `[l.item() for l in losses]`, in any cell of a notebook, also through
    the names a function's callers bind its result to), and never for a value with more than one
    element. The fix is safe when every later use is visible in the function;
    when the accumulator escapes (it is returned, stored on an object or passed to code memlint
    cannot see) it is unsafe.

    ## Measured effect
    The team's reference measurement (MLP 1024-2048-2048-10, 6.3M parameters, batch 256, fp32,
    PyTorch 2.13 on CPU, exact tensor-storage tracker): an evaluation loop of 20 batches without
    backward peaks at 126.3 MiB with `total += loss` and 36.1 MiB with `loss.item()` (about 4.5 MiB
    retained per iteration). With a backward per iteration the device peak does not change
    (57,870,424 B vs 57,870,420 B) but the autograd graph grows from 17 to 226 nodes, and process
    memory grows by 5,449 B per step (3-layer MLP) or 166,231 B per step (4-layer
    `nn.TransformerEncoder`, d=32) against 2 B / 35 B with `.item()`.

    Fixtures, `memlint confirm fixtures` (PyTorch 2.13.0+cpu, exact tensor-storage tracker;
    docs/measured-savings.md): `ml001_eval_loop.py` (10 batches of 128 through an MLP
    256-1024-1024-10, no backward): 27,640,924 B before, 10,822,716 B after (16.0 MiB, 60.8%
    saved); `ml001_train_loop.py` (backward per step): 12,289,116 B before and after on the
    device, while the C heap grows by +8,048 B per backward before the fix and +32 B after it
    (glibc mallinfo2, confirm's host/step column).
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "mixed"

    VALID = [
        Valid(  # the callee every caller hands returns the detached value first: that result has no history of its own
            """
import torch
class LossCompute:
    def __init__(self, generator, criterion):
        self.generator = generator
        self.criterion = criterion
    def __call__(self, x, y, norm):
        scaled = self.criterion(self.generator(x), y) / norm
        return scaled.data * norm, scaled
def run_epoch(batches, model, compute, optimizer):
    total_loss = 0
    for batch in batches:
        out = model(batch.src)
        loss, loss_node = compute(out, batch.tgt, batch.ntokens)
        loss_node.backward()
        optimizer.step()
        total_loss += loss
    return total_loss
def main(model, loader, generator, criterion, optimizer):
    run_epoch(loader, model, LossCompute(generator, criterion), optimizer)
"""
        ),
        Valid(  # the file's function returns the loss and its detached copy: only the loss is backpropagated
            """
import torch
def objective(out, y):
    loss = torch.nn.functional.cross_entropy(out, y)
    return loss, loss.detach()
def train(net, loader, optimizer):
    seen = 0.0
    for x, y in loader:
        loss, value = objective(net(x), y)
        loss.backward()
        optimizer.step()
        seen += value
    return seen
"""
        ),
        Valid(  # an evaluation sum made under no_grad carries no history, though the training branch backpropagates `loss`
            """
import torch
def epoch(net, batches, crit, opt, score, train):
    scores = []
    for x, y in batches:
        if train:
            loss = crit(net(x), y)
        else:
            with torch.no_grad():
                loss = 0.0
                loss += score(net, x, y)
            scores.append(loss)
            continue
        opt.zero_grad()
        loss.backward()
        opt.step()
    return scores
"""
        ),
        Valid(  # the `+=` branch ends in `continue`: backward never runs on that sum (a float: no `.item()`)
            """
import torch
def epoch(model, batches, criterion, optimizer, score):
    seen = []
    for x, y in batches:
        if model.training:
            loss = criterion(model(x), y)
        else:
            loss = 0.0
            loss += score(x, y)
            seen.append(loss)
            continue
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # the `+=` and the backward sit in different branches of one `if`
            """
import torch
def epoch(model, batches, optimizer, score, train):
    running = 0.0
    for x, y in batches:
        if not train:
            loss = 0.0
            loss += score(x, y)
        else:
            loss.backward()
            optimizer.step()
        running += loss
"""
        ),
        Valid(  # the running maximum is the objective: backpropagated after the restarts
            """
import torch
import torch.nn.functional as F
def robust_step(model, opt, x, y, restarts):
    worst = torch.zeros(y.shape[0])
    for _ in range(restarts):
        loss = F.cross_entropy(model(x + torch.randn_like(x)), y, reduction="none")
        worst = torch.maximum(worst, loss)
    opt.zero_grad()
    worst.mean().backward()
    opt.step()
"""
        ),
        Valid(  # a running maximum of detached values keeps no graph
            """
import torch
import torch.nn.functional as F
def worst_case(model, x, y, restarts):
    worst = torch.zeros(y.shape[0])
    for _ in range(restarts):
        loss = F.cross_entropy(model(x + torch.randn_like(x)), y, reduction="none")
        worst = torch.max(worst, loss.detach())
    return worst
"""
        ),
        Valid(  # the rollout's log-probabilities are backpropagated before the detached copy replaces them (A2C)
            """
import torch
def update(model, states, steps, optimizer):
    log_probs = []
    for t in range(steps):
        log_probs.append(torch.log_softmax(model(states[t]), dim=1)[:, 0])
    loss = -torch.cat(log_probs).mean()
    optimizer.zero_grad()
    loss.backward()
    log_probs = torch.cat(log_probs).detach()
    return log_probs
""",
        ),
        Valid(  # handed to a helper that can keep them only in what it returns, whose result the caller backpropagates
            """
import torch
def returns(values, rewards):
    out = []
    for t in range(len(rewards)):
        out.append(rewards[t] - values[t])
    return out
def update(model, states, rewards, optimizer):
    values = []
    for t in range(len(rewards)):
        values.append(model(states[t]))
    errors = returns(values, rewards)
    loss = torch.cat(errors).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        ),
        Valid(  # handed to a helper that keeps them in a list of the module: where they go is out of sight
            """
import torch
replay = []
def remember(values, rewards):
    replay.append(values)
    return [r * 0.9 for r in rewards]
def rollout(model, states, rewards):
    values = []
    for t in range(len(rewards)):
        values.append(model(states[t]))
    targets = remember(values, rewards)
    targets = torch.cat(targets).detach()
    values = torch.cat(values).detach()
    return targets - values
""",
        ),
        Valid(  # the helper's result is rebound to a detached copy only in another block: its later use may be the graph's
            """
import torch
def returns(values, rewards):
    out = []
    for t in range(len(rewards)):
        out.append(rewards[t] - values[t])
    return out
def update(model, states, rewards, optimizer, detach):
    values = []
    for t in range(len(rewards)):
        values.append(model(states[t]))
    errors = returns(values, rewards)
    if detach:
        errors = torch.cat(errors).detach()
    loss = torch.cat(errors).pow(2).mean()
    loss.backward()
""",
        ),
        Valid(  # the helper's result is detached, then computed again from the collected values and backpropagated
            """
import torch
def gaps(values, rewards):
    return [r - v for r, v in zip(rewards, values)]
def update(model, states, rewards, optimizer):
    values = []
    for t in range(len(rewards)):
        values.append(model(states[t]))
    errors = gaps(values, rewards)
    errors = torch.cat(errors).detach()
    print(errors.mean())
    errors = gaps(values, rewards)
    torch.cat(errors).pow(2).mean().backward()
    optimizer.step()
""",
        ),
        Valid(  # a name detached, then bound again from the collected values, which it backpropagates
            """
import torch
def update(model, batches, optimizer):
    outputs = []
    for x in batches:
        outputs.append(model(x))
    joined = torch.cat(outputs)
    joined = joined.detach()
    print(joined.mean())
    joined = torch.cat(outputs) * 2
    joined.pow(2).mean().backward()
    optimizer.step()
""",
        ),
        Valid(  # the caller's parameter has the helper's name: the function it calls is another one
            """
import torch
def gaps(values, rewards):
    return [r - v for r, v in zip(rewards, values)]
def collect(model, states, rewards, gaps):
    values = []
    for s in states:
        values.append(model(s))
    errors = gaps(values, rewards)
    errors = torch.cat(errors).detach()
    return errors
""",
        ),
        Valid(  # the helper is defined again under a module-level `if`, and that one keeps the values
            """
import torch
KEPT = []
def gaps(values, rewards):
    return [r - v for r, v in zip(rewards, values)]
if torch.cuda.is_available():
    def gaps(values, rewards):
        KEPT.append(values)
        return [r - v.detach() for r, v in zip(rewards, values)]
def collect(model, states, rewards):
    values = []
    for s in states:
        values.append(model(s))
    errors = gaps(values, rewards)
    errors = torch.cat(errors).detach()
    return errors
""",
        ),
        Valid(  # the helper calls a function defined further down the file, which keeps the values
            """
import torch
def gaps(values, rewards):
    return keep(values, rewards)
def collect(model, states, rewards):
    values = []
    for s in states:
        values.append(model(s))
    errors = gaps(values, rewards)
    errors = torch.cat(errors).detach()
    return errors
KEPT = []
def keep(values, rewards):
    KEPT.append(values)
    return [r - v.detach() for r, v in zip(rewards, values)]
""",
        ),
        Valid(  # the helper reads a name a star import may bring: what it does is out of sight
            """
import torch
from helpers import *
def gaps(values, rewards):
    return keep(values, rewards)
def collect(model, states, rewards):
    values = []
    for s in states:
        values.append(model(s))
    errors = gaps(values, rewards)
    errors = torch.cat(errors).detach()
    return errors
""",
        ),
        Valid(  # the helper calls a module the file binds below it, no builtin: it may keep its input
            """
import torch
def gaps(values, rewards):
    return [r - scale(v) for r, v in zip(rewards, values)]
def collect(model, states, rewards):
    values = []
    for s in states:
        values.append(model(s))
    errors = gaps(values, rewards)
    errors = torch.cat(errors).detach()
    return errors
scale = torch.nn.Linear(1, 1)
""",
        ),
        Valid(  # the helper hands a list's append to `map`, which calls it on every value: kept there
            """
import torch
def gaps(values, rewards, kept):
    list(map(kept.append, values))
    return [r - v for r, v in zip(rewards, values)]
def update(model, states, rewards, optimizer):
    values = []
    kept = []
    for s in states:
        values.append(model(s))
    errors = gaps(values, rewards, kept)
    errors = torch.cat(errors).detach()
    torch.cat(kept).pow(2).mean().backward()
    optimizer.step()
    return errors
""",
        ),
        Valid(  # the helper stores into a dict its own list holds, which is the caller's
            """
import torch
def gaps(values, rewards, store):
    box = [store]
    box[0]["values"] = values
    return [r - v for r, v in zip(rewards, values)]
def update(model, states, rewards, optimizer):
    values = []
    store = {}
    for s in states:
        values.append(model(s))
    errors = gaps(values, rewards, store)
    errors = torch.cat(errors).detach()
    torch.cat(store["values"]).pow(2).mean().backward()
    optimizer.step()
    return errors
""",
        ),
        Valid(  # the helper's loop assigns each value to an attribute of the caller's object
            """
import torch
class Slot:
    pass
def gaps(values, rewards, slot):
    for slot.last in values:
        pass
    return [r - v for r, v in zip(rewards, values)]
def update(model, states, rewards, optimizer):
    values = []
    slot = Slot()
    for s in states:
        values.append(model(s))
    errors = gaps(values, rewards, slot)
    errors = torch.cat(errors).detach()
    slot.last.pow(2).mean().backward()
    optimizer.step()
    return errors
""",
        ),
        Valid(  # the helper hands the values to a method of a parameter, which may keep them
            """
import torch
def gaps(values, rewards, sink):
    sink.log(values)
    return [r - v for r, v in zip(rewards, values)]
def collect(model, states, rewards, sink):
    values = []
    for s in states:
        values.append(model(s))
    errors = gaps(values, rewards, sink)
    errors = torch.cat(errors).detach()
    return errors
""",
        ),
        Valid(  # the rollout's outputs handed to a helper of the file that builds its loss from them and backpropagates it (RL-Adventure-2's ACER)
            """
import torch
def compute_loss(policies, values, optimizer):
    loss = 0
    for step in range(len(policies)):
        loss += policies[step].log().mean() + values[step].pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
def update(model, states, optimizer):
    values, policies = [], []
    for step in range(states.size(0)):
        policy, value = model(states[step])
        policies.append(policy)
        values.append(value)
    compute_loss(policies, values, optimizer)
""",
        ),
        Valid(  # `lrmodel.backward(...)` is the file's hand-written gradient method, not autograd's: nothing has history
            """
import torch
import torch.nn as nn
class LR(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = torch.zeros(dim, 1)
    def forward(self, x):
        return torch.sigmoid(torch.mm(self.w.T, x))
    def backward(self, x, yhat, y):
        self.dw = torch.mm(x, (yhat - y).T)
def loss(yhat, y):
    return -torch.sum(y * torch.log(yhat) + (1 - y) * torch.log(1 - yhat))
costs = []
lrmodel = LR(3)
for i in range(100):
    x, y = next(iter(train_dataset))
    yhat = lrmodel.forward(x)
    cost = loss(yhat.data.cpu(), y)
    lrmodel.backward(x, yhat, y)
    if i % 10 == 0:
        costs.append(cost)
""",
        ),
        Valid(  # every slot is backpropagated (`sum(losses_q)`): the slots are the objective
            """
import torch
import torch.nn.functional as F
class Meta(torch.nn.Module):
    def forward(self, x_spt, y_spt):
        losses_q = [0 for _ in range(self.update_step + 1)]
        for i in range(x_spt.size(0)):
            for k in range(1, self.update_step):
                loss_q = F.cross_entropy(self.net(x_spt[i]), y_spt[i])
                losses_q[k + 1] += loss_q
        loss_q = sum(losses_q) / x_spt.size(0)
        self.meta_optim.zero_grad()
        loss_q.backward()
        self.meta_optim.step()
""",
        ),
        Valid(  # a forward that steps no optimizer collects per-step losses for its caller's backward
            """
import torch
import torch.nn.functional as F
class Meta(torch.nn.Module):
    def forward(self, x_spt, y_spt):
        losses_q = [0 for _ in range(self.update_step + 1)]
        for i in range(x_spt.size(0)):
            for k in range(1, self.update_step):
                losses_q[k + 1] += F.cross_entropy(self.net(x_spt[i]), y_spt[i])
        return losses_q
""",
        ),
        Valid(  # a slot per iteration of a value without history
            """
import torch
def train(net, loader, opt, criterion):
    losses = torch.zeros(len(loader))
    for i, (x, y) in enumerate(loader):
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        losses[i] = loss.item()
    print(losses.mean())
""",
        ),
        Valid(  # the same loop over `children()` in a script that backpropagates what it collects: a forward pass
            """
import torch
from torchvision import models
model = models.resnet50(pretrained=True)
blocks = list(model.children())
img = torch.rand(1, 3, 224, 224)
results = [blocks[0](img)]
for i in range(1, len(blocks)):
    results.append(blocks[i](results[-1]))
loss = sum(r.mean() for r in results)
loss.backward()
"""
        ),
        Valid(  # a loss of elements of lists of tensors without history, set by setUpClass's `cls.`
            """
import torch
import torch.nn.functional as F
import unittest
class TestLoss(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.outputs = [F.softmax(torch.randn(5, 5), dim=1) for _ in range(10)]
        cls.targets = [torch.LongTensor([0 for _ in range(5)]) for _ in range(10)]

    def test_nllloss(self):
        total = 0
        criterion = torch.nn.NLLLoss()
        for output, target in zip(self.outputs, self.targets):
            total += criterion(output, target)
        self.assertAlmostEqual(1.0, total.item())
"""
        ),
        Valid(  # a marimo notebook: `torch` is the cell parameter the importing cell returns, so this is no_grad
            """
import marimo

app = marimo.App()


@app.cell
def _():
    import torch
    return (torch,)


@app.cell
def _(loader, model, torch):
    preds = []
    with torch.no_grad():
        for x, y in loader:
            preds.append(model(x.cuda()))
    return (preds,)
""",
        ),
        Valid(  # a sampled action carries no history: the file's `forward` returns `dist.sample()` in that position
            """
import torch
import torch.nn as nn
from torch.distributions import Normal
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(4, 2)
    def forward(self, state):
        dist = Normal(self.mu(state), 1.0)
        action = dist.sample()
        return action, dist
class Agent:
    def __init__(self):
        self.actor = Actor().to("cuda")
        self.actions = []
        self.log_probs = []
    def select_action(self, state):
        action, dist = self.actor(state)
        self.actions.append(action)
        return action.cpu().numpy()
agent = Agent()
for step in range(1000):
    agent.select_action(env.observe())
"""
        ),
        Valid(  # one forward pass's loss terms (a loss per auxiliary output), summed for the caller's backward
            """
import torch
import torch.nn.functional as F
def pixel_loss(logits, target):
    return F.cross_entropy(logits, target)
def deep_supervision_loss(outputs, target, weights):
    loss = 0.0
    for i, out in enumerate(outputs):
        loss = loss + weights[i] * pixel_loss(out, target)
    return loss
"""
        ),
        Valid(  # a loss per task head of one batch, averaged and returned to the trainer
            """
import torch
class MultiHead:
    def __init__(self):
        self.loss_fn = torch.nn.CrossEntropyLoss()
    def compute_loss(self, y_pred, y_true):
        loss = 0
        for task_id, task_output in enumerate(y_pred):
            loss += self.loss_fn(task_output, y_true[:, task_id])
        loss /= len(y_pred)
        return loss
"""
        ),
        Valid(  # one forward's deep-supervision terms summed into `self.loss`, which another method backpropagates (Attention-Gated-Networks)
            """
import torch
from torch.autograd import Variable
class AggregatedClassifier:
    def forward(self):
        self.predictions = self.net(Variable(self.input))
    def compute_loss(self):
        loss = 0
        for weight, prediction in zip(self.weights, self.predictions):
            loss += weight * self.criterion(prediction, self.target)
        self.loss = loss
    def backward(self):
        self.compute_loss()
        self.loss.backward()
"""
        ),
        Valid(  # the backpropagated loss is a number by the time it is accumulated
            """
import torch
from losses import objective
def train(net, loader):
    running_loss = 0.0
    for x, y in loader:
        loss, mse, l1 = objective(net(x), y)
        loss.backward()
        loss = loss.item()
        running_loss += loss
    return running_loss
"""
        ),
        Valid(  # a hand-written object with a backward method of its own: no autograd in sight
            """
import torch
class Perceptron:
    def backward(self, x, y):
        return x
def fit(loader):
    total = 0.0
    for x, y in loader:
        net = Perceptron()
        net.backward(x, y)
        total += net
    return total
"""
        ),
        Valid(  # indices from torch.argmax carry no history (captum's TracInCP tutorial)
            """
import torch
incorrect_labels = []
for batch_features, batch_labels in test_loader:
    batch_predictions = torch.nn.functional.softmax(net(batch_features), dim=1)
    incorrect_labels.append(torch.argmax(batch_predictions, dim=1))
"""
        ),
        Valid(
            """
import torch
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss.item()
"""
        ),
        Valid(  # gradient accumulation: the sum is backpropagated
            """
import torch
def step(model, batches, criterion):
    total = 0
    for x, y in batches:
        total = total + criterion(model(x), y)
    total.backward()
"""
        ),
        Valid(  # a list of losses reduced and backpropagated
            """
import torch
losses = []
for x, y in batches:
    losses.append(criterion(model(x), y))
torch.stack(losses).sum().backward()
"""
        ),
        Valid(
            """
import torch
with torch.no_grad():
    total = 0
    for x, y in loader:
        total += criterion(model(x), y)
"""
        ),
        Valid(  # produced under no_grad, accumulated outside it
            """
import torch
total = 0
for x, y in loader:
    with torch.no_grad():
        out = model(x)
    total += out.sum()
"""
        ),
        Valid(
            """
import torch
@torch.no_grad()
def evaluate(model, loader):
    total = 0
    for x, y in loader:
        total += F.cross_entropy(model(x), y)
    return total
"""
        ),
        Valid(  # only ever called under no_grad in this file
            """
import torch
def run_eval(net, loader):
    total = 0
    for x, y in loader:
        total += net(x).sum()
    return total

with torch.no_grad():
    run_eval(model, loader)
"""
        ),
        Valid(
            """
import torch
total = 0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss.detach()
    total += float(loss)
    total += loss.data
"""
        ),
        Valid(  # reset every iteration: nothing crosses iterations
            """
import torch
for x, y in loader:
    total = 0
    total += criterion(model(x), y)
    total.backward()
"""
        ),
        Valid(  # Lightning runs validation_step without gradients
            """
import torch
import lightning as L
class Net(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        for x in batch:
            self.total += self(x).sum()
"""
        ),
        Valid(  # a user's helper we cannot see into
            """
import torch
total = 0
for batch in loader:
    total += train_step(batch)
"""
        ),
        Valid(  # accelerate's backward through the accumulated loss
            """
import torch
def train(model, loader, accelerator):
    total = 0
    for x, y in loader:
        total += model(x).mean()
    accelerator.backward(total)
"""
        ),
        Valid(  # a forward pass collecting feature maps: the caller backpropagates through them
            """
import torch
from torch import nn
class Backbone(nn.Module):
    def forward_features(self, x):
        features = []
        for stage in self.stages:
            x = stage(x)
            features.append(x)
        return features
"""
        ),
        Valid(  # a loop over layers, outside any forward method
            """
import torch
def run_blocks(blocks, x):
    outs = []
    for block in blocks:
        x = block(x)
        outs.append(x)
    return torch.cat(outs)
"""
        ),
        Valid(  # a tensor updated step by step (sampling loop): an update rule, not a statistic
            """
import torch
latents = torch.randn(1, 4, 64, 64)
for t in range(50):
    velocity = model(latents, t)
    latents = latents + velocity / 50
"""
        ),
        Valid(  # `decoder` here is a bound method, not a model
            """
import torch
def decode(self, ids):
    decoder = self.wp_decode
    texts = []
    for row in ids:
        texts.append(decoder(row))
    return texts
"""
        ),
        Valid(  # Hugging Face pipelines run `_forward` inside inference_context()
            """
import torch
from transformers import Pipeline
class QA(Pipeline):
    def _forward(self, inputs):
        return self.infer_all(inputs)
    def infer_all(self, inputs):
        logits = []
        for batch in inputs:
            logits.append(self.model(**batch).logits)
        return logits
"""
        ),
        Valid(  # per-image loss terms of one batch, stacked and returned for the caller's backward
            """
import torch
import torch.nn.functional as F
def detection_loss(predictions, targets):
    terms = []
    for pred, target in zip(predictions, targets):
        terms.append(F.smooth_l1_loss(pred, target, reduction="sum"))
    return torch.stack(terms).sum()
"""
        ),
        Valid(  # model code collecting per-image embeddings for its output
            """
import torch
from torch import nn
class VisionLanguage(nn.Module):
    def image_features(self, images, out):
        features = []
        for image in images:
            features.append(self.projector(image))
        out.features = features
        return out
"""
        ),
        Valid(  # a same-file builder named like a loss returns a callback object and a string: no tensor
            """
import torch
def get_criterion_callback(loss_name, prefix):
    callback = CriterionCallback(prefix=prefix, criterion_key=loss_name)
    return {loss_name: make_loss(loss_name)}, callback, prefix
def get_criterions(names):
    callbacks, losses = [], []
    for loss_name in names:
        cd, criterion, criterion_name = get_criterion_callback(loss_name, f"loss/{loss_name}")
        callbacks.append(criterion)
        losses.append(criterion_name)
    return callbacks, losses
"""
        ),
        Valid(  # a helper named like a model, defined below its caller, returns a Python float
            """
import torch
def train_model(net, loader, val_loader, optimizer):
    val_scores = []
    for epoch in range(10):
        for x, y in loader:
            optimizer.zero_grad()
            F.cross_entropy(net(x), y).backward()
            optimizer.step()
        val_acc = test_model(net, val_loader)
        val_scores.append(val_acc)
    return val_scores
def test_model(net, data_loader):
    correct = 0
    with torch.no_grad():
        for x, y in data_loader:
            correct += (net(x).argmax(-1) == y).sum().item()
    return correct / len(data_loader.dataset)
"""
        ),
        Valid(  # a hand-written numpy-style model and loss: no autograd anywhere
            """
import numpy as np
import torch
class LinearModel:
    def __init__(self, n):
        self.w = np.zeros(n)
    def __call__(self, x):
        return x @ self.w
def criterion(pred, y):
    return ((pred - y) ** 2).mean()
model = LinearModel(8)
losses = []
for x, y in batches:
    loss = criterion(model(x), y)
    losses.append(loss)
print(np.mean(losses))
"""
        ),
        Valid(  # emptied every optimizer step: a gradient-accumulation window, bounded
            """
import torch
def train(model, loader, criterion, optimizer, accum=4):
    window = 0.0
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum
        loss.backward()
        window += loss
        if (step + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
            print(window)
            window = 0.0
"""
        ),
        Valid(  # the per-batch losses of a comprehension are the objective
            """
import torch
losses = [criterion(model(x), y) for x, y in train_loader]
torch.stack(losses).mean().backward()
"""
        ),
        Valid(  # the file's meter converts what it is given to a number first
            """
import torch
class SmoothedValue:
    def __init__(self):
        self.total = 0.0
    def update(self, value, n=1):
        if isinstance(value, torch.Tensor):
            value = value.item()
        self.total += value * n
def train_one_epoch(model, criterion, data_loader, optimizer):
    meter = SmoothedValue()
    for samples, targets in data_loader:
        loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(loss)
"""
        ),
        Valid(  # a recurrent cell unrolled over the steps of one sequence: one forward pass
            """
import torch
rnn_single = torch.nn.RNNCell(100, 200)
h_t = torch.zeros(3, 200)
out = []
for i in range(6):
    h_t = rnn_single(x[i], h_t)
    out.append(h_t)
"""
        ),
        Valid(  # a hand-written perceptron: its `forward` and `backward` are plain methods, no autograd
            """
import torch
class Perceptron:
    def __init__(self, n):
        self.weights = torch.zeros(n, 1)
        self.bias = torch.zeros(1)
    def forward(self, x):
        return torch.where(torch.mm(x, self.weights) + self.bias > 0.0, 1.0, 0.0)
    def backward(self, x, y):
        return y - self.forward(x)
    def train(self, x, y, epochs):
        for e in range(epochs):
            for i in range(y.shape[0]):
                errors = self.backward(x[i].reshape(1, -1), y[i]).reshape(-1)
                self.bias += errors
"""
        ),
        Valid(  # averaged under no_grad before it is kept: the average has no history
            """
import torch
epoch_costs = []
for epoch in range(10):
    avg_cost = 0.0
    for x, y in train_loader:
        cost = criterion(model(x), y)
        optimizer.zero_grad()
        cost.backward()
        optimizer.step()
        avg_cost += cost.item()
    total = torch.tensor(avg_cost) + model(probe).sum()
    with torch.set_grad_enabled(False):
        average = total / len(train_loader)
        epoch_costs.append(average)
"""
        ),
        Valid(  # one batch's decoding steps, collected in a list made for that batch
            """
import torch
for src, trg in test_loader:
    steps = []
    token = trg[:, 0]
    for t in range(1, 20):
        logits = decoder(token, src)
        token = logits.argmax(-1)
        steps.append(logits)
    report(torch.stack(steps), trg)
"""
        ),
        Valid(  # a validation loss computed from detached CPU copies: the loss has no history to keep
            """
import numpy as np
import torch
def vali(model, loader, criterion):
    model.eval()
    total_loss = []
    for x, y in loader:
        pred = model(x)
        loss = criterion(pred.detach().cpu(), y.detach().cpu())
        total_loss.append(loss)
    model.train()
    return np.average(total_loss)
"""
        ),
        Valid(  # a unit test's fixture: random inputs that never require grad, so the loss has no history
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
criterion = nn.NLLLoss()
expected = 0
for _ in range(10):
    output = F.log_softmax(Variable(torch.randn(5, 3)), dim=1)
    target = Variable(torch.LongTensor([0, 1, 2, 1, 0]))
    expected += criterion(output, target)
print(expected.item())
"""
        ),
        Valid(  # bound afresh per batch, summed over the batch's chunks and backpropagated: one optimizer step's window
            """
import torch
def train(net, loader, opt, criterion):
    for x, y in loader:
        opt.zero_grad()
        total = 0.0
        for xs, ys in zip(x.chunk(2), y.chunk(2)):
            total += criterion(net(xs), ys)
        total.backward()
        opt.step()
"""
        ),
        Valid(  # each chunk backpropagated in the inner loop, one optimizer step after it: the sum spans one step
            """
import torch
def train(net, loader, opt, criterion):
    for x, y in loader:
        opt.zero_grad()
        total = 0.0
        for xs, ys in zip(x.chunk(2), y.chunk(2)):
            loss = criterion(net(xs), ys)
            loss.backward()
            total += loss
        opt.step()
        print(total.item())
"""
        ),
        Valid(  # one batch's unrolled steps, collected with neither backward nor a step in the inner loop
            """
import torch
def train(net, loader, opt, steps):
    for x, y in loader:
        outs = []
        h = x
        for t in range(steps):
            h = net(h)
            outs.append(h)
        loss = torch.stack(outs).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        Valid(  # the file's helper detaches what it returns: the kept value has no history
            """
import torch
def unit(v, dim=1):
    return torch.div(v, v.norm(2, dim, True)).detach()
def evaluate(model, loader):
    feats = []
    for x, _ in loader:
        feats.append(unit(model(x)))
    return torch.cat(feats)
"""
        ),
        Valid(  # the helper computes its result without gradients
            """
import torch
def unit(v, dim=1):
    with torch.no_grad():
        out = torch.div(v, v.norm(2, dim, True))
    return out
def evaluate(model, loader):
    feats = []
    for x, _ in loader:
        feats.append(unit(model(x)))
    return torch.cat(feats)
"""
        ),
        Valid(  # the helper returns the index output of a max (an integer tensor): no history
            """
import torch
def labels(scores):
    _, best = torch.max(scores, 1)
    return best
def evaluate(model, loader):
    kept = []
    for x, _ in loader:
        kept.append(labels(model(x)))
    return kept
"""
        ),
        Valid(  # an indexed result of a sort: the positions, no history
            """
import torch
def order(scores):
    return torch.sort(scores, 1)[1]
def evaluate(model, loader):
    kept = []
    for x, _ in loader:
        kept.append(order(model(x)))
    return kept
"""
        ),
        Valid(  # `.indices` of a top-k: no history
            """
import torch
def top(scores):
    return torch.topk(scores, 3).indices
def evaluate(model, loader):
    kept = []
    for x, _ in loader:
        kept.append(top(model(x)))
    return kept
"""
        ),
        Valid(  # a draw from the probabilities: integer samples, no history
            """
import torch
def draw(probs):
    return torch.multinomial(probs, 1)
def evaluate(model, loader):
    kept = []
    for x, _ in loader:
        kept.append(draw(model(x)))
    return kept
"""
        ),
        Valid(  # a cast to an integer dtype ends the history
            """
import torch
def as_bytes(images):
    return (images * 255).to(torch.uint8)
def evaluate(model, loader):
    kept = []
    for x, _ in loader:
        kept.append(as_bytes(model(x)))
    return kept
"""
        ),
        Valid(  # a comparison of two tensors is a Python bool
            """
import torch
def same(a, b):
    return torch.equal(a, b)
def evaluate(model, loader):
    kept = []
    for x, _ in loader:
        kept.append(same(model(x), x))
    return kept
"""
        ),
        Valid(  # a path of the helper ends without a return: the call may give None
            """
import torch
def doubled(v, flag):
    if flag:
        return v * 2
def evaluate(model, loader):
    kept = []
    for x, _ in loader:
        kept.append(doubled(model(x), False))
    return kept
"""
        ),
        Valid(  # the helper's grad mode depends on a parameter (off by default)
            """
import torch
def unit(v, train=False):
    with torch.set_grad_enabled(train):
        out = torch.div(v, v.norm(2, 1, True))
    return out
def evaluate(model, loader):
    kept = []
    for x, _ in loader:
        kept.append(unit(model(x)))
    return kept
"""
        ),
        Valid(  # the helper binds its parameter again (to a detached copy): what it returns is not the caller's
            """
import torch
def unit(v, dim=1):
    v = v.detach()
    return torch.div(v, v.norm(2, dim, True))
def evaluate(model, loader):
    feats = []
    for x, _ in loader:
        feats.append(unit(model(x)))
    return torch.cat(feats)
"""
        ),
        Valid(  # steps in the inner loop, but the sum keeps detached values
            """
import torch
def train(gen, disc, loader, opt_d, criterion, reps):
    for x, y in loader:
        fake = gen(x).detach()
        total = 0.0
        for _ in range(reps):
            opt_d.zero_grad()
            loss = criterion(disc(fake), y)
            loss.backward()
            opt_d.step()
            total += loss.detach()
        print((total / reps).item())
"""
        ),
    ]

    INVALID = [
        Invalid(  # the model frozen, but its input made to require grad by a statement of its own (an adversarial attack): the run carries history
            """
import torch
import torch.nn.functional as F
def attack(net, x, y, steps):
    for q in net.parameters():
        q.requires_grad = False
    start = x.clone().detach()
    probe = start.clone()
    history = []
    for _ in range(steps):
        probe.requires_grad = True
        loss = F.cross_entropy(net(probe), y)
        history.append(loss)
        g, = torch.autograd.grad(loss, probe)
        probe = (probe + 0.01 * g.sign()).detach()
    return probe, history
""",
            line=12,
            column=9,
            unsafe=True,
            fixed="""
import torch
import torch.nn.functional as F
def attack(net, x, y, steps):
    for q in net.parameters():
        q.requires_grad = False
    start = x.clone().detach()
    probe = start.clone()
    history = []
    for _ in range(steps):
        probe.requires_grad = True
        loss = F.cross_entropy(net(probe), y)
        history.append(loss.item())
        g, = torch.autograd.grad(loss, probe)
        probe = (probe + 0.01 * g.sign()).detach()
    return probe, history
""",
        ),
        Invalid(  # frozen, then given a new trainable head (an assignment into it): its runs carry history
            """
import torch
from torch import nn
backbone = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))
backbone.requires_grad_(False)
backbone[2] = nn.Linear(8, 2)
outputs = []
for step in range(10):
    outputs.append(backbone(torch.randn(4, 8)))
""",
            line=8,
            column=5,
            fixed="""
import torch
from torch import nn
backbone = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))
backbone.requires_grad_(False)
backbone[2] = nn.Linear(8, 2)
outputs = []
for step in range(10):
    outputs.append(backbone(torch.randn(4, 8)).detach())
""",
            harness=_run(),
        ),
        Invalid(  # the per-step sums started as a repeated list (`[0] * n`: a list, as a display is); two fixed slots read back
            """
import torch
import torch.nn.functional as F
def meta_step(model, tasks, opt, steps):
    losses = [0] * (steps + 1)
    for t in tasks:
        for k in range(steps):
            losses[k + 1] += F.cross_entropy(model(t[0]), t[1])
    (losses[-1] + losses[0]).backward()
    opt.step()
""",
            line=7,
            column=13,
            message="reads back only `losses[-1]`, `losses[0]`",
        ),
        Invalid(  # the rollout's values handed to a helper of the file that can keep them only in what it returns, whose result is then detached (RL-Adventure-2's compute_gae, issue 27)
            """
import torch
def advantages(values, rewards, last):
    values = values + [last]
    running = 0
    out = []
    for t in reversed(range(len(rewards))):
        running = rewards[t] + 0.9 * values[t + 1] - values[t] + 0.9 * running
        out.insert(0, running + values[t])
    return out
def rollout(model, states, rewards, steps):
    values = []
    for t in range(steps):
        values.append(model(states[t]))
    targets = advantages(values, rewards, model(states[steps]))
    targets = torch.cat(targets).detach()
    values = torch.cat(values).detach()
    print(targets - values)
    return targets - values
""",
            line=13,
            column=9,
            message="never calls backward",
            fixed="""
import torch
def advantages(values, rewards, last):
    values = values + [last]
    running = 0
    out = []
    for t in reversed(range(len(rewards))):
        running = rewards[t] + 0.9 * values[t + 1] - values[t] + 0.9 * running
        out.insert(0, running + values[t])
    return out
def rollout(model, states, rewards, steps):
    values = []
    for t in range(steps):
        values.append(model(states[t]).detach())
    targets = advantages(values, rewards, model(states[steps]))
    targets = torch.cat(targets).detach()
    values = torch.cat(values).detach()
    print(targets - values)
    return targets - values
""",
            harness=_run(
                "rollout(model, [torch.randn(4, 3) for _ in range(4)], [torch.randn(4, 1) for _ in range(3)], 3)",
                setup="torch.manual_seed(0)",
            ),
        ),
        Invalid(  # a rollout's log-probabilities collected with their graphs, then only used detached (RL-Adventure-2's PPO, DeepRL's PPO storage)
            """
import torch
def rollout(model, states, steps):
    log_probs = []
    for t in range(steps):
        log_prob = torch.log_softmax(model(states[t]), dim=1)[:, 0]
        log_probs.append(log_prob)
    log_probs = torch.cat(log_probs).detach()
    print(log_probs)
    return log_probs
""",
            line=6,
            column=9,
            message="never calls backward",
            fixed="""
import torch
def rollout(model, states, steps):
    log_probs = []
    for t in range(steps):
        log_prob = torch.log_softmax(model(states[t]), dim=1)[:, 0]
        log_probs.append(log_prob.detach())
    log_probs = torch.cat(log_probs).detach()
    print(log_probs)
    return log_probs
""",
            harness=_run("rollout(model, [torch.randn(4, 3) for _ in range(3)], 3)", setup="torch.manual_seed(0)"),
        ),
        Invalid(  # per-step query losses summed into a slot that moves with the inner loop, in a `forward` that steps the meta-optimizer itself; only the last slot is backpropagated (MAML-Pytorch's meta.py, issue 27)
            """
import torch
import torch.nn.functional as F
class Meta(torch.nn.Module):
    def forward(self, x_spt, y_spt, x_qry, y_qry):
        losses_q = [0 for _ in range(self.update_step + 1)]
        for i in range(x_spt.size(0)):
            fast_weights = list(self.net.parameters())
            for k in range(1, self.update_step):
                loss = F.cross_entropy(self.net(x_spt[i], fast_weights), y_spt[i])
                grad = torch.autograd.grad(loss, fast_weights)
                fast_weights = [w - self.update_lr * g for w, g in zip(fast_weights, grad)]
                loss_q = F.cross_entropy(self.net(x_qry[i], fast_weights), y_qry[i])
                losses_q[k + 1] += loss_q
        loss_q = losses_q[-1] / x_spt.size(0)
        self.meta_optim.zero_grad()
        loss_q.backward()
        self.meta_optim.step()
""",
            line=13,
            column=17,
            message="reads back only `losses_q[-1]`",
        ),
        Invalid(  # module-level code that never backpropagates runs a network block by block, blocks reached through `children()`, and keeps every output (T2T-ViT's visualization notebooks, issue 27)
            """
import torch
import matplotlib.pyplot as plt
from torchvision import models
model = models.resnet50(pretrained=True)
blocks = []
for child in list(model.children()):
    if isinstance(child, torch.nn.Sequential):
        for sub in child.children():
            blocks.append(sub)
img = torch.rand(1, 3, 224, 224)
results = [blocks[0](img)]
for i in range(1, len(blocks)):
    results.append(blocks[i](results[-1]))
outputs = results
for n, feature in enumerate(outputs):
    plt.imshow(feature[0, 0].data)
    plt.savefig(f"layer_{n}.png")
""",
            line=13,
            column=5,
            unsafe=True,
            fixed="""
import torch
import matplotlib.pyplot as plt
from torchvision import models
model = models.resnet50(pretrained=True)
blocks = []
for child in list(model.children()):
    if isinstance(child, torch.nn.Sequential):
        for sub in child.children():
            blocks.append(sub)
img = torch.rand(1, 3, 224, 224)
results = [blocks[0](img)]
for i in range(1, len(blocks)):
    results.append(blocks[i](results[-1]).detach())
outputs = results
for n, feature in enumerate(outputs):
    plt.imshow(feature[0, 0].data)
    plt.savefig(f"layer_{n}.png")
""",
        ),
        Invalid(  # the distribution beside the sampled action carries history: its log-probs are kept per call
            """
import torch
import torch.nn as nn
from torch.distributions import Normal
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(4, 2)
    def forward(self, state):
        dist = Normal(self.mu(state), 1.0)
        action = dist.sample()
        return action, dist
class Agent:
    def __init__(self):
        self.actor = Actor().to("cuda")
        self.actions = []
        self.log_probs = []
    def select_action(self, state):
        action, dist = self.actor(state)
        self.actions.append(action)
        self.log_probs.append(dist.log_prob(action))
        return action.cpu().numpy()
agent = Agent()
for step in range(1000):
    agent.select_action(env.observe())
""",
            line=20,
            column=9,
            fixed="""
import torch
import torch.nn as nn
from torch.distributions import Normal
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(4, 2)
    def forward(self, state):
        dist = Normal(self.mu(state), 1.0)
        action = dist.sample()
        return action, dist
class Agent:
    def __init__(self):
        self.actor = Actor().to("cuda")
        self.actions = []
        self.log_probs = []
    def select_action(self, state):
        action, dist = self.actor(state)
        self.actions.append(action)
        self.log_probs.append(dist.log_prob(action).detach())
        return action.cpu().numpy()
agent = Agent()
for step in range(1000):
    agent.select_action(env.observe())
""",
            unsafe=True,
        ),
        Invalid(  # only the target is detached: the loss of the model's output still carries its history
            """
import torch
def vali(model, loader, criterion):
    total_loss = []
    for x, y in loader:
        pred = model(x)
        loss = criterion(pred, y.detach().cpu())
        total_loss.append(loss)
    return total_loss
""",
            line=7,
            column=9,
            message="this loop never calls backward",
            unsafe=True,
            fixed="""
import torch
def vali(model, loader, criterion):
    total_loss = []
    for x, y in loader:
        pred = model(x)
        loss = criterion(pred, y.detach().cpu())
        total_loss.append(loss.detach())
    return total_loss
""",
        ),
        Invalid(  # a fixture whose input requires grad: the loss of it carries history
            """
import torch
import torch.nn as nn
def fixture():
    criterion = nn.NLLLoss()
    target = torch.zeros(5, dtype=torch.long)
    expected = 0
    for _ in range(10):
        output = torch.log_softmax(torch.randn(5, 3, requires_grad=True), dim=1)
        expected += criterion(output, target)
    return expected
""",
            line=9,
            column=9,
            message="carries autograd history",
            unsafe=True,
            fixed="""
import torch
import torch.nn as nn
def fixture():
    criterion = nn.NLLLoss()
    target = torch.zeros(5, dtype=torch.long)
    expected = 0
    for _ in range(10):
        output = torch.log_softmax(torch.randn(5, 3, requires_grad=True), dim=1)
        expected += criterion(output, target).item()
    return expected
""",
        ),
        Invalid(  # handed the samples, but the loop runs the model itself: an evaluation with gradients on
            """
import torch
def score(model, samples, criterion):
    total = 0.0
    for x, y in samples:
        total += criterion(model(x), y)
    return total
""",
            line=5,
            column=9,
            message="this loop never calls backward",
            unsafe=True,  # the total is returned: what the caller does with it is not in sight
            fixed="""
import torch
def score(model, samples, criterion):
    total = 0.0
    for x, y in samples:
        total += criterion(model(x), y).detach()
    return total
""",
        ),
        Invalid(  # issue 27: a loss function of another module, proven to carry history by backward
            """
import torch
from losses import objective
def train(net, loader, optimizer):
    running_loss, running_mse = 0.0, 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss, mse, l1 = objective(net(x.cuda()), y.cuda())
        scaler.scale(loss).backward()
        running_loss += loss
        running_mse += mse.item()
    return running_loss, running_mse
""",
            line=9,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
from losses import objective
def train(net, loader, optimizer):
    running_loss, running_mse = 0.0, 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss, mse, l1 = objective(net(x.cuda()), y.cuda())
        scaler.scale(loss).backward()
        running_loss += loss.item()
        running_mse += mse.item()
    return running_loss, running_mse
""",
            unsafe=True,
        ),
        Invalid(  # an element of a loss function's dict of results, backpropagated by key
            """
import torch
from losses import objective
def train(net, loader, optimizer):
    running = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        losses = objective(net(x.cuda()), y.cuda())
        losses["total"].backward()
        optimizer.step()
        running += losses["total"]
    return running
""",
            line=10,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
from losses import objective
def train(net, loader, optimizer):
    running = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        losses = objective(net(x.cuda()), y.cuda())
        losses["total"].backward()
        optimizer.step()
        running += losses["total"].detach()
    return running
""",
            unsafe=True,
        ),
        Invalid(  # another element of the tuple whose first element is backpropagated
            """
import torch
from losses import objective
def train(net, loader, optimizer):
    running_ce = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        res = objective(net(x.cuda()), y.cuda())
        loss = res[0]
        loss.backward()
        optimizer.step()
        running_ce += res[1]
    return running_ce
""",
            line=11,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
from losses import objective
def train(net, loader, optimizer):
    running_ce = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        res = objective(net(x.cuda()), y.cuda())
        loss = res[0]
        loss.backward()
        optimizer.step()
        running_ce += res[1].detach()
    return running_ce
""",
            unsafe=True,
        ),
        Invalid(  # one override keeps the loss's history in the second result: every override must agree
            """
import torch
class Base:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion
    def fit(self, loader, optimizer):
        correct = 0.0
        for x, y in loader:
            loss, acc = self._step(x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            correct += acc
        return correct
    def _step(self, x, y):
        out = self.model(x)
        return self.criterion(out, y), (out.argmax(1) == y).float().mean().item()
class Weighted(Base):
    def _step(self, x, y):
        out = self.model(x)
        loss = self.criterion(out, y)
        return loss, loss * 0.5
""",
            line=13,
            column=13,
            message="can no longer be backpropagated",
            fixed="""
import torch
class Base:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion
    def fit(self, loader, optimizer):
        correct = 0.0
        for x, y in loader:
            loss, acc = self._step(x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            correct += acc.detach()
        return correct
    def _step(self, x, y):
        out = self.model(x)
        return self.criterion(out, y), (out.argmax(1) == y).float().mean().item()
class Weighted(Base):
    def _step(self, x, y):
        out = self.model(x)
        loss = self.criterion(out, y)
        return loss, loss * 0.5
""",
            unsafe=True,
        ),
        Invalid(  # the detached first result is scaled by an argument that carries history: so does the result
            """
import torch
def objective(out, y, weight):
    loss = torch.nn.functional.cross_entropy(out, y)
    return loss.data * weight, loss * weight
def train(net, loader, optimizer):
    total = 0.0
    for x, y in loader:
        out = net(x)
        value, loss = objective(out, y, out.mean())
        loss.backward()
        optimizer.step()
        total += value
    return total
""",
            line=12,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
def objective(out, y, weight):
    loss = torch.nn.functional.cross_entropy(out, y)
    return loss.data * weight, loss * weight
def train(net, loader, optimizer):
    total = 0.0
    for x, y in loader:
        out = net(x)
        value, loss = objective(out, y, out.mean())
        loss.backward()
        optimizer.step()
        total += value.detach()
    return total
""",
            unsafe=True,
        ),
        Invalid(  # another result of the call whose first result is backpropagated (accelerate)
            """
import torch
from losses import objective
def train(net, loader, optimizer, accelerator):
    epoch_l1 = 0.0
    for x, y in loader:
        loss, mse, l1 = objective(net(x), y)
        accelerator.backward(loss)
        optimizer.step()
        epoch_l1 += l1
    return epoch_l1
""",
            line=9,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
from losses import objective
def train(net, loader, optimizer, accelerator):
    epoch_l1 = 0.0
    for x, y in loader:
        loss, mse, l1 = objective(net(x), y)
        accelerator.backward(loss)
        optimizer.step()
        epoch_l1 += l1.detach()
    return epoch_l1
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch
total = 0.0
for x, y in val_loader:
    loss = criterion(model(x), y)
    total += loss
print(f"val loss {total / len(val_loader):.4f}")
""",
            line=5,
            column=5,
            message="never calls backward",
            fixed="""
import torch
total = 0.0
for x, y in val_loader:
    loss = criterion(model(x), y)
    total += loss.detach()
print(f"val loss {total / len(val_loader):.4f}")
""",
            harness=_run(),
        ),
        Invalid(  # training loop with backward per step; F resolved through an alias
            """
import torch.nn.functional as F
def train(net, loader, opt):
    running = 0
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        running = running + loss
    print(running)
""",
            line=9,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch.nn.functional as F
def train(net, loader, opt):
    running = 0
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        running = running + loss.item()
    print(running)
""",
            harness=_run("train(net, labelled, opt)"),
        ),
        Invalid(  # later used as a tensor: detach keeps it a tensor
            """
import torch
losses = []
for x, y in loader:
    losses.append(criterion(model(x), y))
print(torch.stack(losses).mean().item())
""",
            line=4,
            column=5,
            fixed="""
import torch
losses = []
for x, y in loader:
    losses.append(criterion(model(x), y).detach())
print(torch.stack(losses).mean().item())
""",
            harness=_run(),
        ),
        Invalid(  # escapes the function: the fix is unsafe
            """
import torch
def validate(model, loader, criterion):
    model.eval()
    total = 0
    for x, y in loader:
        total += criterion(model(x), y)
    return total / len(loader)
""",
            line=6,
            column=9,
            unsafe=True,
            fixed="""
import torch
def validate(model, loader, criterion):
    model.eval()
    total = 0
    for x, y in loader:
        total += criterion(model(x), y).detach()
    return total / len(loader)
""",
        ),
        Invalid(  # a dict entry, and an output that is not a 0-d tensor
            """
import torch
from torch import nn
net = nn.Linear(4, 2)
stats = {"out": 0}
for x in data:
    stats["out"] += net(x)
print(stats)
""",
            line=6,
            column=5,
            fixed="""
import torch
from torch import nn
net = nn.Linear(4, 2)
stats = {"out": 0}
for x in data:
    stats["out"] += net(x).detach()
print(stats)
""",
            harness=_run(setup="data = [torch.randn(2, 4) for _ in range(3)]"),
        ),
        Invalid(  # a HF-style output field, arithmetic on it
            """
import torch
history = []
for batch in loader:
    outputs = model(**batch)
    history.append(outputs.loss * 2)
print(sum(history) / len(history))
""",
            line=5,
            column=5,
            fixed="""
import torch
history = []
for batch in loader:
    outputs = model(**batch)
    history.append(outputs.loss.detach() * 2)
print(sum(history) / len(history))
""",
            harness=_run(setup=_OUTPUTS),
        ),
        Invalid(  # a training method on the model itself (not a forward pass)
            """
import torch
from torch import nn
class Net(nn.Module):
    def fit(self, loader, optimizer):
        epoch_loss = 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(self(x), y)
            loss.backward()
            optimizer.step()
            epoch_loss += loss
        print(epoch_loss)
""",
            line=11,
            column=13,
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def fit(self, loader, optimizer):
        epoch_loss = 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(self(x), y)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        print(epoch_loss)
""",
            harness=_run("Net.forward = lambda self, x: net(x)\nNet().fit(loader, opt)"),
        ),
        Invalid(  # a pass over a data split, collected and returned: every batch's graph is kept
            """
import torch
def predict(model, test_loader):
    outputs = []
    for x, _ in test_loader:
        outputs.append(model(x))
    return torch.cat(outputs)
""",
            line=5,
            column=9,
            unsafe=True,
            fixed="""
import torch
def predict(model, test_loader):
    outputs = []
    for x, _ in test_loader:
        outputs.append(model(x).detach())
    return torch.cat(outputs)
""",
        ),
        Invalid(  # initialised by tuple unpacking, in a per-batch training helper
            """
import torch
def train_step(model, loader, loss_fn, optimizer, device):
    train_loss, train_acc = 0, 0
    for X, y in loader:
        X, y = X.to(device), y.to(device)
        loss = loss_fn(model(X), y)
        train_loss += loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    train_loss /= len(loader)
    print(f"Train loss: {train_loss:.5f}")
""",
            line=7,
            column=9,
            message="on the host",
            fixed="""
import torch
def train_step(model, loader, loss_fn, optimizer, device):
    train_loss, train_acc = 0, 0
    for X, y in loader:
        X, y = X.to(device), y.to(device)
        loss = loss_fn(model(X), y)
        train_loss += loss.detach()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    train_loss /= len(loader)
    print(f"Train loss: {train_loss:.5f}")
""",
            harness=_run("train_step(model, loader, loss_fn, optimizer, device)"),
        ),
        Invalid(  # an exponential moving average of the loss; the loop syncs every step already
            """
import torch
def train(model, loader, criterion, opt):
    smooth = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(loss.item())
        smooth = 0.98 * smooth + 0.02 * loss
    print(smooth)
""",
            line=10,
            column=9,
            fixed="""
import torch
def train(model, loader, criterion, opt):
    smooth = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(loss.item())
        smooth = 0.98 * smooth + 0.02 * loss.detach()
    print(smooth)
""",
            harness=_run("train(model, loader, criterion, opt)"),
        ),
        Invalid(  # `extend` with a display, in a `while` loop
            """
import torch
import torch.nn.functional as F
def evaluate(model, it, steps):
    history = []
    step = 0
    while step < steps:
        x, y = next(it)
        out = model(x)
        history.extend([F.mse_loss(out, y)])
        step += 1
    print(sum(history))
""",
            line=9,
            column=9,
            message="never calls backward",
            fixed="""
import torch
import torch.nn.functional as F
def evaluate(model, it, steps):
    history = []
    step = 0
    while step < steps:
        x, y = next(it)
        out = model(x)
        history.extend([F.mse_loss(out, y).detach()])
        step += 1
    print(sum(history))
""",
            harness=_run("evaluate(model, iter(loader), 2)"),
        ),
        Invalid(  # a comprehension over a validation loader with gradients on
            """
import torch
losses = [criterion(model(x), y) for x, y in val_loader]
print(sum(losses) / len(losses))
""",
            line=2,
            column=10,
            message="comprehension",
            fixed="""
import torch
losses = [criterion(model(x), y).detach() for x, y in val_loader]
print(sum(losses) / len(losses))
""",
            harness=_run(),
        ),
        Invalid(  # Lightning calls training_step once per batch: the list outlives every step
            """
import torch
import torch.nn.functional as F
import lightning as L
class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(16, 4)
        self.train_losses = []
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.train_losses.append(loss)
        return loss
    def on_train_epoch_end(self):
        self.log("train_loss", torch.stack(self.train_losses).mean())
        self.train_losses.clear()
""",
            line=12,
            column=9,
            unsafe=True,
            message="once per batch",
            fixed="""
import torch
import torch.nn.functional as F
import lightning as L
class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(16, 4)
        self.train_losses = []
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.train_losses.append(loss.detach())
        return loss
    def on_train_epoch_end(self):
        self.log("train_loss", torch.stack(self.train_losses).mean())
        self.train_losses.clear()
""",
        ),
        Invalid(  # a same-file decorator that visibly keeps gradients on
            """
import time
import torch
def timed(fn):
    def wrapper(*args, **kwargs):
        start = time.time()
        result = fn(*args, **kwargs)
        print(time.time() - start)
        return result
    return wrapper
@timed
def evaluate(model, loader, criterion):
    total = 0
    for x, y in loader:
        total += criterion(model(x), y)
    print(total / len(loader))
""",
            line=14,
            column=9,
            fixed="""
import time
import torch
def timed(fn):
    def wrapper(*args, **kwargs):
        start = time.time()
        result = fn(*args, **kwargs)
        print(time.time() - start)
        return result
    return wrapper
@timed
def evaluate(model, loader, criterion):
    total = 0
    for x, y in loader:
        total += criterion(model(x), y).detach()
    print(total / len(loader))
""",
            harness=_run("evaluate(model, loader, criterion)", setup="import time\ntime.time = lambda: 0.0"),
        ),
        Invalid(  # outputs concatenated onto a running tensor
            """
import torch
def embed(encoder, test_loader):
    feats = None
    for x, _ in test_loader:
        f = encoder(x)
        feats = f if feats is None else torch.cat([feats, f])
    return feats
""",
            line=6,
            column=9,
            unsafe=True,
            fixed="""
import torch
def embed(encoder, test_loader):
    feats = None
    for x, _ in test_loader:
        f = encoder(x)
        feats = f.detach() if feats is None else torch.cat([feats, f.detach()])
    return feats
""",
        ),
        Invalid(  # a dict of lists; plotted with matplotlib, which needs numbers on the host
            """
import torch
import matplotlib.pyplot as plt
history = {"loss": [], "acc": []}
for epoch in range(5):
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        history["loss"].append(loss)
plt.plot(history["loss"])
""",
            line=10,
            column=9,
            fixed="""
import torch
import matplotlib.pyplot as plt
history = {"loss": [], "acc": []}
for epoch in range(5):
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        history["loss"].append(loss.detach())
plt.plot(history["loss"])
""",
            harness=_run("plt.plot(history[\"loss\"])", setup=_PLOT),
        ),
        Invalid(  # returned, and a later notebook cell needs tensors: `.detach()`, not `.item()`
            """
import torch
def fit(model, loader, criterion, optimizer):
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
# <memlint cell 2>
losses = fit(model, train_loader, criterion, optimizer)
print([l.item() for l in losses])
""",
            line=9,
            column=9,
            unsafe=True,
            fixed="""
import torch
def fit(model, loader, criterion, optimizer):
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses
# <memlint cell 2>
losses = fit(model, train_loader, criterion, optimizer)
print([l.item() for l in losses])
""",
        ),
        Invalid(  # tuple-unpacked start and values; only the part with history is detached
            """
import torch
running_loss, seen = 0.0, 0
for inputs, labels in train_loader:
    optimizer.zero_grad()
    loss, n = criterion(net(inputs), labels), inputs.size(0)
    loss.backward()
    optimizer.step()
    running_loss += loss * n
    seen += n
print(running_loss / seen)
""",
            line=8,
            column=5,
            fixed="""
import torch
running_loss, seen = 0.0, 0
for inputs, labels in train_loader:
    optimizer.zero_grad()
    loss, n = criterion(net(inputs), labels), inputs.size(0)
    loss.backward()
    optimizer.step()
    running_loss += loss.detach() * n
    seen += n
print(running_loss / seen)
""",
            harness=_run(),
        ),
        Invalid(  # a running meter that adds the tensor it is given to `self.sum`
            """
import torch
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
def train(train_loader, model, criterion, optimizer):
    losses = AverageMeter()
    for images, target in train_loader:
        loss = criterion(model(images), target)
        losses.update(loss, images.size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(losses.sum / losses.count)
""",
            line=12,
            column=9,
            unsafe=True,
            fixed="""
import torch
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0, 0
    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
def train(train_loader, model, criterion, optimizer):
    losses = AverageMeter()
    for images, target in train_loader:
        loss = criterion(model(images), target)
        losses.update(loss.detach(), images.size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(losses.sum / losses.count)
""",
        ),
        Invalid(  # a running total kept as a 0-d tensor on the device; backward in a per-step helper
            """
import torch
import torch.nn.functional as F
def train_step(model, x, y, optimizer):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss
def train(model, loader, optimizer, device):
    total_loss = torch.tensor(0.0, device=device)
    for x, y in loader:
        total_loss = total_loss + train_step(model, x.to(device), y.to(device), optimizer)
    print(total_loss / len(loader))
""",
            line=12,
            column=9,
            message="calls backward every step",
            fixed="""
import torch
import torch.nn.functional as F
def train_step(model, x, y, optimizer):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss
def train(model, loader, optimizer, device):
    total_loss = torch.tensor(0.0, device=device)
    for x, y in loader:
        total_loss = total_loss + train_step(model, x.to(device), y.to(device), optimizer).detach()
    print(total_loss / len(loader))
""",
            harness=_run("train(model, labelled, optimizer, device)"),
        ),
        Invalid(  # a Hugging Face Trainer's compute_loss keeps every step's loss on the object
            """
import torch
from transformers import Trainer
class LoggingTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.step_losses = []
    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        outputs = model(**inputs)
        loss = outputs.loss
        self.step_losses.append(loss)
        return (loss, outputs) if return_outputs else loss
""",
            line=10,
            column=9,
            unsafe=True,
            message="`compute_loss` once per batch",
            fixed="""
import torch
from transformers import Trainer
class LoggingTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.step_losses = []
    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        outputs = model(**inputs)
        loss = outputs.loss
        self.step_losses.append(loss.detach())
        return (loss, outputs) if return_outputs else loss
""",
        ),
        Invalid(  # a loss of `reduction="none"` has an element per sample: `.detach()`, never `.item()` (issue 25)
            """
import torch
from torch import nn
criterion = nn.MSELoss(reduction="none")
total = 0
for x, y in val_loader:
    loss = criterion(model(x), y)
    total += loss
print(total)
""",
            line=7,
            column=5,
            fixed="""
import torch
from torch import nn
criterion = nn.MSELoss(reduction="none")
total = 0
for x, y in val_loader:
    loss = criterion(model(x), y)
    total += loss.detach()
print(total)
""",
            harness=_run(),
        ),
        Invalid(  # Lightning backpropagates what training_step returns: its loss has history
            """
import torch
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.total = 0.0
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss_fn(self(x), y)
        self.total += loss
        return loss
    def training_epoch_end(self, outputs):
        print(self.total)
""",
            line=10,
            column=9,
            unsafe=True,
            message="Lightning runs `training_step` once per batch",
            fixed="""
import torch
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.total = 0.0
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss_fn(self(x), y)
        self.total += loss.detach()
        return loss
    def training_epoch_end(self, outputs):
        print(self.total)
""",
        ),
        Invalid(  # the file's helper backpropagates its parameter: the argument has history
            """
import torch
def backward_step(objective, scaler):
    scaler.scale(objective).backward()
def train(model, loader, criterion, scaler):
    running = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        backward_step(loss, scaler)
        running += loss
    return running
""",
            line=9,
            column=9,
            message="carries autograd history",
            unsafe=True,
            fixed="""
import torch
def backward_step(objective, scaler):
    scaler.scale(objective).backward()
def train(model, loader, criterion, scaler):
    running = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        backward_step(loss, scaler)
        running += loss.detach()
    return running
""",
        ),
        Invalid(  # `loss = raw_loss / steps` is backpropagated: `raw_loss` is the same computation
            """
import torch
def train(model, loader, steps):
    total = 0.0
    for batch in loader:
        raw_loss, logits = model.compute(batch)
        loss = raw_loss / steps
        loss.backward()
        total += raw_loss
    return total
""",
            line=8,
            column=9,
            message="carries autograd history",
            unsafe=True,
            fixed="""
import torch
def train(model, loader, steps):
    total = 0.0
    for batch in loader:
        raw_loss, logits = model.compute(batch)
        loss = raw_loss / steps
        loss.backward()
        total += raw_loss.detach()
    return total
""",
        ),
        Invalid(  # a rollout buffer: a distribution from the actor keeps its history in `log_prob`
            """
import torch
class Agent:
    def __init__(self, actor, critic):
        self.actor = actor
        self.critic = critic
        self.log_probs = []
    def select_action(self, state):
        action, dist = self.actor(state)
        self.log_probs.append(dist.log_prob(action))
        return action.cpu().detach().numpy()
    def update(self):
        old_log_probs = torch.cat(self.log_probs).detach()
        self.log_probs = []
        return old_log_probs
    def train(self, env, num_frames):
        state = env.reset()
        for step in range(num_frames):
            action = self.select_action(state)
            state, reward, done = env.step(action)
            if step % 2048 == 0:
                self.update()
""",
            line=9,
            column=9,
            unsafe=True,
            message="carries autograd history",
            fixed="""
import torch
class Agent:
    def __init__(self, actor, critic):
        self.actor = actor
        self.critic = critic
        self.log_probs = []
    def select_action(self, state):
        action, dist = self.actor(state)
        self.log_probs.append(dist.log_prob(action).detach())
        return action.cpu().detach().numpy()
    def update(self):
        old_log_probs = torch.cat(self.log_probs).detach()
        self.log_probs = []
        return old_log_probs
    def train(self, env, num_frames):
        state = env.reset()
        for step in range(num_frames):
            action = self.select_action(state)
            state, reward, done = env.step(action)
            if step % 2048 == 0:
                self.update()
""",
        ),
        Invalid(  # a list grown by concatenation keeps every step's loss (issue 27: shapes the corpus lacked)
            """
import torch
def train(net, loader, opt, criterion):
    losses = []
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        losses += [loss]
    print(torch.stack(losses).mean())
""",
            line=9,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
def train(net, loader, opt, criterion):
    losses = []
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        losses += [loss.detach()]
    print(torch.stack(losses).mean())
""",
            harness=_run("train(net, loader, opt, criterion)"),
        ),
        Invalid(  # a dict entry read back with `.get` is a running sum
            """
import torch
def train(net, loader, opt, criterion):
    stats = {}
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        stats["loss"] = stats.get("loss", 0.0) + loss
    print(stats["loss"] / len(loader))
""",
            line=9,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
def train(net, loader, opt, criterion):
    stats = {}
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        stats["loss"] = stats.get("loss", 0.0) + loss.detach()
    print(stats["loss"] / len(loader))
""",
            harness=_run("train(net, loader, opt, criterion)"),
        ),
        Invalid(  # an in-place `add_` into a tensor started at zero chains every step's graph
            """
import torch
def train(net, loader, opt, criterion):
    total = torch.zeros(1)
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        total.add_(loss)
    print(total / len(loader))
""",
            line=9,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
def train(net, loader, opt, criterion):
    total = torch.zeros(1)
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        total.add_(loss.detach())
    print(total / len(loader))
""",
            harness=_run("train(net, loader, opt, criterion)"),
        ),
        Invalid(  # `torch.add` is a sum
            """
import torch
def train(net, loader, opt, criterion):
    total = torch.tensor(0.0)
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        total = torch.add(total, loss)
    print(total / len(loader))
""",
            line=9,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
def train(net, loader, opt, criterion):
    total = torch.tensor(0.0)
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        total = torch.add(total, loss.detach())
    print(total / len(loader))
""",
            harness=_run("train(net, loader, opt, criterion)"),
        ),
        Invalid(  # a running maximum over restarts keeps every restart's forward graph, as a sum does
            """
import torch
import torch.nn.functional as F
def worst_case(model, x, y, restarts, steps):
    worst = torch.zeros(y.shape[0])
    for _ in range(restarts):
        delta = torch.zeros_like(x, requires_grad=True)
        for _ in range(steps):
            F.cross_entropy(model(x + delta), y).backward()
            delta.data += delta.grad.sign()
            delta.grad.zero_()
        loss = F.cross_entropy(model(x + delta), y, reduction="none")
        worst = torch.max(worst, loss)
    print(worst.mean().item())
""",
            line=12,
            column=9,
            fixed="""
import torch
import torch.nn.functional as F
def worst_case(model, x, y, restarts, steps):
    worst = torch.zeros(y.shape[0])
    for _ in range(restarts):
        delta = torch.zeros_like(x, requires_grad=True)
        for _ in range(steps):
            F.cross_entropy(model(x + delta), y).backward()
            delta.data += delta.grad.sign()
            delta.grad.zero_()
        loss = F.cross_entropy(model(x + delta), y, reduction="none")
        worst = torch.max(worst, loss.detach())
    print(worst.mean().item())
""",
            harness=_run("worst_case(model, torch.arange(12.0).view(4, 3) / 10, torch.tensor([0, 1, 1, 0]), 2, 2)"),
        ),
        Invalid(  # started by the conditional's other branch: the fix detaches both
            """
import torch
def train(net, loader, opt, criterion):
    total = None
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        total = loss if total is None else total + loss
    print(total / len(loader))
""",
            line=9,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
def train(net, loader, opt, criterion):
    total = None
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        total = loss.detach() if total is None else total + loss.detach()
    print(total / len(loader))
""",
            harness=_run("train(net, loader, opt, criterion)"),
        ),
        Invalid(  # a list kept in a dict through `setdefault`
            """
import torch
def train(net, loader, opt, criterion):
    history = {}
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        history.setdefault("loss", []).append(loss)
    print(torch.stack(history["loss"]).mean())
""",
            line=9,
            column=9,
            message="can no longer be backpropagated",
            unsafe=True,
            fixed="""
import torch
def train(net, loader, opt, criterion):
    history = {}
    for x, y in loader:
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        history.setdefault("loss", []).append(loss.detach())
    print(torch.stack(history["loss"]).mean())
""",
        ),
        Invalid(  # a slot per iteration: the loop's own index stores every step's loss (in a tensor, a chain of copies)
            """
import torch
def train(net, loader, opt, criterion):
    losses = torch.zeros(len(loader))
    for i, (x, y) in enumerate(loader):
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        losses[i] = loss
    print(losses.mean())
""",
            line=9,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
def train(net, loader, opt, criterion):
    losses = torch.zeros(len(loader))
    for i, (x, y) in enumerate(loader):
        opt.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
        losses[i] = loss.detach()
    print(losses.mean())
""",
            harness=_run("train(net, loader, opt, criterion)"),
        ),
        Invalid(  # bound afresh per batch, but every turn of the inner loop runs its own backward and optimizer step
            """
import torch
def train(gen, disc, loader, opt_d, criterion, reps):
    for x, y in loader:
        fake = gen(x).detach()
        total = 0.0
        for _ in range(reps):
            opt_d.zero_grad()
            loss = criterion(disc(fake), y)
            loss.backward()
            opt_d.step()
            total += loss
        print((total / reps).item())
""",
            line=11,
            column=13,
            message="can no longer be backpropagated",
            fixed="""
import torch
def train(gen, disc, loader, opt_d, criterion, reps):
    for x, y in loader:
        fake = gen(x).detach()
        total = 0.0
        for _ in range(reps):
            opt_d.zero_grad()
            loss = criterion(disc(fake), y)
            loss.backward()
            opt_d.step()
            total += loss.detach()
        print((total / reps).item())
""",
            harness=_run("train(torch.nn.Identity(), torch.nn.Linear(3, 2), loader, opt, criterion, 2)"),
        ),
        Invalid(  # a helper of the project returns its argument's history (`torch.div` of it): so does its call
            """
import torch
def unit(v, dim=1):
    return torch.div(v, v.norm(2, dim, True))
def evaluate(model, loader):
    feats = []
    for x, _ in loader:
        feats.append(unit(model(x)))
    return torch.cat(feats)
""",
            line=7,
            column=9,
            message="carries autograd history",
            unsafe=True,
            fixed="""
import torch
def unit(v, dim=1):
    return torch.div(v, v.norm(2, dim, True))
def evaluate(model, loader):
    feats = []
    for x, _ in loader:
        feats.append(unit(model(x)).detach())
    return torch.cat(feats)
""",
        ),
        Invalid(  # a loss summed from a number carries history: the code backpropagates the sum
            """
import torch
def train(net, loader, opt):
    total = 0.0
    for x, y in loader:
        opt.zero_grad()
        loss = 0.0
        for out in net(x).split(1, dim=1):
            loss += out.pow(2).mean()
        loss.backward()
        opt.step()
        total += loss
    print(total / len(loader))
""",
            line=11,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch
def train(net, loader, opt):
    total = 0.0
    for x, y in loader:
        opt.zero_grad()
        loss = 0.0
        for out in net(x).split(1, dim=1):
            loss += out.pow(2).mean()
        loss.backward()
        opt.step()
        total += loss.item()
    print(total / len(loader))
""",
            harness=_run("train(net, loader, opt)"),
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._pending: dict[int, list[KeptHistory]] = {}

    # ------------------------------------------------------------------ where histories are kept

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._accumulation(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._accumulation(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._accumulation(node)

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._keep(kept_by_comprehension(node, node.elt, self.ctx))

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._keep(kept_by_comprehension(node, node.elt, self.ctx))

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._keep(kept_by_comprehension(node, node.elt, self.ctx))

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._keep(kept_by_comprehension(node, node.value, self.ctx))

    def _accumulation(self, node: cst.CSTNode) -> None:
        kept = accumulated_by(node, self.ctx)
        if kept is not None:
            self._keep(kept_history(node, kept, self.ctx))

    def _keep(self, kept: "KeptHistory | None") -> None:
        """Whether the kept value is the objective is decided once the scope is seen."""
        if kept is not None:
            self._pending.setdefault(id(self.ctx.function_node or self.ctx.module), []).append(kept)

    # ------------------------------------------------------------------ deciding, once the scope is seen

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._decide(node)

    def leave_Module(self, node: cst.Module) -> None:
        self._decide(node)

    def _decide(self, scope: cst.CSTNode) -> None:
        kept_here = self._pending.pop(id(scope), [])
        for kept in kept_here:
            uses = accumulator_uses(kept, kept_here, scope, self.ctx)
            if Use.GRADIENT in uses:
                slots = backpropagated_slots(kept, kept_here, scope)
                if slots is not None:
                    self._report_unused_slots(kept, slots, scope)  # only one fixed slot is the objective: `losses_q[-1]`
                continue  # otherwise the accumulated value is the objective: backpropagated, or passed to autograd.grad
            if not kept_for_the_caller(kept, uses, scope, self.ctx):
                self._report(kept, uses, escapes(kept, uses), scope)

    # ------------------------------------------------------------------ message and fix

    def _report_unused_slots(self, kept: KeptHistory, read_back: tuple[str, ...], scope: cst.CSTNode) -> None:
        """`losses_q[k + 1] += loss_q`, then `losses_q[-1].backward()`: the other slots' graphs are
        kept for nothing.  No fix: detaching the value would cut the backpropagated slot too."""
        code = self.ctx.module.code_for_node
        slots = ", ".join(f"`{kept.name}[{slot}]`" for slot in read_back)
        message = (
            f"`{shorten(code(kept.accumulator))}` accumulates `{shorten(code(kept.shown))}`, which carries autograd "
            f"history, into a slot that moves with the loop, but the code reads back only {slots}: backward runs "
            "through those alone, and every other slot keeps the graphs written into it, with the activations "
            f"they saved, on the device until `{kept.name}` is released; keep `.detach()` or `.item()` "
            "values in the slots nothing backpropagates"
        )
        self.report(kept.node, message, None, grad_sensitive=True, related=related_places(kept, scope))

    def _report(self, kept: KeptHistory, uses: set[Use], escaped: bool, scope: cst.CSTNode) -> None:
        ctx = self.ctx
        module = ctx.module
        value = shorten(module.code_for_node(kept.shown))
        if kept.accumulator is not None:
            holder = f"`{shorten(module.code_for_node(kept.accumulator))}`"
            subject = f"{holder} accumulates `{value}`"
        else:
            holder = "the list"
            subject = f"this comprehension keeps `{value}` for every batch of `{kept.source}`"
        per_step = kept.per_step
        fate = graph_fate(kept, ctx)
        if fate == "backward":
            if per_step is not None and per_step.runner is not None:
                where = f"{per_step.runner} runs `{per_step.name}` once per batch and backpropagates its loss"
            elif per_step is not None:
                where = f"`{per_step.name}` runs once per batch and calls backward"
            else:
                where = "the loop calls backward every step"
            effect = (
                f"{where}; backward frees the saved activations, but each step's autograd graph stays "
                f"reachable from {holder} on the host (about one step's graph per iteration: ~5 KB for a "
                "3-layer MLP, ~166 KB for a 4-layer TransformerEncoder) until it is reset, and it can no "
                "longer be backpropagated"
            )
        elif fate == "no-backward":
            where = "nothing calls backward on it" if kept.source is not None else "this loop never calls backward"
            effect = (
                f"{where} (evaluation with gradients on), so every iteration's graph and the activations it "
                "saved for backward stay on the device: device memory grows with each iteration until "
                f"{holder} is released"
            )
        else:  # a per-batch function whose backward, if any, runs elsewhere
            effect = (
                f"`{per_step.name}` runs once per batch, so every call's autograd graph stays reachable "  # type: ignore[union-attr]
                f"from {holder} (on the host once backward has run, with its saved activations on the device "
                "if it never does) until it is reset"
            )
        message = f"{subject}, which carries autograd history: {effect}"
        method = keeping_method(kept, uses, ctx)
        replacements = tuple((leaf, method_call(leaf, method)) for leaf in kept.values)
        shown = module.code_for_node(replacements[0][1])
        if method == "detach":
            hint = f"Accumulate `{shown}`" if len(shown) <= 40 else "Accumulate the value's `.detach()`"
            hint += " (it stays on the device: no sync per step)"
        else:
            hint = f"Accumulate `{shown}`" if len(shown) <= 40 else "Accumulate the value's `.item()`"
        safe = not escaped and kept.attribute is None
        fix = NodeFix(hint, Applicability.SAFE if safe else Applicability.UNSAFE, replacements)
        self.report(kept.node, message, fix, grad_sensitive=True, related=related_places(kept, scope))
