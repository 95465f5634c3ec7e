"""ML013 host-then-device."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from memlint.analysis.caches import statement_fills_cache
from memlint.analysis.call_edits import append_keyword
from memlint.analysis.device_targets import cuda_target_certain, destination, follows_host_batch, move_is_only_device
from memlint.analysis.device_targets import moves_nothing, moves_nothing_in_project
from memlint.analysis.host_factories import device_keyword_joins, factory_kind, factory_under, from_helper, holds_factory
from memlint.analysis.host_factories import counts_range, made_on_host, same_values_on_device
from memlint.analysis.host_flow import EMPTY, Flow, factory_names, statement_flows
from memlint.analysis.host_targets import follows_host_tensor
from memlint.analysis.iteration import attribute_flag_off, configured_branch, configured_overrides, flag_turned_on, opt_in_parameter
from memlint.analysis.iteration import every_call, every_iteration, every_training_step, runs_own_pass, step_loop_called_functions
from memlint.analysis.moves import later_moves, through_reshapes
from memlint.analysis.walk import code_descendants
from memlint.analysis.project_facts import moved_argument
from memlint.analysis.tables import LEGACY_SIZED_CONSTRUCTORS, PER_BATCH_HOOKS
from memlint.analysis.tuple_returns import raising_tuple_read
from memlint.analysis.tensor_casts import cuda_type_cast, moving_casts_under, type_as_argument
from memlint.diagnostics import Severity
from memlint.pipeline.text import shorten
from memlint.rule import MARIMO_STAND_IN, Harness, Invalid, Rule, Valid
from memlint.rules.ml013_host_then_device.meta import META

# Methods a framework runs once per batch: Lightning's and HF Trainer's (the project pass's table),
# and the callbacks of Catalyst and Keras-style trainers.
_BATCH_HOOKS = PER_BATCH_HOOKS | {"on_batch_start", "on_batch_end"}
# Stand-ins for what the examples take as given (a loader, a model), on the fake GPU of their harness.
_ONE_BATCH = """
import torch
loader = [{"x": torch.randn(4, 2)}]
model = lambda x: x * 2
"""
_ONE_BATCH_LOADER = """
import torch
import torch.utils.data
ds = torch.randn(4, 2)
torch.utils.data.DataLoader = lambda dataset, batch_size: [dataset]
"""
_DECODER = """
import torch
class _Decoder:
    def decode(self, source, decoder_input, mask):
        return source + mask.sum()
"""
_ONE_LABELLED_BATCH = """
import torch
train_loader = [(torch.randn(2, 3), torch.tensor([0, 1]))]
weight = torch.ones(1, 10, device="cuda")
model = lambda x: x.sum(1, keepdim=True) * weight
class _Loss:  # autograd does not run on the fake GPU: the harness compares the loss
    def __init__(self, value):
        self.value = value
    def backward(self):
        pass
criterion = lambda out, target: _Loss(((out - target) ** 2).mean())
"""
# A test loader of one labelled batch, a model and the run's configuration (`args.attack`).
_LABELLED_TEST_BATCH = """
import torch
test_loader = [(torch.randn(2, 3), torch.tensor([0, 1]))]
model = lambda x: x * 2
class args:
    attack = "pgd"
"""
_ONE_IMAGE_BATCH = """
import torch
dataloader = [(torch.randn(3, 4), None)]
D = lambda x: x.mean(1)
criterion = lambda a, b: (a - b).abs().mean()
"""


class HostThenDevice(Rule):
    """
    ## What it does
    Finds a tensor created on the host and then moved to the accelerator, in code run on every step.
    Such tensors are made from sizes, as in `torch.zeros(n).cuda()`, `torch.randn(...).to(device)`,
    `Variable(torch.ones(n)).cuda()`, `torch.full(...).long().to(device)` and
    `torch.arange(n).view(-1, 1).to(device)` (a reshape between them), `torch.cat((torch.zeros(b, 1), batch), 1).to(d)`
    (the one part of a concatenation a factory makes; no fix, the other parts need their own move),
    `torch.stack([torch.zeros(n), torch.ones(n)], -1).cuda()` or `torch.stack(torch.meshgrid(torch.arange(h), torch.arange(w)), -1).cuda()`
    (a stack, concatenation or grid of parts that are all such tensors is made where they are, on the host; no fix), `(torch.ones(b, h, n, n) / n).to(d)`
    (arithmetic with a number or a size, also in place: `torch.ones(n).mul_(sigma / 255.)`; `n` of `b, h, n, d = v.shape` or of `n = v.shape[0]`, a rank's offset
    `n * torch.distributed.get_rank()`; no fix with a number the code only reads as one: a loop's counter in
    `(torch.ones(n) * i).to(d)`, `self.fs` in `torch.linspace(...) / self.fs` where the class binds it from a constructor
    argument; not with a parameter or attribute nothing binds or sizes, which may be any tensor), elementwise math of it
    (`torch.exp(torch.arange(h) * -c)`, `.cos()`; no fix), a comparison of it with a number (`(torch.eye(n) > .5).cuda()`),
    a sort of it (`torch.randint(0, b, (k,)).sort()[0].to(d)`, `.values`, `torch.sort(t)[0]`: the sorted values are
    made where the draw is; no fix), a local name bound earlier to such a tensor and read only
    to compute others, to be wrapped in `Variable` or to be moved (`n = torch.linspace(0, N, steps=N)` then `window = 0.54 - 0.46 * torch.cos(2 * math.pi * n / N)`
    moved: the factory's line is reported; `mask` in `torch.ones(n, n) - mask`; `mask = torch.eye(n) > .5`, `I = Variable(mask)`,
    `if torch.cuda.is_available(): I = I.cuda()`), `torch.diag(torch.ones(n)).cuda()` (a diagonal or a triangle of it), `torch.zeros(n, 1).type_as(x)` or
    `.type(type(x.data))` (a cast to `x`'s type moves to `x`'s device too; no fix, `device=` alone keeps the dtype;
    a cast to a dtype, `.type(torch.int)`, is one more cast on the way), or `z = torch.rand(n)` (or `z` bound in
    each branch of an `if` / `elif` chain the configuration picks: `if args.padding == 0: z = torch.zeros(...)`, or of a chain
    with any tests that ends in an `else` and binds such a tensor in every branch, a branch maybe writing number literals
    into it: `z[:, :, 127] = 1`; or each name of an unpacking, `ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w))` then
    `xs, ys = xs.cuda(), ys.cuda()`) moved by a
    later statement of the same block (`z = z.cuda()`, `z = Variable(z).cuda()`, `torch.cat([y, z]).to(d)`, `torch.stack([y, z]).cuda()`,
    `y = torch.cat((y, z), 1)` then `y = y.to(d)` (the join bound to a name a later statement moves, `z` read nowhere after), or through a reshape and a cast in a statement
    that binds another name: `y = y + z.view(-1, 1).type_as(y)`, or `if y.is_cuda: return z.cuda()`, or first in the branch
    of a device check that a run on the accelerator takes, rebinding the name: `if x.is_cuda: z = z.cuda(); kernel(x, z)`
    with an `else` that runs the host's kernel, or the `else` of `if not x.is_cuda:`; `if self.device_id is not None:`, a run
    given accelerator ids, `device_id`, `gpu_ids`, `args.gpu`; or the arm of a conditional expression such a run takes,
    `z = z.cuda() if x.is_cuda else z`) that
    nothing reads between but a rebinding to itself wrapped, reshaped, cast or sliced (`z = Variable(z, requires_grad=False)`, `z = z[:, 1:]`) or
    a second tensor computed from it and moved by the same statement (`inv = torch.ones(n, n) - mask` then
    `mask, inv = mask.cuda(), inv.cuda()`; no fix then), or a part of such a factory (`torch.eye(d)[None, :, :]`, `torch.eye(n)[labels]`:
    no fix, the index may be the host's), or
    `causal_mask(n).type_as(mask).to(device)` where `causal_mask`, a function of this file or of another
    linted with it, returns on every call a tensor it has just made on the host (every `return` a size
    factory without `device=`, through a local name, a cast, a reshape, a triangle, a comparison
    with a number: `torch.triu(torch.ones(1, n, n), diagonal=1) == 0`, an index of it: `torch.eye(n)[labels]`,
    an elementwise torch function of it or arithmetic with a number or a parameter defaulting to one:
    `-torch.log(eps - torch.log(torch.rand(shape) + eps))` of `def sample_gumbel(shape, eps=1e-10)`; a name rebound in
    straight-line code, `m = m.view(-1, k)`; numbers written into fixed slices of it, `img_mask[:, h, w, :] = cnt` over a
    literal tuple of `slice(...)`s, but no data; the difference of two such tensors, a `masked_fill` of one by a comparison
    with a number, a helper of the file that returns a reshape of its argument, `window_partition(img_mask, ws)`), or a method
    of the class called on `self` that does (`self.create_mask(H, W).to(x.device)` of a Swin layer, where no other class of
    the file has its own `create_mask`); no fix, the `device=` belongs
    in the helper; a helper that may return a tensor already on the device is not followed); the
    code run on every step:

    - inside an `nn.Module`'s `forward` (or an old-style autograd `Function`'s, which calling an
      instance runs: `ReorgFunction(stride)(x)` in a layer's `forward`), or in a method `forward` calls (a loss module's target
      assignment, say), anywhere in them; or in a function, or a class's `__init__`, that a `forward`
      of any linted file runs (`make_one_hot(target, n)`, `TriangularCausalMask(B, L, device=x.device)`
      built in an attention layer's `forward`: the project pass's per-forward fact); not where the
      value fills a cache that the `if` around it reads (`if self.mask is None: self.mask = ...`), nor
      behind a flag parameter that defaults to False (`if init:` of `forward(self, x, init=False)`, a
      data-dependent initialisation called once), unless every call of the function (a module-level
      one) in the linted files turns the flag on with `True` or an accelerator test: `sinc(band, t, cuda)`
      with `cuda = x.is_cuda`, `gumbel_softmax(logits, hard=True)` (then the branch runs on every call);
      nor in the body of `if self.lu:` where the class's `__init__(self, n, lu=False)` keeps the flag
      (`self.lu = lu`, the attribute's one binding in the file) and some construction of the class in the
      linted files leaves it off (`Glow(width, depth)` passing no `lu`: an opt-in instance's branch);
    - on every iteration of a training or evaluation loop, in its body or in a function the loop
      calls unconditionally or behind a choice among the run's configured alternatives (`if args.attack
      == "pgd": attack_pgd(...)`; an entry of a configuration dict, or whether it has one: `if "loss_ota" not in
      hyp or hyp["loss_ota"] == 1: loss = compute_loss_ota(...)`, a loss object whose `__call__` runs) (in the same file, a function nested in the loop's own too: `def mix(x)`
      in a generator over the loader, or in another file linted with it; `self.decoder.recognize_beam(...)`
      in a class that builds `self.decoder = Decoder(...)` calls that class's method; `model.loss(...)`
      on a receiver named like a model calls the `loss` method of the project's nn.Modules, as
      `lm_model.log_prob(x)` calls their `log_prob`; a method called on a receiver of unknown class,
      `test_dataset.multi_scale_inference(...)` in a loop over a loader, calls every project method
      so named where they all override one method of a common base, not a placeholder, and the name
      is no container's (`results.update(...)`), as does a call on an instance of a class picked at run
      time, `globals()[name]`, where every candidate trains or runs a model; `trainer.gen_update(...)` on a
      name bound to one of several project classes (`trainer = MUNIT_Trainer(c)` / `trainer =
      UNIT_Trainer(c)` in an `if`/`elif`, or `A(c) if a else B(c)`) calls each class's method, and none
      where any of them is not a project class with that method; a function that trains itself, calling backward
      or an optimizer's step, is called once per training step behind any condition: `if it % n_d
      == 0: train_G()`), or in a hook a
      framework runs once per batch (`training_step`, `on_train_batch_start`, ...).

    A training or evaluation loop iterates over something named like a data loader or calls
    backward, an optimizer step or something named like a model (also inside a fixed loop of a few
    items it holds: test-time flips). Not such loops: one-off loops
    (over layers when fusing them for deployment, over files; a loop that sets the run's configuration per item,
    `for opt.weights in opt.weights: run(**vars(opt))`, one whole run per item; but a few items each a training step,
    `for dataset in ["CelebA", "RaFD"]:` inside the iterations loop, are steps), and epoch loops (`for epoch in ...`,
    or a loop that hands a loader to a call that runs the pass): code in them runs once per pass. A
    function that runs a pass over a loader itself (a `validate(loader)` helper) runs its code
    outside that loop once per pass, however often it is called, so the buffers it sets up before
    its batch loop are not reported (a `while` loop that runs a model but calls no backward and
    steps no optimizer is a decoding loop over one input, no pass: `translate(sentence)` called per
    test batch sets up its beam on every call; nor is a `for _ in range(n)` loop that never reads its
    counter (an inner `for _ in range(k):` binds the name again, no read) and draws no data, an attack's
    restarts or perturbation steps on one input: `perturb(model, x)` called
    per training batch sets up its random start on every call). A loop over epochs that calls such a function is
    no step loop either, whatever the function runs in its pass. A `while` decoding loop that calls a
    method of the model (`model.decode(...)`) runs once per generated token, so code in its own body
    is reported, as is code in a `for` inside a `while` that calls a method of the model on every
    item (a beam step's candidates); a loop that breaks once a counter reaches a small constant (`if count ==
    num_examples: break`, `num_examples=2` a parameter's default) runs a fixed small count and is
    not a per-step loop.

    Only torch's size factories count (`zeros`, `ones`, `empty`, `full`, `arange`, `linspace`,
    `logspace`, `eye`, `rand`, `randn`, `randint`, `randperm`, the signal windows `hann_window`,
    `hamming_window`, `blackman_window`, `bartlett_window`, `kaiser_window`, resolved through imports, and the legacy
    typed constructors called with sizes: `torch.FloatTensor(n, c, h, w)`, `torch.LongTensor(64)`, `torch.FloatTensor(x.size() + (n,))`,
    `torch.BoolTensor(x.size())` (a `torch.Size`; a tuple would be data), `torch.FloatTensor(*x.shape)` (a tensor's sizes spread),
    or with `range(n)`, the numbers of an `arange` (`torch.LongTensor(range(n))`, a row of them: `torch.LongTensor([range(n)])`),
    looking through an in-place fill such as `.zero_()`; reported without a fix, since they take no
    accelerator `device=`; `torch.FloatTensor(rewards)` with one argument that may be data is not), only when
    the factory has no `device=` of its own and a size other than a literal 0, and only when the
    target is recognisably a device: `.cuda()`, `.to("cuda")`, `.to(device)` / `.to(self.device)` /
    `.to(x.device)` / `.to(torch.device(...))` / a rank. Data constructors (`torch.tensor(data)`,
    `as_tensor`, `from_numpy`) are not reported: given `device=`, `torch.tensor` still builds the
    tensor on the host and copies it (PyTorch 2.13's dispatch: `lift_fresh` on the CPU, then
    `_to_copy`), so moving the device into the call saves nothing. Nor is a tensor that host data is written into
    before the move (a one-hot target `scatter_`ed from the loader's labels): made on the device it
    needs that data copied instead, one copy either way (measured slower on an H200). `.to(x)` with a
    tensor `x` moves to `x`'s device (and dtype), when the code reads `x` as a tensor (`x.shape`,
    `x.size(0)`, `x.device`: the model's `tensor_reads` fact; no fix, `device=` alone would keep the
    dtype); `.to(other)` with an argument that may be a dtype is not reported, nor is a move to the device
    of a tensor its function builds on the host whatever the default device (`src = torch.LongTensor([[1, 2, 3]])`,
    never rebound nor handed on, then `torch.zeros(1, 1).type_as(src)`: a dtype cast, nothing moves). A cast to an
    accelerator's legacy type, `.type(torch.cuda.FloatTensor)`, is a move to the current GPU (no fix), also through a
    name every binding of which is one of torch's tensor types, some a `torch.cuda` one (`Floats = torch.cuda.FloatTensor if x.is_cuda
    else torch.FloatTensor`, the type a run on the accelerator picks; not a name that may hold a dtype or a host type only,
    nor a parameter: `x.type()` may be a host tensor's type). Code behind an `if` in a loop or a per-step
    function is not reported, unless the `if` only asks whether the accelerator is used
    (`if torch.cuda.is_available():`, `if self.cuda:`, `if use_gpu:`) or chooses among the run's
    configured alternatives (`if args.loss == "hinge":`, its `elif` and `else`: the configuration
    does not change between steps; or picks the function's mode by a parameter whose default is a
    string, `elif distance == "l_2":` in `def trades_loss(..., distance="l_inf")`: the caller passes
    its run's configuration; or tests a flag the same script declares on by default,
    `parser.add_argument("--random", default=True)` then `if args.random:`: `cli_defaults`; a flag that opts in to extra work, `if args.log_images:`, does not
    count, but a flag whose branch only rebinds the value the statement before it bound does:
    `ff = torch.zeros(n, d).cuda()` then `if opt.PCB: ff = torch.zeros(n, d, 6).cuda()` picks the
    run's buffer), or the branch is taken at random (`r = np.random.rand(1)` then `if r < args.cutmix_prob:`,
    a stochastic augmentation's share of every step: `random_branches`), or the branch (with no `else`) trains itself, calling backward or an optimizer's step in
    its own body (`if step % n_critic == 0:` around a generator's update: each time it runs is a
    training step; a periodic branch that only logs or samples is not), or every branch of its chain, which ends in an
    `else`, opens with the same statements up to and including it (`if step % 4 == 0:` trains and its `else` only
    evaluates, both first building `mask = torch.zeros(n).cuda()` or calling the helper that does: whichever runs, it
    runs; an equal copy after different work is not the same work: `shared_branches`);
    in `forward` it is (it runs on every call that takes the branch).

    Nor are these reported: code in a plotting function (its role in the semantic model: it draws a
    figure, run to show results rather than on every step); in a loop, or in a function a loop
    calls, `.to(x.device)` in a file that names no accelerator anywhere, when no file of the project
    that names one imports it (a CPU-only script: following another tensor's device moves
    nothing); in a loop, `.to(y.device)` where `y`
    is a batch the loader yielded on the host that the loop has not moved yet (the tensor stays
    where it is); a factory given `**kwargs` (they may hold `device=`); a factory whose arguments read
    what a tuple lacks on a name holding one (`h = self.encode(x)` then `torch.randn(h.size())`, where
    the class's own `encode` ends every `return` with a tuple display, `return h, noise`, and no class
    of the file overrides it: the read raises, the factory never runs; `tuple_returns`).

    ## Why is this bad?
    The tensor is first allocated and filled in host memory, then a second allocation is made on the
    device and the data is copied over (a synchronising transfer for pageable memory), on every call.
    Creating it on the device skips the host buffer and the copy.

    ## Example
    ```python
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1]).to(x.device)
        return x * mask
    ```

    ## Use instead
    ```python
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1], device=x.device)
        return x * mask
    ```

    ## Fix safety
    Safe for factories whose values the device computes exactly as the CPU does (`zeros`, `ones`,
    `empty`, `full`, `eye`, `arange` with a step of 1 or integer literals) whose other keywords are
    only `dtype`; `non_blocking=` of the move is dropped (there is no transfer left); a cast or a
    `Variable(...)` between factory and move stays. `.to(d)` becomes `device=d`, which means the same
    for every device `d`, None included. Unsafe for random factories (`rand`, `randn`, `randint`,
    `randperm`): the device's generator produces different numbers than the CPU's for the same seed;
    for `linspace`, `logspace`, the windows (cosines) and `arange` with another step (floating-point arithmetic that a GPU
    kernel may round differently in the last bit); and for `.cuda(d)` unless `d` is an index or a
    `"cuda..."` literal: `.cuda(None)` is the current GPU, `device=None` the CPU. No fix when the factory has other keywords
    (`requires_grad=True` would change which tensor is the leaf, `generator=` is a CPU generator),
    when `Variable(...)` has other arguments, or the move has other arguments (a dtype).

    ## Measured effect
    Not measured by memlint's fixtures yet: one host buffer of the tensor's size and one
    host-to-device copy per call.
    """

    meta = META
    severity = Severity.INFO
    fix_safety = "mixed"

    VALID = [
        Valid(  # the comprehension's own `make` (one of the caller's makers) hides the global `make` a setup function binds to `torch.rand`
            """
import torch
def configure():
    global make
    make = torch.rand
def train(model, loader, optimizer, makers):
    for batch in loader:
        extras = [make(8).cuda() for make in makers]
        loss = model(batch, extras).mean()
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # the helper runs in one branch of a counter's `if`/`else` only: not on every step
            """
import torch
def make_mask(inputs):
    return torch.zeros(len(inputs)).cuda()
def train(model, train_loader, optimizer):
    for step, (inputs, labels) in enumerate(train_loader):
        if step % 4 == 0:
            mask = make_mask(inputs)
            loss = (model(inputs).sum(1) * mask).sum()
            loss.backward()
            optimizer.step()
        else:
            with torch.no_grad():
                mask = make_mask(labels)
"""
        ),
        Valid(  # both branches copy the buffer, but one writes host data into it first: not the same work, so the copy stays behind a once-in-a-while branch
            """
import torch
def train(model, train_loader, optimizer, b, c):
    for step, (inputs, labels) in enumerate(train_loader):
        if step % 100 == 0:
            onehot = torch.zeros(b, c)
            onehot = onehot.cuda()
            print(model(inputs, onehot))
        else:
            onehot = torch.zeros(b, c)
            onehot.scatter_(1, labels.view(-1, 1), 1)
            onehot = onehot.cuda()
            loss = model(inputs, onehot).sum()
            loss.backward()
            optimizer.step()
"""
        ),
        Valid(  # the accelerator's branch binds the name to another buffer before it moves it: that one moves
            """
import torch
from torch.autograd import Function
class Pool(Function):
    def forward(self, x):
        out = torch.zeros(x.size(0), 4)
        if x.is_cuda:
            out = pinned_buffer(x.size(0))
            out = out.cuda(non_blocking=True)
            gpu_kernel(x, out)
        else:
            cpu_kernel(x, out)
        return out
"""
        ),
        Valid(  # the method so named in an unrelated class: the call on a receiver of unknown class may run either
            """
import torch
class BaseSet:
    def multi_scale(self, model, image):
        pred = torch.zeros(1, 3).cuda()
        return pred + model(image)
class Plotter:
    def multi_scale(self, model, image):
        print(image)
def test(dataset, model, loader):
    for image in loader:
        dataset.multi_scale(model, image)
"""
        ),
        Valid(  # read on the host by other code too before the joint move: the host tensor is used
            """
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def forward(self, x):
        mask = torch.ones(x.size(1))
        other = mask * 2
        print(mask)
        if x.is_cuda:
            mask, other = mask.cuda(), other.cuda()
        return mask + other * x
"""
        ),
        Valid(  # rebound to a wrapper that reads another tensor too: not the same host tensor alone
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        z = torch.zeros(x.size(0), 4)
        z = torch.cat([z, x.cpu()], 1)
        if x.is_cuda:
            z = z.cuda()
        return z
"""
        ),
        Valid(  # an offset that may be a tensor (an attribute nobody says is a number): its device decides
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        N = x.shape[1:]
        return (torch.arange(4) + self.offset).cuda() + x.sum()
"""
        ),
        Valid(  # the helper makes its tensor on the device it is given: nothing to copy
            """
import torch
def causal_mask(size, device):
    return torch.triu(torch.ones((1, size, size), device=device), diagonal=1) == 0
for x in loader:
    mask = causal_mask(x.size(1), x.device).to(device)
    loss = model(x, mask)
    loss.backward()
"""
        ),
        Valid(  # the helper may return a tensor already on the device (one branch moves it): cannot tell, silent
            """
import torch
def causal_mask(size, device=None):
    mask = torch.triu(torch.ones((1, size, size)), diagonal=1)
    if device is not None:
        mask = mask.to(device)
    return mask
def cached_mask(size, cache):
    if size in cache:
        return cache[size]
    return torch.ones(size, size).tril()
for x in loader:
    mask = causal_mask(x.size(1)).to(device)
    other = cached_mask(x.size(1), {}).to(device)
    loss = model(x, mask, other)
    loss.backward()
"""
        ),
        Valid(  # a plain function whose parameter is called `torch`: whatever the caller passes
            """
def forward(torch, x):
    return x * torch.ones(x.shape[0], x.shape[1]).to(x.device)
""",
        ),
        Valid(  # one argument that may be data (a list of rewards): `torch.tensor(data)`'s case
            """
import torch
for x, y in train_loader:
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
    rewards = torch.FloatTensor(episode_rewards).cuda()
"""
        ),
        Valid(  # `y` comes from the loader and is only cast: `.to(y.device)` keeps the zeros on the host
            """
import torch
def predict(model, pred_loader, device, horizon):
    model.eval()
    preds = []
    with torch.no_grad():
        for x, y in pred_loader:
            x = x.float().to(device)
            y = y.float()
            dec = torch.zeros([y.shape[0], horizon, y.shape[2]]).float().to(y.device)
            dec = torch.cat([y, dec], dim=1).to(device)
            preds.append(model(x, dec).cpu())
    return preds
"""
        ),
        Valid(  # arithmetic with another tensor: that tensor's device decides, not a host factory alone
            """
import torch
for x in loader:
    noise = (torch.randn(8) * scale).to(device)
"""
        ),
        Valid(
            """
import torch
def forward(self, x):
    return x + torch.zeros(x.shape, device=x.device)
"""
        ),
        Valid(  # a periodic branch that does not train (sampling for a log every 100 steps): not every step
            """
import torch
for step, (images, _) in enumerate(loader):
    loss = D(images.to(device)).mean()
    loss.backward()
    optimizer.step()
    if step % 100 == 0:
        z = torch.randn(16, 100).to(device)
        save_image(G(z), "sample.png")
"""
        ),
        Valid(  # a helper that does not train, called every 100th step (sampling for a log): not every step
            """
import torch
def sample_images():
    z = torch.randn(16, 100).to(device)
    save_image(G(z), "sample.png")
for it, x in enumerate(loader):
    d_loss = D(x.to(device)).mean()
    d_loss.backward()
    if it % 100 == 0:
        sample_images()
"""
        ),
        Valid(  # a flag that opts in to extra work (not a rebinding of the value before it): not every run's step
            """
import torch
for img, label in dataloaders:
    ff = model(img.cuda())
    if opt.visualize:
        grid = torch.zeros(8, 3, 64, 64).cuda()
        show(grid, ff)
"""
        ),
        Valid(  # `.to(x)` where nothing says `x` is a tensor: it may be a dtype, a cast where the tensor is
            """
import torch
def forward(self, x, dtype):
    return x * torch.ones(4).to(dtype)
for x in loader:
    loss = model(x, torch.zeros(3).to(half))
    loss.backward()
"""
        ),
        Valid(  # once, at setup
            """
import torch
buffer = torch.zeros(1024).cuda()
for x in loader:
    out = model(x + buffer)
"""
        ),
        Valid(  # values scattered from host labels between the factory and the move: built on the device, the
            # one-hot needs the labels copied instead, one copy either way (measured slower on an H200, 2026-11-26)
            """
import torch
for x, y in loader:
    onehot = torch.zeros(x.shape[0], 10).scatter_(1, y.unsqueeze(1), 1).cuda()
    out = model(x.cuda(), onehot)
"""
        ),
        Valid(  # the same one-hot target, from a legacy constructor, filled by later statements (loss-landscape's MSE loop)
            """
import torch
for inputs, targets in trainloader:
    batch_size = inputs.size(0)
    one_hot_targets = torch.FloatTensor(batch_size, 10).zero_()
    one_hot_targets = one_hot_targets.scatter_(1, targets.view(batch_size, 1), 1.0)
    if use_cuda:
        inputs, one_hot_targets = inputs.cuda(), one_hot_targets.cuda()
    loss = criterion(net(inputs), one_hot_targets)
    loss.backward()
"""
        ),
        Valid(  # `model.loss(...)` in the loop, but the class defining `loss` is no nn.Module: not the model's
            """
import torch
class Metrics:
    def loss(self, pred, label):
        sizes = torch.zeros(self.n_classes).long().to(self.device)
        return (pred * sizes).sum()
def train_epoch(model, data_loader, optimizer):
    for x, labels in data_loader:
        loss = model.loss(model(x), labels)
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # bound to a name that the host code reads before the move: the host tensor is used
            """
import torch
for x, y in data_loader:
    z = torch.zeros(64, 100)
    z.normal_()
    z = z.cuda()
    loss = D(G(z)).mean()
    loss.backward()
"""
        ),
        Valid(  # a dtype, not a device
            """
import torch
for x in loader:
    ids = torch.arange(8).to(torch.long)
"""
        ),
        Valid(  # only on the first iteration
            """
import torch
state = None
for x in loader:
    if state is None:
        state = torch.zeros(8).cuda()
"""
        ),
        Valid(  # a project's own zeros
            """
import torch
from mylib import zeros
for x in loader:
    buf = zeros(8).cuda()
"""
        ),
        Valid(  # a one-off loop over branches (reparameterisation), not a training loop
            """
import torch
def fuse(kernel, n):
    return kernel, torch.zeros(n).to(kernel.device)
for conv, bn in zip(convs, bns):
    k, b = fuse(conv.weight, bn.num_features)
"""
        ),
        Valid(  # from_numpy must start on the host
            """
import torch
for arr in arrays:
    t = torch.from_numpy(arr).cuda()
"""
        ),
        Valid(  # a data constructor: with device= it is still built on the host and copied
            """
import torch
for batch in loader:
    labels = torch.tensor(batch["labels"], dtype=torch.long).cuda()
    reward = torch.tensor(batch["reward"]).to(device)
    out = model(batch["x"])
"""
        ),
        Valid(  # nothing to copy: an empty tensor
            """
import torch
import torch.nn as nn
class Head(nn.Module):
    def forward(self, x):
        boxes = torch.empty(0).to(x.device)
        return x, boxes
"""
        ),
        Valid(  # metric buffers set up once per validation pass, before its batch loop (SimpleAICV)
            """
import torch
def validate(test_loader, model, num_classes):
    total = torch.zeros((num_classes,), dtype=torch.float64).cuda()
    for images, masks in test_loader:
        total += model(images.cuda()).sum(0)
    return total
def validate_all(val_loader_list, model, num_classes):
    for name, per_loader in zip(names, val_loader_list):
        validate(per_loader, model, num_classes)
"""
        ),
        Valid(  # once per epoch: the loop hands the loaders to per-pass helpers
            """
import torch
for epoch in range(epochs):
    train_loss = train_step(model=model, dataloader=train_dataloader, optimizer=optimizer)
    test_loss = test_step(model=model, dataloader=test_dataloader)
    writer.add_graph(model=model, input_to_model=torch.randn(32, 3, 224, 224).to(device))
"""
        ),
        Valid(  # a fixed small count: ten sample images after training, not a per-step cost
            """
import torch
for epoch in range(epochs):
    for x, y in train_loader:
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
for i in range(10):
    z = torch.randn(1, 100).cuda()
    sample = generator(z)
"""
        ),
        Valid(  # a plotting function (it calls matplotlib): run to draw a figure, not per step
            """
import torch
import matplotlib.pyplot as plt
def show_samples(generator, n):
    for i, ax in enumerate(axes):
        z = torch.randn(n, 100).to(device)
        ax.imshow(generator(z)[0].cpu().numpy())
    plt.show()
"""
        ),
        Valid(  # a CPU-only script: nothing names an accelerator, `.to(x.device)` moves nothing
            """
import torch
for x, y in train_loader:
    noise = torch.randn(x.shape).to(x.device)
    loss = criterion(model(x + noise), y)
    loss.backward()
"""
        ),
        Valid(  # a CPU-only script's helper that only its own loop calls: `.to(x.device)` moves nothing
            """
import torch
def add_noise(x):
    return x + torch.randn(x.shape).to(x.device)
for x, y in train_loader:
    loss = criterion(model(add_noise(x)), y)
    loss.backward()
"""
        ),
        Valid(  # the helper moves its argument only behind a flag of its own: it may copy nothing
            """
import torch
def maybe_copy(obj, gpu, enabled):
    if enabled:
        return obj.cuda(gpu)
    return obj
for batch in val_loader:
    scores = maybe_copy(torch.zeros(1, 150, batch["h"], batch["w"]), 0, False)
    scores = scores + model(batch)
"""
        ),
        Valid(  # a legacy constructor given a spread: the spread may be data, not sizes
            """
import torch
for x, y in train_loader:
    weights = torch.FloatTensor(*class_weights).cuda()
    loss = criterion(model(x.cuda()), y.cuda(), weights)
    loss.backward()
"""
        ),
        Valid(  # constructed in every `forward`, but its `__init__` runs the helper behind a run-once guard
            """
import torch
import torch.nn as nn
_KERNEL = None
def load_kernel():
    global _KERNEL
    device = torch.device("cuda")
    _KERNEL = torch.rand(1, 1).to(device)
class Compute:
    def __init__(self):
        if _KERNEL is None:
            load_kernel()
class Cell(nn.Module):
    def forward(self, x):
        Compute()
        return x
"""
        ),
        Valid(  # a class constructed once, when the model is built, not in `forward`
            """
import torch
import torch.nn as nn
class CausalMask:
    def __init__(self, n, device="cpu"):
        self.mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1).to(device)
class Attention(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.causal = CausalMask(n, device="cuda")
    def forward(self, scores):
        return scores.masked_fill(self.causal.mask, 0.0)
"""
        ),
        Valid(  # an attribute named like no device id: `is not None` asks something else, not which accelerator the run has
            """
import torch
import torch.nn as nn
class Margin(nn.Module):
    def __init__(self, weight_id=None):
        super().__init__()
        self.weight_id = weight_id
    def forward(self, cosine):
        one_hot = torch.zeros(cosine.size())
        if self.weight_id is not None:
            one_hot = one_hot.cuda()
        return one_hot * cosine
"""
        ),
        Valid(  # a loop that sets the run's configuration per item (`for opt.weights in ...`): each call of `run` is a whole run, not a step
            """
import torch
def run(weights, device, load):
    model = load(weights)
    image = torch.zeros(1, 3, 64, 64).to(device)
    return model(image)
def main(opt):
    for opt.weights in opt.weights:
        run(opt.weights, opt.device, opt.load)
"""
        ),
        Valid(  # in-place arithmetic with what may be a tensor (a parameter nothing sizes): its placement is unknown
            """
import torch
def test(model, images, device, sigma_map):
    for image in images:
        noise = torch.ones(1, 1, image.size(2), image.size(3)).mul_(sigma_map)
        image = torch.cat((image, noise), dim=1)
        image = image.to(device)
        output = model(image)
"""
        ),
        Valid(  # the part joined into `batch` is read again on the host after the join: the move does not take its only use
            """
import torch
def test(model, images, device, record):
    for image in images:
        noise = torch.ones(1, 1, image.size(2), image.size(3))
        batch = torch.cat((image, noise), dim=1)
        batch = batch.to(device)
        record(noise.mean())
        output = model(batch)
"""
        ),
        Valid(  # a nested function called behind a counter's `if` in the loader loop: not on every step
            """
import torch
def mixed(loader, alpha, step):
    def mix(x):
        perm = torch.randperm(x.size(0)).cuda()
        return alpha * x + (1 - alpha) * x[perm]
    for i, (x, y) in enumerate(loader):
        if i % 100 == 0:
            x = mix(x.cuda())
        yield x, y
"""
        ),
        Valid(  # a nested function is reachable only inside its own function: `shuffle` in `fit`'s loop is fit's parameter
            """
import torch
def warm_up(batch):
    def shuffle(t):
        order = torch.randperm(t.size(0)).cuda()
        return t[order]
    return shuffle(batch)
def fit(net, loader, optimizer, shuffle):
    for batch, target in loader:
        batch = shuffle(batch.cuda())
        net(batch).mean().backward()
        optimizer.step()
"""
        ),
        Valid(  # the same name bound to a lambda in another function: not the nested one
            """
import torch
def probe(net, batch):
    def shuffle(t):
        order = torch.randperm(t.size(0)).cuda()
        return t[order]
    return net(shuffle(batch))
def fit(net, loader, optimizer):
    shuffle = lambda t: t.flip(0)
    for batch, target in loader:
        batch = shuffle(batch.cuda())
        net(batch).mean().backward()
        optimizer.step()
"""
        ),
        Valid(  # called in the loop's `else:`, which runs once after the last step
            """
import torch
def fit(net, loader, optimizer):
    def shuffle(t):
        order = torch.randperm(t.size(0)).cuda()
        return t[order]
    for batch, target in loader:
        batch = batch.cuda()
        net(batch).mean().backward()
        optimizer.step()
    else:
        shuffle(batch)
"""
        ),
        Valid(  # nested in one method; another method's loop calls its own parameter of that name
            """
import torch
class Runner:
    def fit(self, net, loader, optimizer):
        def shuffle(t):
            order = torch.randperm(t.size(0)).cuda()
            return t[order]
        self.shuffle = shuffle
        for batch, target in loader:
            net(batch.cuda()).mean().backward()
            optimizer.step()
    def replay(self, loader, shuffle):
        for batch, target in loader:
            shuffle(batch)
"""
        ),
        Valid(  # the loop's `shuffle` comes from the star import, not from `warm_up`'s nested function
            """
import torch
from helpers import *
def warm_up(batch):
    def shuffle(t):
        order = torch.randperm(t.size(0)).cuda()
        return t[order]
    return shuffle(batch)
def fit(net, loader, optimizer):
    for batch, target in loader:
        batch = shuffle(batch.cuda())
        net(batch).mean().backward()
        optimizer.step()
"""
        ),
        Valid(  # `sample.device_id` is a field of each record, not the run's device: the branch is the data's choice
            """
import torch
def fit(net, loader, optimizer):
    for sample in loader:
        x = sample.features.cuda()
        extra = torch.zeros(x.size(0), 8)
        if sample.device_id is not None:
            extra = extra.cuda()
            x = x + net.embed(extra)
        net(x).mean().backward()
        optimizer.step()
"""
        ),
    ]

    INVALID = [
        Invalid(  # called in every branch of an `if`/`else` in the loop: whichever branch a step takes, the helper runs
            """
import torch
def make_mask(inputs):
    return torch.zeros(len(inputs)).cuda()
def train(model, train_loader, optimizer):
    for step, (inputs, labels) in enumerate(train_loader):
        if step % 4 == 0:
            mask = make_mask(inputs)
            loss = (model(inputs).sum(1) * mask).sum()
            loss.backward()
            optimizer.step()
        else:
            with torch.no_grad():
                mask = make_mask(inputs)
""",
            line=3,
            column=12,
            message="make_mask",
            fixed="""
import torch
def make_mask(inputs):
    return torch.zeros(len(inputs), device="cuda")
def train(model, train_loader, optimizer):
    for step, (inputs, labels) in enumerate(train_loader):
        if step % 4 == 0:
            mask = make_mask(inputs)
            loss = (model(inputs).sum(1) * mask).sum()
            loss.backward()
            optimizer.step()
        else:
            with torch.no_grad():
                mask = make_mask(inputs)
""",
            harness=Harness(then="result = make_mask(torch.randn(4, 2))", fake_cuda=True),
        ),
        Invalid(  # in a method a loader loop calls on a receiver of unknown class: every method so named overrides one
            """
import torch
class BaseSet:
    def multi_scale(self, model, image):
        pred = torch.zeros(1, 3).cuda()
        return pred + model(image)
class FlipSet(BaseSet):
    def multi_scale(self, model, image):
        return model(image.flip(-1))
def test(dataset, model, loader):
    for image in loader:
        dataset.multi_scale(model, image)
""",
            line=4,
            column=16,
            message="every iteration of the loop `for image in loader`",
            fixed="""
import torch
class BaseSet:
    def multi_scale(self, model, image):
        pred = torch.zeros(1, 3, device="cuda")
        return pred + model(image)
class FlipSet(BaseSet):
    def multi_scale(self, model, image):
        return model(image.flip(-1))
def test(dataset, model, loader):
    for image in loader:
        dataset.multi_scale(model, image)
""",
            harness=Harness(
                then="result = BaseSet().multi_scale(lambda x: x * 2, torch.randn(1, 3, device='cuda'))",
                fake_cuda=True,
            ),
        ),
        Invalid(  # the constructor's flag kept in an attribute, turned on by every construction: its branch runs on every call
            """
import torch
import torch.nn as nn
class Mixer(nn.Module):
    def __init__(self, n, factorize=False):
        super().__init__()
        self.n = n
        self.factorize = factorize
    def forward(self, x):
        if self.factorize:
            x = x + torch.eye(self.n).to(x.device)
        return x
mixer = Mixer(4, True)
""",
            line=10,
            column=21,
            message="inside `forward`",
            fixed="""
import torch
import torch.nn as nn
class Mixer(nn.Module):
    def __init__(self, n, factorize=False):
        super().__init__()
        self.n = n
        self.factorize = factorize
    def forward(self, x):
        if self.factorize:
            x = x + torch.eye(self.n, device=x.device)
        return x
mixer = Mixer(4, True)
""",
            harness=Harness(then="result = mixer(torch.randn(4, 4))"),
        ),
        Invalid(  # the flag's attribute is set again outside the constructor (`mixer.factorize = True`): no opt-in the class alone decides
            """
import torch
import torch.nn as nn
class Mixer(nn.Module):
    def __init__(self, n, factorize=False):
        super().__init__()
        self.n = n
        self.factorize = factorize
    def forward(self, x):
        if self.factorize:
            x = x + torch.eye(self.n).to(x.device)
        return x
mixer = Mixer(4)
mixer.factorize = True
""",
            line=10,
            column=21,
            message="inside `forward`",
            fixed="""
import torch
import torch.nn as nn
class Mixer(nn.Module):
    def __init__(self, n, factorize=False):
        super().__init__()
        self.n = n
        self.factorize = factorize
    def forward(self, x):
        if self.factorize:
            x = x + torch.eye(self.n, device=x.device)
        return x
mixer = Mixer(4)
mixer.factorize = True
""",
            harness=Harness(then="result = mixer(torch.randn(4, 4))"),
        ),
        Invalid(  # the `else` of an opt-in attribute's test: what an ordinary instance runs
            """
import torch
import torch.nn as nn
class Mixer(nn.Module):
    def __init__(self, n, factorize=False):
        super().__init__()
        self.n = n
        self.factorize = factorize
    def forward(self, x):
        if self.factorize:
            return x
        else:
            return x + torch.eye(self.n).to(x.device)
""",
            line=12,
            column=24,
            message="inside `forward`",
            fixed="""
import torch
import torch.nn as nn
class Mixer(nn.Module):
    def __init__(self, n, factorize=False):
        super().__init__()
        self.n = n
        self.factorize = factorize
    def forward(self, x):
        if self.factorize:
            return x
        else:
            return x + torch.eye(self.n, device=x.device)
""",
            harness=Harness(then="result = Mixer(4)(torch.randn(4, 4))"),
        ),
        Invalid(  # a helper the test loop calls behind a choice among the run's configured attacks: every iteration of a run that picks it
            """
import torch
def margin(logits, y):
    floor = torch.zeros(y.shape[0]).cuda()
    return torch.max(floor, logits.max(1)[0])
for x, y in test_loader:
    x, y = x.cuda(), y.cuda()
    if args.attack == "pgd":
        score = margin(model(x), y)
    elif args.attack == "none":
        score = model(x).sum()
""",
            line=3,
            column=13,
            message="every iteration of the loop `for x, y in test_loader`",
            fixed="""
import torch
def margin(logits, y):
    floor = torch.zeros(y.shape[0], device="cuda")
    return torch.max(floor, logits.max(1)[0])
for x, y in test_loader:
    x, y = x.cuda(), y.cuda()
    if args.attack == "pgd":
        score = margin(model(x), y)
    elif args.attack == "none":
        score = model(x).sum()
""",
            harness=Harness(
                setup=_LABELLED_TEST_BATCH,
                then="result = score",
                fake_cuda=True,
            ),
        ),
        Invalid(  # restarts around the attack's steps, each loop binding `_` again (no read of a counter): no pass of its own
            """
import torch
def attack(model, x, y, restarts, steps):
    best = torch.zeros(y.shape[0]).cuda()
    for _ in range(restarts):
        delta = torch.zeros_like(x)
        for _ in range(steps):
            delta = delta + 0.1 * model(x + delta).sign()
        best = torch.max(best, model(x + delta).sum(1))
    return best
for x, y in test_loader:
    worst = attack(model, x.cuda(), y.cuda(), 3, 10)
""",
            line=3,
            column=12,
            message="every iteration of the loop `for x, y in test_loader`",
            fixed="""
import torch
def attack(model, x, y, restarts, steps):
    best = torch.zeros(y.shape[0], device="cuda")
    for _ in range(restarts):
        delta = torch.zeros_like(x)
        for _ in range(steps):
            delta = delta + 0.1 * model(x + delta).sign()
        best = torch.max(best, model(x + delta).sum(1))
    return best
for x, y in test_loader:
    worst = attack(model, x.cuda(), y.cuda(), 3, 10)
""",
            harness=Harness(
                setup=_LABELLED_TEST_BATCH,
                then="result = worst",
                fake_cuda=True,
            ),
        ),
        Invalid(  # the class is built only through a name handed on (`norm = Mixer`): no construction says the flag is off
            """
import torch
import torch.nn as nn
class Mixer(nn.Module):
    def __init__(self, n, factorize=False):
        super().__init__()
        self.n = n
        self.factorize = factorize
    def forward(self, x):
        if self.factorize:
            x = x + torch.eye(self.n).to(x.device)
        return x
norm = Mixer
layer = norm(4)
""",
            line=10,
            column=21,
            message="inside `forward`",
            fixed="""
import torch
import torch.nn as nn
class Mixer(nn.Module):
    def __init__(self, n, factorize=False):
        super().__init__()
        self.n = n
        self.factorize = factorize
    def forward(self, x):
        if self.factorize:
            x = x + torch.eye(self.n, device=x.device)
        return x
norm = Mixer
layer = norm(4)
""",
            harness=Harness(then="result = Mixer(4, True)(torch.randn(4, 4))"),
        ),
        Invalid(  # read on the host only to compute a second tensor moved with it (NRI's `set_diag_to_one`)
            """
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def forward(self, x):
        mask = torch.diag(torch.ones(x.size(1))).unsqueeze(0).expand_as(x)
        inverse_mask = self.weight.cpu() - mask
        if x.is_cuda:
            mask, inverse_mask = mask.cuda(), inverse_mask.cuda()
        return mask + inverse_mask * x
""",
            line=5,
            column=16,
            message="moved by a later `mask.cuda()`",
        ),
        Invalid(  # a rank's label offset added on the host (moco-v3's contrastive loss): `N` a size, `get_rank()` a number
            """
import torch
import torch.nn as nn
class MoCo(nn.Module):
    def contrastive_loss(self, q, k):
        logits = q @ k.t()
        N = logits.shape[0]
        labels = (torch.arange(N, dtype=torch.long) + N * torch.distributed.get_rank()).cuda()
        return nn.functional.cross_entropy(logits, labels)
    def forward(self, q, k):
        return self.contrastive_loss(q, k)
""",
            line=7,
            column=18,
            message="which `forward` calls",
            fixed="""
import torch
import torch.nn as nn
class MoCo(nn.Module):
    def contrastive_loss(self, q, k):
        logits = q @ k.t()
        N = logits.shape[0]
        labels = (torch.arange(N, dtype=torch.long, device="cuda") + N * torch.distributed.get_rank())
        return nn.functional.cross_entropy(logits, labels)
    def forward(self, q, k):
        return self.contrastive_loss(q, k)
""",
            harness=Harness(
                setup="import torch\ntorch.distributed.get_rank = lambda: 0\n",
                then="result = MoCo()(torch.randn(4, 3, device='cuda'), torch.randn(4, 3, device='cuda'))",
                fake_cuda=True,
            ),
        ),
        Invalid(  # a diagonal of a host factory (NRI's `set_diag_to_one`): still on the host
            """
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def forward(self, x):
        mask = torch.diag(torch.ones(x.size(1))).unsqueeze(0).expand_as(x).cuda()
        return mask + x
""",
            line=5,
            column=16,
            message="inside `forward`",
            fixed="""
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def forward(self, x):
        mask = torch.diag(torch.ones(x.size(1), device="cuda")).unsqueeze(0).expand_as(x)
        return mask + x
""",
            harness=Harness(
                then="result = Decoder()(torch.randn(2, 3, 3, device='cuda'))",
                fake_cuda=True,
            ),
        ),
        Invalid(  # rebound through `Variable(...)` before its later move (protonets' `target_inds`): the same host tensor
            """
import torch
import torch.nn as nn
from torch.autograd import Variable
class Protonet(nn.Module):
    def forward(self, xq, n_class, n_query):
        target_inds = torch.arange(0, n_class).view(n_class, 1, 1).expand(n_class, n_query, 1).long()
        target_inds = Variable(target_inds, requires_grad=False)
        if xq.is_cuda:
            target_inds = target_inds.cuda()
        return xq.gather(2, target_inds)
""",
            line=6,
            column=23,
            message="moved by a later `target_inds.cuda()`",
        ),
        Invalid(  # a helper that moves its argument behind a CUDA check and returns it wrapped (Self-Attention-GAN's tensor2var)
            """
import torch
from torch.autograd import Variable

def tensor2var(x, grad=False):
    if torch.cuda.is_available():
        x = x.cuda()
    return Variable(x, requires_grad=grad)

def train(G, loader, optimizer, z_dim):
    for real in loader:
        z = tensor2var(torch.randn(real.size(0), z_dim))
        loss = G(z).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            line=11,
            column=13,
            message="tensor2var(torch.randn(",
        ),
        Invalid(  # a marimo notebook: the cell gets `torch` from the cell that imports it
            """
import marimo

app = marimo.App()


@app.cell
def _():
    import torch
    import torch.nn as nn
    return nn, torch


@app.cell
def _(nn, torch):
    class Net(nn.Module):
        def forward(self, x):
            mask = torch.ones(x.shape[0], x.shape[1]).to(x.device)
            return x * mask

    return (Net,)
""",
            line=17,
            column=20,
            message="host",
            fixed="""
import marimo

app = marimo.App()


@app.cell
def _():
    import torch
    import torch.nn as nn
    return nn, torch


@app.cell
def _(nn, torch):
    class Net(nn.Module):
        def forward(self, x):
            mask = torch.ones(x.shape[0], x.shape[1], device=x.device)
            return x * mask

    return (Net,)
""",
            harness=Harness(
                setup=MARIMO_STAND_IN,
                then="(nn, torch) = app.cells[0]()\n(Net,) = app.cells[1](nn, torch)\nresult = Net()(torch.randn(2, 3, device=\"cuda\"))",
                fake_cuda=True,
            ),
        ),
        Invalid(  # a module-level helper of the file that a loss module's `forward` calls
            """
import torch
def one_hot(labels, classes):
    return torch.zeros(labels.size(0), classes, labels.size(2), labels.size(3)).to(labels.device)
class DiceLoss(torch.nn.Module):
    def forward(self, output, target):
        target = one_hot(target, output.size(1)).scatter_(1, target, 1)
        return 1 - (output.softmax(1) * target).sum() / target.sum()
""",
            line=3,
            column=12,
            message="which `forward` calls",
            fixed="""
import torch
def one_hot(labels, classes):
    return torch.zeros(labels.size(0), classes, labels.size(2), labels.size(3), device=labels.device)
class DiceLoss(torch.nn.Module):
    def forward(self, output, target):
        target = one_hot(target, output.size(1)).scatter_(1, target, 1)
        return 1 - (output.softmax(1) * target).sum() / target.sum()
""",
            harness=Harness(
                then=(
                    "torch.manual_seed(0)\n"
                    "labels = torch.randint(0, 3, (2, 1, 4, 4), device='cuda')\n"
                    "result = DiceLoss()(torch.randn(2, 3, 4, 4, device='cuda'), labels)"
                ),
                fake_cuda=True,
            ),
        ),
        Invalid(  # moved by a later one-line `if` that only asks for the accelerator (ENet's padding)
            """
import torch
import torch.nn as nn
class Bottleneck(nn.Module):
    def forward(self, identity):
        extras = torch.zeros((identity.size(0), self.pad, identity.size(2), identity.size(3)))
        if torch.cuda.is_available(): extras = extras.cuda(0)
        return torch.cat((identity, extras), dim=1)
""",
            line=5,
            column=18,
            message="moved by a later `extras.cuda(0)`",
        ),
        Invalid(  # a legacy typed constructor called with sizes, filled, moved every step (no fix)
            """
import torch
def dice_loss(output, target, device):
    one_hot = torch.FloatTensor(target.size(0), 4, target.size(2), target.size(3)).zero_().to(device)
    return (output * one_hot.scatter_(1, target, 1)).mean()
for x, y in train_loader:
    loss = dice_loss(model(x.cuda()), y.cuda(), "cuda")
    loss.backward()
    optimizer.step()
""",
            line=3,
            column=15,
            message="torch.empty(..., dtype=torch.float32",
        ),
        Invalid(  # a branch that trains (the generator's step every n_critic steps): each time it runs, a step
            """
import torch
for step, (images, _) in enumerate(loader):
    d_loss = D(images.to(device)).mean()
    d_loss.backward()
    d_optim.step()
    if step % n_critic == 0:
        z = torch.randn(64, 100).to(device)
        g_loss = D(G(z)).mean()
        g_loss.backward()
        g_optim.step()
""",
            line=7,
            column=13,
            message="every training step its branch takes",
            unsafe=True,
            fixed="""
import torch
for step, (images, _) in enumerate(loader):
    d_loss = D(images.to(device)).mean()
    d_loss.backward()
    d_optim.step()
    if step % n_critic == 0:
        z = torch.randn(64, 100, device=device)
        g_loss = D(G(z)).mean()
        g_loss.backward()
        g_optim.step()
""",
        ),
        Invalid(  # a function that trains itself, called every n_d-th step: each call is a generator step
            """
import torch
def train_G():
    z = torch.randn(64, 100).to(device)
    g_loss = D(G(z)).mean()
    g_loss.backward()
    g_optim.step()
for it, x in enumerate(loader):
    d_loss = D(x.to(device)).mean()
    d_loss.backward()
    if it % n_d == 0:
        train_G()
""",
            line=3,
            column=9,
            message="every training step it takes",
            unsafe=True,
            fixed="""
import torch
def train_G():
    z = torch.randn(64, 100, device=device)
    g_loss = D(G(z)).mean()
    g_loss.backward()
    g_optim.step()
for it, x in enumerate(loader):
    d_loss = D(x.to(device)).mean()
    d_loss.backward()
    if it % n_d == 0:
        train_G()
""",
        ),
        Invalid(  # a configuration flag that picks another buffer for the run (Person_reID's PCB features)
            """
import torch
for img, label in dataloaders:
    n = img.size(0)
    ff = torch.zeros(n, 512, device="cuda")
    if opt.PCB:
        ff = torch.FloatTensor(n, 2048, 6).zero_().cuda()
    ff += model(img.cuda())
""",
            line=6,
            column=14,
            message="on every loop iteration",
        ),
        Invalid(  # `.to(x)` with a tensor `x` (its shape is read): x's device and dtype; no fix, `device=` alone keeps the dtype
            """
import torch
import torch.nn as nn
class Discriminator(nn.Module):
    def forward(self, x):
        b, *_ = x.shape
        quantize_loss = torch.zeros(1).to(x)
        return self.head(x.view(b, -1)), quantize_loss
""",
            line=6,
            column=25,
            message="inside `forward`",
        ),
        Invalid(  # a signal window for the STFT of every batch (a size factory: `device=` makes it there; unsafe, cosines)
            """
import torch
for wav, mel in train_loader:
    window = torch.hann_window(1024).to(device)
    spec = torch.stft(wav.to(device), 1024, window=window, return_complex=True).abs()
    loss = criterion(model(spec), mel.to(device))
    loss.backward()
""",
            line=3,
            column=14,
            unsafe=True,
            fixed="""
import torch
for wav, mel in train_loader:
    window = torch.hann_window(1024, device=device)
    spec = torch.stft(wav.to(device), 1024, window=window, return_complex=True).abs()
    loss = criterion(model(spec), mel.to(device))
    loss.backward()
""",
        ),
        Invalid(  # a beam step: the model runs once per candidate, the `while` once per token (noise per candidate)
            """
import torch
def beam_search(model, source, beam_size, device):
    candidates = [(source[:, :1], 0.0)]
    while True:
        new_candidates = []
        for candidate, score in candidates:
            noise = torch.randn(1, candidate.size(1)).to(device)
            out = model.decode(source, candidate, noise)
            new_candidates.append((out, score))
        candidates = new_candidates[:beam_size]
""",
            line=7,
            column=21,
            message="on every loop iteration",
            unsafe=True,
            fixed="""
import torch
def beam_search(model, source, beam_size, device):
    candidates = [(source[:, :1], 0.0)]
    while True:
        new_candidates = []
        for candidate, score in candidates:
            noise = torch.randn(1, candidate.size(1), device=device)
            out = model.decode(source, candidate, noise)
            new_candidates.append((out, score))
        candidates = new_candidates[:beam_size]
""",
        ),
        Invalid(  # a cast to an accelerator's legacy tensor type copies to the GPU (no fix: the type's dtype)
            """
import torch
for x, y in train_loader:
    mask = torch.ones(x.size(0), 1).type(torch.cuda.FloatTensor)
    loss = criterion(model(x.cuda()) * mask, y.cuda())
    loss.backward()
""",
            line=3,
            column=12,
        ),
        Invalid(  # a local picks the accelerator's tensor type when the input is on it: the cast copies the grid there
            """
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def forward(self, x):
        Floats = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor
        grid = torch.linspace(0, 1, x.size(-1)).repeat(x.size(0), 1).type(Floats)
        return x + grid
""",
            line=6,
            column=16,
        ),
        Invalid(  # a module-level type chosen by the run's device, read in the training loop
            """
import torch
use_gpu = torch.cuda.is_available()
Floats = torch.cuda.FloatTensor if use_gpu else torch.FloatTensor
for x, y in train_loader:
    weight = torch.full((x.size(0), 1), 0.5).type(Floats)
    loss = criterion(model(x) * weight, y)
    loss.backward()
""",
            line=5,
            column=14,
        ),
        Invalid(  # arithmetic with a number between the factory and the move (issue 27): noise in [-1, 1)
            """
import torch
for images, _ in loader:
    z = (torch.rand(64, 100) * 2 - 1).to(device)
    loss = D(G(z)).mean()
    loss.backward()
""",
            line=3,
            column=9,
            unsafe=True,
            fixed="""
import torch
for images, _ in loader:
    z = (torch.rand(64, 100, device=device) * 2 - 1)
    loss = D(G(z)).mean()
    loss.backward()
""",
        ),
        Invalid(
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1]).to(x.device)
        return x * mask
""",
            line=5,
            column=16,
            message="host",
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1], device=x.device)
        return x * mask
""",
            harness=Harness(then="result = Net()(torch.randn(2, 3, device=\"cuda\"))", fake_cuda=True),
        ),
        Invalid(  # .cuda() in a loop
            """
import torch
for batch in loader:
    mask = torch.ones(batch["x"].shape[0], dtype=torch.long).cuda()
    out = model(batch["x"])
""",
            line=3,
            column=12,
            fixed="""
import torch
for batch in loader:
    mask = torch.ones(batch["x"].shape[0], dtype=torch.long, device="cuda")
    out = model(batch["x"])
""",
            harness=Harness(setup=_ONE_BATCH, then="result = (mask, out)", fake_cuda=True),
        ),
        Invalid(  # random values change with the generator: unsafe
            """
import torch
for step in range(steps):
    noise = torch.randn(16, 128).to(device, non_blocking=True)
    fake = generator(noise)
""",
            line=3,
            column=13,
            unsafe=True,
            fixed="""
import torch
for step in range(steps):
    noise = torch.randn(16, 128, device=device)
    fake = generator(noise)
""",
        ),
        Invalid(  # in a helper the training loop calls on every iteration
            """
import torch
def make_targets(labels):
    return torch.zeros(labels.shape[0], 10).cuda()
for images, labels in train_loader:
    loss = criterion(model(images.cuda()), make_targets(labels))
    loss.backward()
""",
            line=3,
            column=12,
            message="make_targets",
            fixed="""
import torch
def make_targets(labels):
    return torch.zeros(labels.shape[0], 10, device="cuda")
for images, labels in train_loader:
    loss = criterion(model(images.cuda()), make_targets(labels))
    loss.backward()
""",
            harness=Harness(setup=_ONE_LABELLED_BATCH, then="result = loss.value", fake_cuda=True),
        ),
        Invalid(  # requires_grad: reported without a fix
            """
import torch
for x in loader:
    w = torch.zeros(4, requires_grad=True).cuda()
""",
            line=3,
            column=9,
        ),
        Invalid(  # through the legacy Variable wrapper (pytorch-beginner's GAN)
            """
import torch
from torch.autograd import Variable
for i, (img, _) in enumerate(dataloader):
    real_label = Variable(torch.ones(img.size(0))).cuda()
    d_loss = criterion(D(img.cuda()), real_label)
""",
            line=4,
            column=18,
            fixed="""
import torch
from torch.autograd import Variable
for i, (img, _) in enumerate(dataloader):
    real_label = Variable(torch.ones(img.size(0), device="cuda"))
    d_loss = criterion(D(img.cuda()), real_label)
""",
            harness=Harness(setup=_ONE_IMAGE_BATCH, then="result = (real_label, d_loss)", fake_cuda=True),
        ),
        Invalid(  # reshaped between the factory and the move (SupContrast's mask, Ring-GNN's eye)
            """
import torch
import torch.nn as nn
class Loss(nn.Module):
    def forward(self, x):
        index = torch.arange(x.shape[0]).view(-1, 1).to(x.device)
        return x.gather(1, index)
""",
            line=5,
            column=17,
            fixed="""
import torch
import torch.nn as nn
class Loss(nn.Module):
    def forward(self, x):
        index = torch.arange(x.shape[0], device=x.device).view(-1, 1)
        return x.gather(1, index)
""",
            harness=Harness(then="result = Loss()(torch.randn(2, 3, device=\"cuda\"))", fake_cuda=True),
        ),
        Invalid(  # a model's own loss method, which the training loop calls as `model.loss(...)` (benchmarking-gnns)
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def loss(self, pred, label):
        sizes = torch.zeros(self.n_classes).long().to(self.device)
        return (pred * sizes).sum() + label
def train_epoch(model, data_loader, optimizer):
    for x, labels in data_loader:
        loss = model.loss(model(x), labels)
        loss.backward()
        optimizer.step()
""",
            line=5,
            column=17,
            message="loss",
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def loss(self, pred, label):
        sizes = torch.zeros(self.n_classes, device=self.device).long()
        return (pred * sizes).sum() + label
def train_epoch(model, data_loader, optimizer):
    for x, labels in data_loader:
        loss = model.loss(model(x), labels)
        loss.backward()
        optimizer.step()
""",
            harness=Harness(
                then="pred = torch.ones(3, device='cuda')\nnet = Net()\nnet.n_classes, net.device = 3, pred.device\nresult = net.loss(pred, 1)",
                fake_cuda=True,
            ),
        ),
        Invalid(  # bound to a name and moved by a later statement, which nothing reads between (pytorch-generative-model-collections)
            """
import torch
for x, y in data_loader:
    z = torch.rand((64, 100))
    if gpu_mode:
        x, z = x.cuda(), z.cuda()
    loss = D(G(z)).mean()
    loss.backward()
""",
            line=3,
            column=9,
            message="moved by a later",
        ),
        Invalid(  # bound to a name; a later statement that binds another name moves it through a reshape and a cast (faster-rcnn's anchor targets)
            """
import torch
from torch import nn
class AnchorTargets(nn.Module):
    def forward(self, gt_boxes, argmax_overlaps):
        batch_size = gt_boxes.size(0)
        offset = torch.arange(0, batch_size) * gt_boxes.size(1)
        argmax_overlaps = argmax_overlaps + offset.view(batch_size, 1).type_as(argmax_overlaps)
        return gt_boxes.view(-1, 5)[argmax_overlaps.view(-1)]
""",
            line=6,
            column=18,
            message="moved by a later `offset.view(batch_size, 1).type_as(argmax_overlaps)`",
        ),
        Invalid(  # the same, where the later statement rebinds the name with arithmetic (faster-rcnn's proposal targets)
            """
import torch
from torch import nn
class ProposalTargets(nn.Module):
    def forward(self, gt_boxes, gt_assignment):
        offset = torch.arange(0, gt_boxes.size(0)) * gt_boxes.size(1)
        offset = offset.view(-1, 1).type_as(gt_assignment) + gt_assignment
        return gt_boxes[:, :, 4].contiguous().view(-1)[offset.view(-1)]
""",
            line=5,
            column=18,
            message="moved by a later `offset.view(-1, 1).type_as(gt_assignment)`",
        ),
        Invalid(  # a part of a host factory (`[None, :, :]`), moved by a later statement behind an `is_cuda` test, in a helper a loss's `forward` calls (pointnet's feature-transform regulariser)
            """
import torch
from torch import nn
def regulariser(trans):
    d = trans.size()[1]
    I = torch.eye(d)[None, :, :]
    if trans.is_cuda:
        I = I.cuda()
    return torch.mean(torch.norm(torch.bmm(trans, trans.transpose(2, 1)) - I, dim=(1, 2)))
class Loss(nn.Module):
    def forward(self, pred, target, trans_feat):
        return nn.functional.nll_loss(pred, target) + regulariser(trans_feat) * 0.001
""",
            line=5,
            column=9,
            message="moved by a later `I.cuda()`, in `regulariser()`, which `forward` calls",
        ),
        Invalid(  # an old-style autograd Function's `forward` (run by each forward of the module that calls an instance): a host buffer moved as the first statement of the `is_cuda` branch, which then hands it to a kernel; the `else` is the host's run (yolo2-pytorch's reorg layer)
            """
import torch
from torch.autograd import Function
class Shuffle(Function):
    def forward(self, x):
        b, c, h, w = x.size()
        out = torch.FloatTensor(b, c * 4, h // 2, w // 2)
        if x.is_cuda:
            out = out.cuda()
            shuffle_gpu(x, out)
        else:
            shuffle_cpu(x, out)
        return out
""",
            line=6,
            column=15,
            message="moved by a later `out.cuda()`, inside `forward`",
        ),
        Invalid(  # the move in the `else` of a negated device check: the branch a run on the accelerator takes (yolo2-pytorch's RoI pooling)
            """
import torch
from torch.autograd import Function
class Pool(Function):
    def forward(self, features, rois):
        output = torch.zeros(rois.size(0), features.size(1), 7, 7)
        if not features.is_cuda:
            pool_cpu(features, rois, output)
        else:
            output = output.cuda()
            pool_gpu(features, rois, output)
        return output
""",
            line=5,
            column=18,
            message="moved by a later `output.cuda()`, inside `forward`",
        ),
        Invalid(  # grids unpacked from `torch.meshgrid` of host aranges are host tensors, moved together by a later unpacking, in a helper `forward` calls (Towards-Realtime-MOT's anchor mesh)
            """
import torch
import torch.nn as nn
def anchor_mesh(h, w, wh):
    ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w))
    xs, ys = xs.cuda(), ys.cuda()
    return torch.stack([xs, ys], dim=0).float() * wh
class Head(nn.Module):
    def forward(self, x):
        return x + anchor_mesh(x.size(2), x.size(3), self.wh)
""",
            line=4,
            column=14,
            message="moved by a later `xs.cuda()`, in `anchor_mesh()`, which `forward` calls",
        ),
        Invalid(  # a stack of host factories is made on the host (no fix: `device=` belongs in each part)
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        n = x.size(0)
        return x + torch.stack([torch.zeros(n), torch.ones(n)], -1).cuda()
""",
            line=6,
            column=20,
            message="inside `forward`",
        ),
        Invalid(  # a name bound to a host arange, moved later as a part of a stack (as of a concatenation)
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x, weights):
        ys = torch.arange(x.size(2)).float()
        return x + torch.stack([ys, weights], -1).cuda()
""",
            line=5,
            column=14,
            message="moved by a later `torch.stack([ys, weights], -1).cuda()`, inside `forward`",
        ),
        Invalid(  # a literal tuple unpacked: each name takes its own element, here a host arange moved later
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        rows, cols = torch.arange(x.size(0)), x.size(1)
        rows = rows.cuda()
        return x[rows, :cols]
""",
            line=5,
            column=22,
            message="moved by a later `rows.cuda()`, inside `forward`",
        ),
        Invalid(  # rows of a host identity, returned moved behind an `is_cuda` test (the later `return` runs only where nothing moved), by a helper the training loop calls (Pointnet2's to_categorical)
            """
import torch
def to_categorical(y, num_classes):
    new_y = torch.eye(num_classes)[y.cpu().data.numpy(),]
    if y.is_cuda:
        return new_y.cuda()
    return new_y
def train(model, loader, optimizer, num_classes):
    for points, label in loader:
        points, label = points.cuda(), label.cuda()
        loss = model(points, to_categorical(label, num_classes)).sum()
        loss.backward()
        optimizer.step()
""",
            line=3,
            column=13,
            message="moved by a later `new_y.cuda()`, in `to_categorical()`, which runs on every iteration",
        ),
        Invalid(  # a fixed loop (two datasets) nested in the iterations loop, each item a training step (stargan's train_multi)
            """
import torch
class Solver(object):
    def train_multi(self):
        for i in range(self.num_iters):
            for dataset in ["CelebA", "RaFD"]:
                x_real = self.fetch(dataset)
                alpha = torch.rand(x_real.size(0), 1, 1, 1).to(self.device)
                d_loss = self.D(alpha * x_real).mean()
                d_loss.backward()
                self.d_optimizer.step()
""",
            line=7,
            column=25,
            fixed="""
import torch
class Solver(object):
    def train_multi(self):
        for i in range(self.num_iters):
            for dataset in ["CelebA", "RaFD"]:
                x_real = self.fetch(dataset)
                alpha = torch.rand(x_real.size(0), 1, 1, 1, device=self.device)
                d_loss = self.D(alpha * x_real).mean()
                d_loss.backward()
                self.d_optimizer.step()
""",
            unsafe=True,
            message="on every loop iteration",
        ),
        Valid(  # a few training steps in all (a smoke test): a fixed loop that no loop repeats
            """
import torch
for _ in range(3):
    z = torch.rand(4, 8).cuda()
    loss = model(z).sum()
    loss.backward()
    optimizer.step()
"""
        ),
        Invalid(  # a buffer made per batch, where the model runs in a fixed loop (test-time flips) the batch loop holds (Person_reID's extract_feature)
            """
import torch
def extract_feature(model, dataloaders, ms, linear_num):
    features = []
    for iter, data in enumerate(dataloaders):
        img, label = data
        ff = torch.FloatTensor(img.size(0), linear_num).zero_().cuda()
        for i in range(2):
            if i == 1:
                img = img.flip(3)
            input_img = img.cuda()
            for scale in ms:
                ff += model(input_img)
        features.append(ff.cpu())
    return torch.cat(features, 0)
""",
            line=6,
            column=14,
            message="on every loop iteration",
        ),
        Invalid(  # behind a flag that says whether the run uses the GPU (pytorch-wgan)
            """
import torch
from torch.autograd import Variable
class GAN(object):
    def train(self, train_loader):
        for i, (images, _) in enumerate(train_loader):
            if self.cuda:
                z = Variable(torch.randn(images.size(0), 100).cuda(self.cuda_index))
            else:
                z = Variable(torch.randn(images.size(0), 100))
            loss = self.D(self.G(z)).mean()
""",
            line=7,
            column=30,
            unsafe=True,
            fixed="""
import torch
from torch.autograd import Variable
class GAN(object):
    def train(self, train_loader):
        for i, (images, _) in enumerate(train_loader):
            if self.cuda:
                z = Variable(torch.randn(images.size(0), 100, device=self.cuda_index))
            else:
                z = Variable(torch.randn(images.size(0), 100))
            loss = self.D(self.G(z)).mean()
""",
        ),
        Invalid(  # in a loss module's helper that forward calls, per feature level; through a cast
            """
import torch
import torch.nn as nn
class DetLoss(nn.Module):
    def forward(self, heads, annotations):
        targets = self.assign(heads, annotations)
        return sum((h - t).abs().mean() for h, t in zip(heads, targets))
    def assign(self, heads, annotations):
        device = annotations.device
        targets = []
        for head in heads:
            B, H, W, _ = head.shape
            targets.append(torch.full((B, H, W), -1).long().to(device))
        return targets
""",
            line=12,
            column=28,
            message="which `forward` calls",
            fixed="""
import torch
import torch.nn as nn
class DetLoss(nn.Module):
    def forward(self, heads, annotations):
        targets = self.assign(heads, annotations)
        return sum((h - t).abs().mean() for h, t in zip(heads, targets))
    def assign(self, heads, annotations):
        device = annotations.device
        targets = []
        for head in heads:
            B, H, W, _ = head.shape
            targets.append(torch.full((B, H, W), -1, device=device).long())
        return targets
""",
            harness=Harness(then="result = DetLoss()([torch.randn(1, 2, 2, 1, device=\"cuda\")], torch.zeros(1, device=\"cuda\"))", fake_cuda=True),
        ),
        Invalid(  # a hook the framework runs once per batch
            """
import torch
import lightning as L
class GAN(L.LightningModule):
    def training_step(self, batch, batch_idx):
        z = torch.randn(batch.shape[0], 128).to(self.device)
        return self.discriminator(self.generator(z)).mean()
""",
            line=5,
            column=13,
            unsafe=True,
            message="once per batch",
            fixed="""
import torch
import lightning as L
class GAN(L.LightningModule):
    def training_step(self, batch, batch_idx):
        z = torch.randn(batch.shape[0], 128, device=self.device)
        return self.discriminator(self.generator(z)).mean()
""",
        ),
        Invalid(  # a loop over a DataLoader the file builds, whatever its name
            """
import torch
from torch.utils.data import DataLoader
pairs = DataLoader(ds, batch_size=32)
for x in pairs:
    mask = torch.ones(x.shape[0]).cuda()
""",
            line=5,
            column=12,
            fixed="""
import torch
from torch.utils.data import DataLoader
pairs = DataLoader(ds, batch_size=32)
for x in pairs:
    mask = torch.ones(x.shape[0], device="cuda")
""",
            # The loader stands in as one batch: a real DataLoader samples with data-dependent ops that
            # fake tensors cannot run.
            harness=Harness(setup=_ONE_BATCH_LOADER, then="result = mask", fake_cuda=True),
        ),
    ]

    INVALID += [
        Invalid(  # `.cuda(None)` is the current GPU, `device=None` the CPU: unsafe (issue 25)
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, gpu=None):
        super().__init__()
        self.gpu = gpu
    def forward(self, x):
        return x + torch.zeros(3).cuda(self.gpu)
""",
            line=8,
            column=20,
            unsafe=True,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, gpu=None):
        super().__init__()
        self.gpu = gpu
    def forward(self, x):
        return x + torch.zeros(3, device=self.gpu)
""",
            harness=Harness(then="result = Net()(torch.ones(3, device=\"cuda\"))", fake_cuda=True),
        ),
        Invalid(  # the literal form
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        return torch.zeros(3).cuda(None)
""",
            line=5,
            column=16,
            unsafe=True,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        return torch.zeros(3, device=None)
""",
            harness=Harness(then="result = Net()(None)", fake_cuda=True),
        ),
        Invalid(  # an index literal: that GPU, written as one
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        return x + torch.ones(3).cuda(1)
""",
            line=5,
            column=20,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        return x + torch.ones(3, device="cuda:1")
""",
            harness=Harness(then="result = Net()(torch.ones(3, device=\"cuda:1\"))", fake_cuda=True),
        ),
        Invalid(  # `.to(gpu)` and `device=gpu` agree for every device, None included
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x, gpu=None):
        return x + torch.zeros(3).to(gpu)
""",
            line=5,
            column=20,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x, gpu=None):
        return x + torch.zeros(3, device=gpu)
""",
            harness=Harness(then="result = (Net()(torch.ones(3)), Net()(torch.ones(3), None))"),
        ),
        Invalid(  # floating-point steps: the GPU's kernel may round the last bit differently
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        return x * torch.linspace(0, 1, x.shape[-1]).to(x.device)
""",
            line=5,
            column=20,
            unsafe=True,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        return x * torch.linspace(0, 1, x.shape[-1], device=x.device)
""",
        ),
        Invalid(  # a conditional expression runs its factory on most iterations of a sampling loop; a spread of sizes is still sizes
            """
import torch
def sample(eps_model, n, size, device, n_T):
    x = torch.randn(n, *size, device=device)
    for i in range(n_T, 0, -1):
        z = torch.randn(n, *size).to(device) if i > 1 else 0
        x = x - eps_model(x, i / n_T) + z
    return x
""",
            line=5,
            column=13,
            unsafe=True,
            fixed="""
import torch
def sample(eps_model, n, size, device, n_T):
    x = torch.randn(n, *size, device=device)
    for i in range(n_T, 0, -1):
        z = torch.randn(n, *size, device=device) if i > 1 else 0
        x = x - eps_model(x, i / n_T) + z
    return x
""",
        ),
        Invalid(  # a class constructed in every `forward` runs its `__init__` there (a fact of the project pass, in any file)
            """
import torch
import torch.nn as nn
class CausalMask:
    def __init__(self, b, n, device="cpu"):
        self.mask = torch.triu(torch.ones(b, n, n, dtype=torch.bool), diagonal=1).to(device)
class Attention(nn.Module):
    def forward(self, q, k):
        scores = q @ k.transpose(-2, -1)
        return scores.masked_fill(CausalMask(q.shape[0], q.shape[1], device=q.device).mask, 0.0)
""",
            line=5,
            column=21,
            fixed="""
import torch
import torch.nn as nn
class CausalMask:
    def __init__(self, b, n, device="cpu"):
        self.mask = torch.triu(torch.ones(b, n, n, dtype=torch.bool, device=device), diagonal=1)
class Attention(nn.Module):
    def forward(self, q, k):
        scores = q @ k.transpose(-2, -1)
        return scores.masked_fill(CausalMask(q.shape[0], q.shape[1], device=q.device).mask, 0.0)
""",
            harness=Harness(then="result = Attention()(torch.randn(2, 3, 4, device=\"cuda\"), torch.randn(2, 3, 4, device=\"cuda\"))", fake_cuda=True),
        ),
        Invalid(  # moved by a helper of the project that returns its argument on the GPU (a fact of the project pass)
            """
import torch
def copy_to(obj, gpu):
    if torch.is_tensor(obj):
        return obj.cuda(gpu, non_blocking=True)
    if isinstance(obj, dict):
        return {k: copy_to(v, gpu) for k, v in obj.items()}
    return obj
for batch in val_loader:
    scores = torch.zeros(1, 150, batch["h"], batch["w"])
    scores = copy_to(scores, 0)
    scores = scores + model(copy_to(batch, 0))
""",
            line=9,
            column=14,
        ),
        Invalid(  # a project helper (here or in another file) that returns a tensor it has just made on the host: the
            # summaries' `fresh` fact, through the helper's local name, its triangle, cast and comparison (hkproj's causal_mask)
            """
import torch
def causal_mask(size):
    mask = torch.triu(torch.ones((1, size, size)), diagonal=1).type(torch.int)
    return mask == 0
def greedy_decode(model, source, source_mask, max_len, device):
    decoder_input = source[:, :1]
    while decoder_input.size(1) < max_len:
        decoder_mask = causal_mask(decoder_input.size(1)).type_as(source_mask).to(device)
        out = model.decode(source, decoder_input, decoder_mask)
        decoder_input = torch.cat([decoder_input, out[:, -1:].argmax(-1)], dim=1)
    return decoder_input
""",
            line=8,
            column=24,
            message="causal_mask()",
        ),
        Invalid(  # a legacy constructor given `x.size()` (a torch.Size: sizes), zero-filled, moved behind a device test (deepspeech's MaskConv)
            """
import torch
import torch.nn as nn
class MaskConv(nn.Module):
    def forward(self, x, lengths):
        mask = torch.BoolTensor(x.size()).fill_(0)
        if x.is_cuda:
            mask = mask.cuda()
        for i, length in enumerate(lengths):
            mask[i, length:].fill_(1)
        return x.masked_fill(mask, 0)
""",
            line=5,
            column=16,
            message="torch.BoolTensor(x.size()).fill_(0)",
        ),
        Invalid(  # `lm_model.log_prob(x)` on a parameter named like a model, the module binding `lm_model = LM()`: the
            # project's nn.Module method `log_prob` (a torch.distributions name too), run on every evaluation step
            """
import torch
import torch.nn as nn
class LM(nn.Module):
    def log_prob(self, x):
        prob = torch.zeros(x.size(0), 4).cuda()
        return prob + x
def evaluate(data_loader, lm_model):
    for words, labels in data_loader:
        scores = lm_model.log_prob(words)
    return scores
lm_model = LM()
result = evaluate(test_loader, lm_model)
""",
            line=5,
            column=16,
            fixed="""
import torch
import torch.nn as nn
class LM(nn.Module):
    def log_prob(self, x):
        prob = torch.zeros(x.size(0), 4, device="cuda")
        return prob + x
def evaluate(data_loader, lm_model):
    for words, labels in data_loader:
        scores = lm_model.log_prob(words)
    return scores
lm_model = LM()
result = evaluate(test_loader, lm_model)
""",
            harness=Harness(setup='import torch\ntest_loader = [(torch.ones(2, 4, device="cuda"), None)]', fake_cuda=True),
        ),
    ]

    INVALID += [
        Invalid(  # arithmetic with a size of the shape (a Python int) and `.type_as(x)` on the way, behind the model's flag (Informer's attention)
            """
import torch
import torch.nn as nn
class ProbAttention(nn.Module):
    def forward(self, scores, v):
        attn = torch.softmax(scores, dim=-1)
        return self._update_context(attn, v)
    def _update_context(self, attn, v):
        B, H, L, D = v.shape
        if self.output_attention:
            return (torch.ones([B, H, L, L]) / L).type_as(attn).to(attn.device)
        return None
""",
            line=10,
            column=20,
            message="which `forward` calls",
            fixed="""
import torch
import torch.nn as nn
class ProbAttention(nn.Module):
    def forward(self, scores, v):
        attn = torch.softmax(scores, dim=-1)
        return self._update_context(attn, v)
    def _update_context(self, attn, v):
        B, H, L, D = v.shape
        if self.output_attention:
            return (torch.ones([B, H, L, L], device=attn.device) / L).type_as(attn)
        return None
""",
            harness=Harness(
                then="ProbAttention.output_attention = True\nresult = ProbAttention()(torch.randn(1, 2, 3, 3, device=\"cuda\"), torch.randn(1, 2, 3, 4, device=\"cuda\"))",
                fake_cuda=True,
            ),
        ),
        Invalid(  # `.type_as(x)` alone is the move: a cast to `x`'s type, on `x`'s device (no fix: `device=` alone keeps the dtype)
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        return x + torch.zeros(x.shape[0], 1).type_as(x)
""",
            line=5,
            column=20,
        ),
        Invalid(  # a legacy constructor of `range(n)`: the numbers `torch.arange` makes (a Transformer's key positions)
            """
import torch
import torch.nn as nn
class Attention(nn.Module):
    def forward(self, weights, lengths):
        n = weights.size(-1)
        keys = torch.LongTensor(range(n)).unsqueeze(0).expand_as(weights).to(weights.device)
        return weights.masked_fill(keys >= lengths.unsqueeze(1), -1e9)
""",
            line=6,
            column=16,
            message="torch.arange(..., dtype=torch.int64",
        ),
        Invalid(  # a branch the run's configuration chooses: taken on every iteration of a run configured so
            """
import torch
for x, y in train_loader:
    if args.loss == "hinge":
        loss = torch.relu(1.0 - D(x)).mean()
    else:
        noise = torch.randn(x.size(0), 1).cuda()
        loss = criterion(D(x), noise)
    loss.backward()
""",
            line=6,
            column=17,
            unsafe=True,
            fixed="""
import torch
for x, y in train_loader:
    if args.loss == "hinge":
        loss = torch.relu(1.0 - D(x)).mean()
    else:
        noise = torch.randn(x.size(0), 1, device="cuda")
        loss = criterion(D(x), noise)
    loss.backward()
""",
        ),
    ]

    INVALID += [
        Invalid(  # a decoding `while` loop over one input is no pass: `translate` runs its setup for every test batch
            """
import torch
def translate(model, source, device):
    scores = torch.zeros(1).to(device)
    hypotheses = source[:, :1].to(device)
    while hypotheses.size(1) < 50:
        logits = model.decoder(hypotheses)
        hypotheses = torch.cat([hypotheses, logits.argmax(-1)[:, -1:]], dim=1)
    return hypotheses, scores
for source, target in test_loader:
    outputs.append(translate(model, source, device))
""",
            line=3,
            column=14,
            message="runs on every iteration of the loop",
            fixed="""
import torch
def translate(model, source, device):
    scores = torch.zeros(1, device=device)
    hypotheses = source[:, :1].to(device)
    while hypotheses.size(1) < 50:
        logits = model.decoder(hypotheses)
        hypotheses = torch.cat([hypotheses, logits.argmax(-1)[:, -1:]], dim=1)
    return hypotheses, scores
for source, target in test_loader:
    outputs.append(translate(model, source, device))
""",
            harness=Harness(
                setup=(
                    "import types\n"
                    "import torch\n"
                    "test_loader = [(torch.zeros(1, 3, dtype=torch.long), None)]\n"
                    "outputs = []\n"
                    "device = \"cpu\"  # the fix means the same on any device\n"
                    "model = types.SimpleNamespace(decoder=lambda h: torch.zeros(h.shape[0], h.shape[1], 4, device=h.device))\n"
                ),
                then="result = outputs[0]",
            ),
        ),
    ]

    INVALID += [
        Invalid(  # an attack's steps over a count (no data drawn, counter unread) refine one input: no pass, `perturb` runs per batch
            """
import torch
def perturb(net, x_nat):
    x = x_nat.detach() + 0.001 * torch.randn(x_nat.shape).cuda().detach()
    for _ in range(10):
        x.requires_grad_()
        grad = torch.autograd.grad(net(x).sum(), [x])[0]
        x = x.detach() + 0.01 * torch.sign(grad)
    return x
for data, target in train_loader:
    loss = criterion(model(perturb(model, data.cuda())), target.cuda())
    loss.backward()
    optimizer.step()
""",
            line=3,
            column=34,
            message="runs on every iteration of the loop",
            unsafe=True,
            fixed="""
import torch
def perturb(net, x_nat):
    x = x_nat.detach() + 0.001 * torch.randn(x_nat.shape, device="cuda").detach()
    for _ in range(10):
        x.requires_grad_()
        grad = torch.autograd.grad(net(x).sum(), [x])[0]
        x = x.detach() + 0.01 * torch.sign(grad)
    return x
for data, target in train_loader:
    loss = criterion(model(perturb(model, data.cuda())), target.cuda())
    loss.backward()
    optimizer.step()
""",
        ),
    ]

    INVALID += [
        Invalid(  # a stochastic augmentation's branch, taken when a fresh draw falls under a probability: a fixed fraction of all steps
            """
import numpy as np
import torch
for x, y in train_loader:
    x, y = x.cuda(), y.cuda()
    r = np.random.rand(1)
    if args.beta > 0 and r < args.cutmix_prob:
        index = torch.randperm(x.size(0)).cuda()
        x = x[index]
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
            line=7,
            column=17,
            message="on every training step its branch takes",
            unsafe=True,
            fixed="""
import numpy as np
import torch
for x, y in train_loader:
    x, y = x.cuda(), y.cuda()
    r = np.random.rand(1)
    if args.beta > 0 and r < args.cutmix_prob:
        index = torch.randperm(x.size(0), device="cuda")
        x = x[index]
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
        ),
    ]

    VALID += [
        Valid(  # the near miss: the draw joined to an opt-in flag (`args.visualise`), which may be off for the whole run
            """
import numpy as np
import torch
for x, y in train_loader:
    x, y = x.cuda(), y.cuda()
    r = np.random.rand(1)
    if args.visualise and r < 0.01:
        grid = torch.zeros(8, 3, 32, 32).cuda()
        show(grid + x[:8])
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
"""
        ),
    ]

    INVALID += [
        Invalid(  # a legacy constructor given a tensor's sizes, filled at random, behind a flag the script turns on by default
            """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--random", default=True)
args = parser.parse_args()
def pgd(model, X, epsilon):
    if args.random:
        X = X + torch.FloatTensor(*X.shape).uniform_(-epsilon, epsilon).to(device)
    return model(X)
for data, target in test_loader:
    outputs.append(pgd(model, data.to(device), 0.03))
""",
            line=8,
            column=17,
            message="runs on every iteration of the loop",
        ),
    ]

    VALID += [
        Valid(  # the near miss: an opt-in flag (`store_true`, off unless asked), and a spread that may be data
            """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--random", action="store_true")
args = parser.parse_args()
def pgd(model, X, rows, epsilon):
    if args.random:
        X = X + torch.FloatTensor(*X.shape).uniform_(-epsilon, epsilon).to(device)
    return model(X + torch.FloatTensor(*rows).to(device))
for data, target in test_loader:
    outputs.append(pgd(model, data.to(device), [[1.0]], 0.03))
"""
        ),
    ]

    VALID += [
        Valid(  # the near miss: a loop over a count that draws a batch on each step is a pass; its setup runs once per pass
            """
import torch
def train_steps(model, batches, optimizer, n):
    total = torch.zeros(1).cuda()
    for _ in range(n):
        loss = model(next(batches)).mean()
        loss.backward()
        optimizer.step()
        total += loss.detach()
    return total
for chunk in train_loader:
    train_steps(model, iter(chunk), optimizer, 10)
"""
        ),
    ]

    VALID += [
        Valid(  # a `while` loop that steps the optimizer is a pass: its buffers are set up once per pass
            """
import torch
def train_until(model, batches, optimizer, max_steps):
    total = torch.zeros(1).cuda()
    step = 0
    while step < max_steps:
        loss = model(next(batches)).mean()
        loss.backward()
        optimizer.step()
        total += loss.detach()
        step += 1
    return total
for chunk in train_loader:
    train_until(model, iter(chunk), optimizer, 10)
"""
        ),
        Valid(  # a mask made once and kept: the `if` reads the attribute the statement fills
            """
import torch
import torch.nn as nn
class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.mask = None
    def forward(self, x):
        if self.mask is None or self.mask.size(0) != x.size(1):
            self.mask = torch.triu(torch.ones(x.size(1), x.size(1)), diagonal=1).type_as(x)
        return x.masked_fill(self.mask.bool(), 0.0)
"""
        ),
        Valid(  # a data-dependent initialisation: `forward(x, init=True)` is called once, ordinary calls skip it (OpenNMT's weight norm)
            """
import torch
import torch.nn as nn
class WeightNormLinear(nn.Linear):
    def forward(self, x, init=False):
        if init is True:
            self.weight.data.copy_(torch.randn(self.weight.size()).type_as(self.weight) * 0.05)
        return super().forward(x)
"""
        ),
        Valid(  # an attribute keeping a constructor's flag that defaults to False, no construction turning it on: an opt-in layer's branch
            """
import torch
import torch.nn as nn
class Mixer(nn.Module):
    def __init__(self, n, factorize=False):
        super().__init__()
        self.n = n
        self.factorize = factorize
    def forward(self, x):
        if self.factorize:
            x = x + torch.eye(self.n).to(x.device)
        return x
mixer = Mixer(4)
"""
        ),
        Valid(  # a helper the loop calls behind an opt-in flag of the configuration (`if args.log_margins:`), no choice every run makes
            """
import torch
def margin(logits, y):
    floor = torch.zeros(y.shape[0]).cuda()
    return torch.max(floor, logits.max(1)[0])
for x, y in test_loader:
    x, y = x.cuda(), y.cuda()
    if args.log_margins:
        print(margin(model(x), y))
"""
        ),
        Valid(  # a module-level cache keyed by the device, filled on the first call
            """
import torch
windows = {}
def spectrogram(y, n_fft):
    if str(y.device) not in windows:
        windows[str(y.device)] = torch.ones(n_fft).to(y.device)
    return torch.stft(y, n_fft, window=windows[str(y.device)], return_complex=True)
for y in train_loader:
    loss = spectrogram(model(y.cuda()), 512).abs().mean()
    loss.backward()
"""
        ),
        Valid(  # an opt-in flag of the configuration: extra work some runs ask for, not a choice every run makes
            """
import torch
for x, y in train_loader:
    if args.log_samples:
        z = torch.randn(8, 100).cuda()
        writer.add_images("samples", G(z))
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
"""
        ),
        Valid(  # arithmetic with a value that may be a tensor (`scale` unknown) before `.type_as(x)`
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x, scale):
        return x * (torch.ones(x.shape[0], 1) * scale).type_as(x)
"""
        ),
        Valid(  # once per epoch: `train` runs its own pass over the loader, so what it calls before
            # that loop runs once per call, and the loop over epochs that calls it is no step loop
            """
import torch
def cluster(memory, k):
    centroids = torch.zeros(k, memory.shape[1]).cuda()
    return centroids
def train(loader, model, optimizer, memory):
    assignments = cluster(memory, 10)
    for x, y in loader:
        loss = model(x.cuda()).mean()
        loss.backward()
        optimizer.step()
def main():
    for epoch in range(start_epoch, args.epochs):
        train(train_loader, model, optimizer, memory)
"""
        ),
        Valid(  # a fixed small count: the validation loop breaks once its counter reaches
            # `num_examples` (2 by default), so the helper runs twice, not once per batch
            """
import torch
def greedy_decode(model, source, device):
    decoder_input = torch.empty(1, 1).fill_(1).type_as(source).to(device)
    return model.decode(source, decoder_input)
def run_validation(model, val_loader, device, num_examples=2):
    count = 0
    with torch.no_grad():
        for batch in val_loader:
            count += 1
            out = greedy_decode(model, batch["x"].to(device), device)
            if count == num_examples:
                break
"""
        ),
        Invalid(  # a decoding loop: the model runs once per generated token, and so does the copy
            """
import torch
def greedy_decode(model, source, max_len, device):
    decoder_input = source[:, :1]
    while True:
        if decoder_input.size(1) == max_len:
            break
        out = model.decode(source, decoder_input)
        next_word = out[:, -1].argmax(dim=1)
        decoder_input = torch.cat([decoder_input, torch.empty(1, 1).type_as(source).fill_(next_word.item()).to(device)], dim=1)
    return decoder_input
""",
            line=9,
            column=51,
            message="on every loop iteration",
        ),
        Invalid(  # a causal mask in a decoding loop: `torch.triu` and a cast to a dtype between the factory and the move
            """
import torch
def translate(model, source, device):
    decoder_input = source
    while decoder_input.size(1) < 4:
        n = decoder_input.size(1)
        mask = torch.triu(torch.ones((1, n, n)), diagonal=1).type(torch.int).to(device)
        out = model.decode(source, decoder_input, mask)
        decoder_input = torch.cat([decoder_input, out], dim=1)
    return decoder_input
""",
            line=6,
            column=16,
            fixed="""
import torch
def translate(model, source, device):
    decoder_input = source
    while decoder_input.size(1) < 4:
        n = decoder_input.size(1)
        mask = torch.triu(torch.ones((1, n, n), device=device), diagonal=1).type(torch.int)
        out = model.decode(source, decoder_input, mask)
        decoder_input = torch.cat([decoder_input, out], dim=1)
    return decoder_input
""",
            harness=Harness(setup=_DECODER, then="result = translate(_Decoder(), torch.ones(1, 1, device=\"cuda\"), \"cuda\")", fake_cuda=True),
        ),
        Invalid(  # `.type(type(t))` casts to `t`'s tensor type: `torch.cuda.FloatTensor` when `t` is on the accelerator
            """
import torch
for inputs, targets in dataloader:
    outputs = net(inputs.cuda())
    prod = torch.zeros(1).type(type(outputs.data))
""",
            line=4,
            column=12,
            message="on every loop iteration",
        ),
        Valid(  # the factory runs once, before the loop; only the moved tensor is used in it
            """
import torch
ones = torch.ones(64, 1).type_as(weight)
for x, y in train_loader:
    loss = criterion(model(x.cuda()), ones)
    loss.backward()
"""
        ),
    ]

    INVALID += [
        Invalid(  # the mode a string-defaulted parameter picks (`distance="l_2"`): the caller's configuration, every call of its run
            """
import torch
def trades_loss(model, x, distance="l_inf"):
    if distance == "l_inf":
        x_adv = x.detach()
    elif distance == "l_2":
        x_adv = x + 0.001 * torch.randn(x.shape).cuda()
    return model(x_adv).sum()
for data, target in train_loader:
    loss = trades_loss(model, data.cuda(), distance="l_2")
    loss.backward()
    optimizer.step()
""",
            line=6,
            column=29,
            message="runs on every iteration of the loop",
            unsafe=True,
            fixed="""
import torch
def trades_loss(model, x, distance="l_inf"):
    if distance == "l_inf":
        x_adv = x.detach()
    elif distance == "l_2":
        x_adv = x + 0.001 * torch.randn(x.shape, device="cuda")
    return model(x_adv).sum()
for data, target in train_loader:
    loss = trades_loss(model, data.cuda(), distance="l_2")
    loss.backward()
    optimizer.step()
""",
        ),
    ]

    INVALID += [
        Invalid(  # a marimo cell's class: its training step calls the loss helper, which the project pass follows as the notebook's own
            """
import marimo

app = marimo.App()


@app.cell
def _():
    import torch
    return (torch,)


@app.cell
def _(torch):
    class Agent:
        def _loss(self, samples):
            noise = torch.randn(self.batch_size).to(self.device)
            return (self.dqn(samples) + noise).sum()

        def update_model(self):
            loss = self._loss(self.memory.sample_batch())
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

        def train(self, num_frames):
            for frame_idx in range(num_frames):
                if len(self.memory) >= self.batch_size:
                    self.update_model()

    return (Agent,)
""",
            line=16,
            column=21,
            message="runs on every training step it takes",
            unsafe=True,
            fixed="""
import marimo

app = marimo.App()


@app.cell
def _():
    import torch
    return (torch,)


@app.cell
def _(torch):
    class Agent:
        def _loss(self, samples):
            noise = torch.randn(self.batch_size, device=self.device)
            return (self.dqn(samples) + noise).sum()

        def update_model(self):
            loss = self._loss(self.memory.sample_batch())
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

        def train(self, num_frames):
            for frame_idx in range(num_frames):
                if len(self.memory) >= self.batch_size:
                    self.update_model()

    return (Agent,)
""",
        ),
    ]

    INVALID += [
        Invalid(  # a method of the class an attribute was built from (`self.decoder = Decoder()`): the model's call reaches it per test batch
            """
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def recognize_beam(self, encoder_outputs):
        ys = torch.zeros(1, 1).type_as(encoder_outputs)
        return self.out(encoder_outputs) + ys
class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = Decoder()
    def recognize(self, x):
        return self.decoder.recognize_beam(self.encoder(x))
model = Transformer().cuda()
with torch.no_grad():
    for x in test_loader:
        hyps = model.recognize(x.cuda())
""",
            line=5,
            column=14,
            message="in `recognize_beam()`, which runs on every iteration of the loop",
        ),
    ]

    INVALID += [
        Invalid(  # a padding column a factory makes on the host, joined to the host batch and moved with it: no fix, the batch needs its own move
            """
import torch
for data in train_loader:
    txt = torch.cat((torch.zeros(data.shape[0], 1, dtype=torch.long), data), dim=1).to(device)
    loss = model(txt).sum()
    loss.backward()
    optimizer.step()
""",
            line=3,
            column=11,
            message="on every loop iteration",
        ),
    ]

    VALID += [
        Valid(  # the parts joined are data (a tensor built from Python numbers), not sizes: built on the host either way
            """
import torch
for data, lengths in train_loader:
    txt = torch.cat((torch.tensor([[1]] * len(lengths)), data), dim=1).to(device)
    loss = model(txt).sum()
    loss.backward()
    optimizer.step()
"""
        ),
    ]

    INVALID += [
        Invalid(  # the padding the configuration picks (one branch per run), joined to the host batch and moved whole by the next statement
            """
import torch
for batch_x, batch_y in train_loader:
    if args.padding == 0:
        dec_inp = torch.zeros([batch_y.shape[0], args.pred_len, batch_y.shape[-1]]).float()
    elif args.padding == 2:
        dec_inp = batch_y[:, -args.pred_len:, :].float()
    dec_inp = torch.cat([batch_y[:, :args.label_len, :], dec_inp], dim=1).float().to(device)
    loss = criterion(model(batch_x.to(device), dec_inp), batch_y.to(device))
    loss.backward()
    optimizer.step()
""",
            line=4,
            column=19,
            message="moved by a later",
        ),
    ]

    INVALID += [
        Invalid(  # the concatenation through the name torch is imported as (`tables.CONCATENATIONS`, resolved)
            """
import torch as th
for x, y in train_loader:
    pad = th.zeros(y.shape[0], 4)
    joined = th.cat([y, pad], dim=1).to(device)
    loss = criterion(model(x.to(device)), joined)
    loss.backward()
    optimizer.step()
""",
            line=3,
            column=11,
            message="moved by a later `th.cat([y, pad], dim=1).to(device)`",
        ),
    ]

    VALID += [
        Valid(  # the branches are taken by a counter, not by the configuration: the value moved is not always the factory's
            """
import torch
for step, (batch_x, batch_y) in enumerate(train_loader):
    if step % 10 == 0:
        dec_inp = torch.zeros([batch_y.shape[0], args.pred_len, batch_y.shape[-1]]).float()
    else:
        dec_inp = batch_y[:, -args.pred_len:, :].float()
    dec_inp = torch.cat([batch_y[:, :args.label_len, :], dec_inp], dim=1).float().to(device)
    loss = criterion(model(batch_x.to(device), dec_inp), batch_y.to(device))
    loss.backward()
    optimizer.step()
"""
        ),
    ]

    VALID += [
        Valid(  # a parameter defaulting to None tested against a string: a special call's branch, not a mode of every call
            """
import torch
def step(model, x, phase=None):
    if phase == "warmup":
        x = x + torch.randn(x.shape).cuda()
    return model(x).sum()
for data, target in train_loader:
    loss = step(model, data.cuda())
    loss.backward()
    optimizer.step()
"""
        ),
    ]

    INVALID += [
        Invalid(  # a helper returns an index of a host `torch.eye` (a one-hot embedding); the loss slices it and moves it wrapped, every forward
            """
import torch
import torch.nn as nn
from torch.autograd import Variable
def one_hot_embedding(labels, num_classes):
    y = torch.eye(num_classes)
    return y[labels]
class FocalLoss(nn.Module):
    def forward(self, x, y):
        t = one_hot_embedding(y.data.cpu(), 21)
        t = t[:, 1:]
        t = Variable(t).cuda()
        return (x * t).sum()
""",
            line=9,
            column=13,
            message="moved by a later `Variable(t).cuda()`, inside `forward`",
        ),
        Invalid(  # a helper returns elementwise functions of a host `torch.rand` (a Gumbel sample; `eps` defaults to a number), moved per step by its caller
            """
import torch
def sample_gumbel(shape, eps=1e-10):
    u = torch.rand(shape).float()
    return - torch.log(eps - torch.log(u + eps))
def gumbel_softmax_sample(logits, tau=1, eps=1e-10):
    noise = sample_gumbel(logits.size(), eps=eps)
    if logits.is_cuda:
        noise = noise.cuda()
    return torch.softmax((logits + noise) / tau, dim=-1)
for x, y in train_loader:
    edges = gumbel_softmax_sample(model(x.cuda()))
    loss = criterion(edges, y.cuda())
    loss.backward()
    optimizer.step()
""",
            line=6,
            column=13,
            message="pass the device to `sample_gumbel()`",
        ),
    ]

    VALID += [
        Valid(  # arithmetic with a parameter that has no number for a default: it may be a tensor on the device
            """
import torch
def noisy(shape, scale):
    return torch.rand(shape) * scale
for x, y in train_loader:
    noise = noisy(x.size(), model.noise_scale)
    noise = noise.cuda()
    loss = criterion(model(x.cuda() + noise), y.cuda())
    loss.backward()
    optimizer.step()
"""
        ),
    ]

    INVALID += [
        Invalid(  # arithmetic with a loop's counter, a number by how the function reads it (host_flow.number_like): still the host's (ddim's timesteps)
            """
import torch
def sample_steps(x, seq, model):
    n = x.size(0)
    xs = [x]
    with torch.no_grad():
        for i in reversed(seq):
            t = (torch.ones(n) * i).to(x.device)
            xt = xs[-1].to("cuda")
            xs.append(model(xt, t).to("cpu"))
    return xs
""",
            line=7,
            column=17,
            message="on every loop iteration",
        ),
        Invalid(  # elementwise math of a host arange and a number bound the statement before: the embedding is made on the host, then moved
            """
import math
import torch
import torch.nn as nn
def timestep_embedding(timesteps, dim):
    half = dim // 2
    emb = math.log(10000) / (half - 1)
    emb = torch.exp(torch.arange(half, dtype=torch.float32) * -emb)
    emb = emb.to(device=timesteps.device)
    return timesteps.float()[:, None] * emb[None, :]
class Model(nn.Module):
    def forward(self, x, t):
        return self.net(x) + timestep_embedding(t, 64).sum()
""",
            line=7,
            column=11,
            message="which `forward` calls",
        ),
        Invalid(  # divided by an attribute the class binds from a constructor argument that it reads only as a number
            """
import torch
import torch.nn as nn
class SincConv(nn.Module):
    def __init__(self, size, fs):
        super().__init__()
        self.size = size
        self.freq_scale = fs * 1.0
        self.fs = fs
    def forward(self, x):
        t_right = torch.linspace(1, self.size, steps=self.size) / self.fs
        if x.is_cuda:
            t_right = t_right.to("cuda")
        return x * t_right
""",
            line=10,
            column=19,
            message="inside `forward`",
        ),
        Invalid(  # a window computed on the host from a host linspace bound to a name: the factory's line is reported
            """
import math
import torch
import torch.nn as nn
class SincConv(nn.Module):
    def forward(self, x):
        N = x.size(-1)
        n = torch.linspace(0, N, steps=N)
        window = (0.54 - 0.46 * torch.cos(2 * math.pi * n / N)).float()
        if x.is_cuda:
            window = window.to("cuda")
        return x * window
""",
            line=7,
            column=13,
            message="moved by a later `window.to(\"cuda\")`",
        ),
        Invalid(  # reshaped under a new name, then moved behind a device check, in a helper `forward` calls (a sequence mask)
            """
import torch
import torch.nn as nn
def sequence_mask(lengths, max_len):
    seq_range = torch.arange(0, max_len).long()
    seq_range_expand = seq_range.unsqueeze(0).expand(lengths.size(0), max_len)
    if lengths.is_cuda:
        seq_range_expand = seq_range_expand.cuda()
    return (seq_range_expand < lengths.unsqueeze(1)).float()
class Decoder(nn.Module):
    def forward(self, x, lengths):
        return self.net(x) * sequence_mask(lengths, x.size(1)).unsqueeze(-1)
""",
            line=4,
            column=17,
            message="moved by a later `seq_range_expand.cuda()`",
        ),
        Invalid(  # a legacy constructor given a tensor's sizes and one more (`torch.Size` + a tuple), filled, then moved
            """
import torch
import torch.nn as nn
def to_one_hot(tensor, n):
    one_hot = torch.FloatTensor(tensor.size() + (n,)).zero_()
    if tensor.is_cuda:
        one_hot = one_hot.cuda()
    one_hot.scatter_(len(tensor.size()), tensor.unsqueeze(-1), 1.0)
    return one_hot
class Head(nn.Module):
    def forward(self, x, y):
        return self.net(x) * to_one_hot(y, 4)
""",
            line=4,
            column=15,
            message="torch.empty(..., dtype=torch.float32, device=...)",
        ),
        Invalid(  # bound in each branch of an `if` / `else` (a literal written into one): whichever runs, a fresh host tensor is moved
            """
import torch
import torch.nn as nn
class WaveNet(nn.Module):
    def generate(self, B):
        if self.scalar_input:
            first = torch.zeros(B, 1, 1)
        else:
            first = torch.tensor([[[0.0]]]).expand(B, 1, 1).clone()
        first[:, :, 0] = 1
        return self.net(first)
    def incremental_forward(self, B):
        if self.scalar_input:
            current = torch.zeros(B, 1, 0)  # empty: nothing to copy
        else:
            current = torch.zeros(B, 1, 256)
            current[:, :, 127] = 1
        if next(self.parameters()).is_cuda:
            current = current.cuda()
        return self.net(current)
model = WaveNet()
with torch.no_grad():
    for x in test_loader:
        y = model.incremental_forward(x.size(0))
""",
            line=15,
            column=23,
            message="in `incremental_forward()`, which runs on every iteration",
        ),
    ]

    INVALID += [
        Invalid(  # a flag defaulting to False that every call turns on with an accelerator test: its branch runs whenever forward runs on the GPU
            """
import torch
import torch.nn as nn
def sinc(band, t_right, cuda=False):
    ones = torch.ones(1)
    if cuda:
        ones = ones.to("cuda")
    return torch.cat([t_right * band, ones])
class SincConv(nn.Module):
    def forward(self, x):
        cuda = x.is_cuda
        return x * sinc(self.low, self.t, cuda).sum() * sinc(self.high, self.t, cuda).sum()
""",
            line=4,
            column=12,
            message="moved by a later `ones.to(\"cuda\")`, in `sinc()`, which `forward` calls",
        ),
        Invalid(  # a second fresh host tensor in the arithmetic: `mask`, read only to compute the inverse, is as fresh (NRI's `set_diag_to_one`)
            """
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def forward(self, x):
        mask = torch.eye(x.size(1))
        inverse_mask = torch.ones(x.size(1), x.size(1)) - mask
        if x.is_cuda:
            inverse_mask = inverse_mask.cuda()
        return inverse_mask * x
""",
            line=6,
            column=24,
            message="moved by a later `inverse_mask.cuda()`",
        ),
    ]

    VALID += [
        Valid(  # one call leaves the flag at its default: the branch is that caller's special case
            """
import torch
import torch.nn as nn
def sinc(band, t_right, cuda=False):
    ones = torch.ones(1)
    if cuda:
        ones = ones.to("cuda")
    return torch.cat([t_right * band, ones])
class SincConv(nn.Module):
    def forward(self, x):
        return x * sinc(self.low, self.t, x.is_cuda).sum() * sinc(self.high, self.t).sum()
"""
        ),
        Valid(  # turned on only by a call outside the loop (a warm-up): an opt-in, not every step's
            """
import torch
def step(model, x, warmup=False):
    if warmup:
        x = x + torch.randn(x.shape).cuda()
    return model(x).sum()
step(model, first.cuda(), warmup=True)
for data, target in train_loader:
    loss = step(model, data.cuda())
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(  # arithmetic with a parameter nothing binds or sizes here: it may be any tensor the caller passes (its placement unknown)
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x, scale):
        return x * (torch.ones(x.size(1)) * scale).cuda()
"""
        ),
        Valid(  # the loop's variable is also handed to a call: not read only as a number
            """
import torch
def run(loader, model):
    for i in loader:
        t = (torch.ones(4) * i).cuda()
        model(i, t)
"""
        ),
        Valid(  # the host tensor a name holds is read again on the host (an index into host data): making it on the device saves no host tensor
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        idx = torch.arange(x.size(0))
        rows = self.table[idx]
        shifted = (idx * 2).cuda()
        return x + rows.cuda() + shifted
"""
        ),
        Valid(  # one branch of an `if` the data decides binds a tensor of data: the moved value is not always a fresh host tensor
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x, labels):
        if labels.numel() > 0:
            target = labels.float()
        else:
            target = torch.zeros(x.size(0))
        if x.is_cuda:
            target = target.cuda()
        return x + target
"""
        ),
    ]

    INVALID += [
        Invalid(  # a negated host arange moved each forward: the sign makes a new tensor where its operand is
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        k = x.size(1)
        return x * (-torch.arange(k)).cuda()
""",
            line=6,
            column=20,
            message="inside `forward`",
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        k = x.size(1)
        return x * (-torch.arange(k, device="cuda"))
""",
            harness=Harness(then="result = Net()(torch.randn(2, 3, device='cuda'))", fake_cuda=True),
        ),
        Invalid(  # the negated host arange bound to a name, then the name moved
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        k = x.size(1)
        n = -torch.arange(k)
        n = n.cuda()
        return x * n
""",
            line=6,
            column=13,
            message="moved by a later `n.cuda()`",
        ),
        Invalid(  # elementwise math as a method of the host arange (`.cos()`), then the move
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        k = x.size(1)
        return x * torch.arange(k).float().cos().cuda()
""",
            line=6,
            column=20,
            message="inside `forward`",
        ),
    ]

    VALID += [
        Valid(  # a stack with a part that may be any tensor (one of `x`'s rows): where it is, is unknown
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        return torch.stack([torch.zeros(x.size(1)), x[0]], -1).cuda()
"""
        ),
        Valid(  # a grid read on the host (an index computed from it) before it is moved
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        ys, xs = torch.meshgrid(torch.arange(4), torch.arange(4))
        keep = xs > ys
        xs, ys = xs.cuda(), ys.cuda()
        return x[:, keep.cuda()] + xs + ys
"""
        ),
        Valid(  # the accelerator's branch reads the host buffer before moving it (a host kernel fills it): its data must be copied
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        out = torch.zeros(x.size(0), 4)
        if x.is_cuda:
            fill_on_host(out)
            out = out.cuda()
        return x + out
"""
        ),
        Valid(  # the move in the branch a run on the host takes (`if not x.is_cuda:`): nothing goes to the device
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        out = torch.zeros(x.size(0), 4)
        if not x.is_cuda:
            out = out.cuda()
        else:
            out = x.new_zeros(x.size(0), 4)
        return x + out
"""
        ),
        Valid(  # the moved copy gets a new name and the branch reads the host buffer again after it
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        out = torch.zeros(x.size(0), 4)
        if x.is_cuda:
            gpu = out.cuda()
            out.add_(1)
            x = x + gpu
        return x + out
"""
        ),
    ]

    VALID += [
        Valid(  # a move in a compound statement's header: no statement's flow is its (`n` was rebound to a sum with `x`)
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        n = torch.linspace(0, 1, steps=8)
        n = n * 0 + x
        if (0.5 * n).cuda().sum() > 0:
            return x
        return x * 2
"""
        ),
        Valid(  # `abs(w)` of a parameter that may be a tensor on the device: a builtin's result is a number only of numbers
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x, w):
        return x - (torch.ones(3) * abs(w)).cuda()
"""
        ),
        Valid(  # `self.mean` bound from a constructor parameter that nothing reads as a number: it may be a device tensor
            """
import torch
import torch.nn as nn
class Norm(nn.Module):
    def __init__(self, mean):
        super().__init__()
        self.mean = mean
    def forward(self, x):
        return x - (torch.ones(3) * self.mean).cuda()
"""
        ),
    ]

    INVALID += [
        Invalid(  # the receiver is bound to one of two project classes by an `if`/`elif`: an unconditional call in the step loop runs on every step of each class's method
            """
import torch
class StyleTrainer:
    def update(self, x):
        style = torch.randn(x.size(0), 8).cuda()
        return style
class PlainTrainer:
    def update(self, x):
        return x
def main(kind, loader):
    if kind == "style":
        trainer = StyleTrainer()
    elif kind == "plain":
        trainer = PlainTrainer()
    for step, x in enumerate(loader):
        trainer.update(x)
""",
            line=4,
            column=17,
            message="update",
            fixed="""
import torch
class StyleTrainer:
    def update(self, x):
        style = torch.randn(x.size(0), 8, device="cuda")
        return style
class PlainTrainer:
    def update(self, x):
        return x
def main(kind, loader):
    if kind == "style":
        trainer = StyleTrainer()
    elif kind == "plain":
        trainer = PlainTrainer()
    for step, x in enumerate(loader):
        trainer.update(x)
""",
            unsafe=True,
        ),
        Invalid(  # the same, the class picked by a conditional expression
            """
import torch
class StyleTrainer:
    def update(self, x):
        style = torch.randn(x.size(0), 8).cuda()
        return style
class PlainTrainer:
    def update(self, x):
        return x
def main(kind, loader):
    trainer = StyleTrainer() if kind == "style" else PlainTrainer()
    for step, x in enumerate(loader):
        trainer.update(x)
""",
            line=4,
            column=17,
            message="update",
            fixed="""
import torch
class StyleTrainer:
    def update(self, x):
        style = torch.randn(x.size(0), 8, device="cuda")
        return style
class PlainTrainer:
    def update(self, x):
        return x
def main(kind, loader):
    trainer = StyleTrainer() if kind == "style" else PlainTrainer()
    for step, x in enumerate(loader):
        trainer.update(x)
""",
            unsafe=True,
        ),
    ]

    VALID += [
        Valid(  # one alternative is a library's class: the project cannot see what that run's `update` is, so silent
            """
import torch
import trainers
class StyleTrainer:
    def update(self, x):
        style = torch.randn(x.size(0), 8).cuda()
        return style
class PlainTrainer:
    def update(self, x):
        return x
def main(kind, loader):
    if kind == "style":
        trainer = StyleTrainer()
    elif kind == "plain":
        trainer = trainers.Plain()
    for step, x in enumerate(loader):
        trainer.update(x)
"""
        ),
        Valid(  # the name is bound to one class for the loop, then to another after it: the loop only ever runs the first's method
            """
import torch
class FitRunner:
    def __init__(self, net):
        self.net = net
    def step(self, x):
        self.net(x).mean().backward()
class DumpRunner:
    def __init__(self, net):
        self.net = net
    def step(self, x):
        probe = torch.zeros(1, 4).cuda()
        torch.save(self.net(probe), "probe.pt")
def main(net, loader):
    runner = FitRunner(net)
    for x in loader:
        runner.step(x)
    runner = DumpRunner(net)
    runner.step(None)
"""
        ),
        Valid(  # one arm binds a class and calls it once; the other binds another class and holds the loop: the loop runs only its own arm's class
            """
import torch
class NoisyTrainer:
    def update(self, x):
        return torch.rand(x.size(0), 4).cuda()
class QuietTrainer:
    def __init__(self, net):
        self.net = net
    def update(self, x):
        self.net(x).mean().backward()
def main(noisy, loader, first, net):
    if noisy:
        trainer = NoisyTrainer()
        trainer.update(first)
    else:
        trainer = QuietTrainer(net)
        for x in loader:
            trainer.update(x)
"""
        ),
        Valid(  # the call runs now and then, behind a counter: not every step
            """
import torch
class StyleTrainer:
    def update(self, x):
        style = torch.randn(x.size(0), 8).cuda()
        return style
class PlainTrainer:
    def update(self, x):
        return x
def main(kind, loader):
    if kind == "style":
        trainer = StyleTrainer()
    elif kind == "plain":
        trainer = PlainTrainer()
    for step, x in enumerate(loader):
        if step % 100 == 0:
            trainer.update(x)
"""
        ),
    ]
    VALID += [
        Valid(  # `encode` returns a tuple on every `return`: `h.size()` raises, the factory never runs
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size()).cuda()
    def encode(self, x):
        return x * 2, x
"""
        ),
    ]
    INVALID += [
        Invalid(  # a sort of a host draw: its values (`[0]`, `.values`) are new tensors on the host (an ONNX NMS stub's indices)
            """
import torch
import torch.nn as nn
class Nms(nn.Module):
    def forward(self, boxes):
        idx = torch.randint(0, boxes.shape[0], (8,)).sort()[0].to(boxes.device)
        return boxes[idx]
""",
            line=5,
            column=15,
            message="torch.randint",
        ),
        Invalid(  # a comparison of a host factory with a number, wrapped in `Variable` under another name, moved in a device check
            """
import torch
import torch.nn as nn
from torch.autograd import Variable
class PairLoss(nn.Module):
    def forward(self, scores):
        mask = torch.eye(scores.size(0)) > .5
        keep = Variable(mask)
        if torch.cuda.is_available():
            keep = keep.cuda()
        return scores.masked_fill_(keep, 0).sum()
""",
            line=6,
            column=16,
        ),
        Invalid(  # a method of the class builds the mask on the host: number fills of fixed slices, a reshaping helper, masked fills
            """
import torch
import torch.nn as nn
def split_windows(x, size):
    b, h, w, c = x.shape
    x = x.view(b, h // size, size, w // size, size, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, size, size, c)
class ShiftedBlock(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = size
    def band_mask(self, h, w):
        grid = torch.zeros((1, h, w, 1))
        bands = (slice(0, -self.size), slice(-self.size, None))
        label = 0
        for rows in bands:
            grid[:, rows, :, :] = label
            label += 1
        parts = split_windows(grid, self.size)
        parts = parts.view(-1, self.size * self.size)
        mask = parts.unsqueeze(1) - parts.unsqueeze(2)
        mask = mask.masked_fill(mask != 0, float(-100.0))
        return mask
    def forward(self, x):
        mask = self.band_mask(x.shape[1], x.shape[2]).to(x.device)
        return x + mask.sum()
""",
            line=24,
            column=16,
            message="self.band_mask()",
        ),
        Invalid(  # a loss object called per step in the branch a configuration dict's entry picks (`hyp["loss_ota"]`, a key's presence)
            """
import torch
class TargetLoss:
    def __call__(self, preds, targets):
        device = targets.device
        layers = []
        for i, p in enumerate(preds):
            layers.append(torch.rand(len(p), 4).to(device))
        return sum(l.sum() for l in layers)
class PlainLoss:
    def __call__(self, preds, targets):
        return preds[0].sum()
def train(hyp, model, loader, optimizer):
    loss_ota = TargetLoss()
    loss_plain = PlainLoss()
    for imgs, targets in loader:
        preds = model(imgs)
        if "loss_ota" not in hyp or hyp["loss_ota"] == 1:
            loss = loss_ota(preds, targets)
        else:
            loss = loss_plain(preds, targets)
        loss.backward()
        optimizer.step()
""",
            line=7,
            column=27,
            fixed="""
import torch
class TargetLoss:
    def __call__(self, preds, targets):
        device = targets.device
        layers = []
        for i, p in enumerate(preds):
            layers.append(torch.rand(len(p), 4, device=device))
        return sum(l.sum() for l in layers)
class PlainLoss:
    def __call__(self, preds, targets):
        return preds[0].sum()
def train(hyp, model, loader, optimizer):
    loss_ota = TargetLoss()
    loss_plain = PlainLoss()
    for imgs, targets in loader:
        preds = model(imgs)
        if "loss_ota" not in hyp or hyp["loss_ota"] == 1:
            loss = loss_ota(preds, targets)
        else:
            loss = loss_plain(preds, targets)
        loss.backward()
        optimizer.step()
""",
            unsafe=True,
        ),
    ]
    VALID += [
        Valid(  # the helper writes the labels (data) into its zeros: made on the device, the labels would be copied instead
            """
import torch
def one_hot(labels, n):
    hot = torch.zeros(len(labels), n)
    hot[torch.arange(len(labels)), labels] = 1
    hot = hot.view(len(labels), n)
    return hot
def train(model, loader, optimizer):
    for x, y in loader:
        loss = (model(x) - one_hot(y, 10).cuda()).pow(2).sum()
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # the method rebinds its mask in a branch (it may return it moved), or a subclass has its own: cannot tell, silent
            """
import torch
import torch.nn as nn
class Block(nn.Module):
    def band_mask(self, h, w, device=None):
        mask = torch.zeros((1, h, w, 1))
        if device is not None:
            mask = mask.to(device)
        return mask
    def grid(self, h, w):
        return torch.zeros((1, h, w, 1))
    def forward(self, x):
        mask = self.band_mask(x.shape[1], x.shape[2]).to(x.device)
        grid = self.grid(x.shape[1], x.shape[2]).to(x.device)
        return x + mask.sum() + grid.sum()
class CachedBlock(Block):
    def grid(self, h, w):
        return self.cache[h]
"""
        ),
        Valid(  # a comparison of two tensors, a sort of a tensor the model gave: where those are, not a fresh host tensor
            """
import torch
import torch.nn as nn
class Head(nn.Module):
    def forward(self, x, scores):
        keep = (torch.eye(x.size(0)) > scores).cuda()
        order = scores.sort()[0].to(x.device)
        return x.masked_fill(keep, 0) + order.sum()
"""
        ),
        Valid(  # the wrapped mask is read again after the wrap: the host tensor itself is needed
            """
import torch
import torch.nn as nn
from torch.autograd import Variable
class PairLoss(nn.Module):
    def forward(self, scores):
        mask = torch.eye(scores.size(0)) > .5
        keep = Variable(mask)
        if torch.cuda.is_available():
            keep = keep.cuda()
        self.log(mask)
        return scores.masked_fill_(keep, 0).sum()
"""
        ),
        Valid(  # a flag of a configuration dict (`if hyp["mixup"]:`) opts in: the call behind it is no configured choice
            """
import torch
def mixup(x):
    return x + torch.rand(x.size(0)).to(x.device)
def train(hyp, model, loader, optimizer):
    for imgs, targets in loader:
        if hyp["mixup"]:
            imgs = mixup(imgs)
        loss = model(imgs, targets)
        loss.backward()
        optimizer.step()
"""
        ),
    ]
    INVALID += [
        Invalid(  # unpacked: `h` is the tuple's first element, a tensor
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h, _ = self.encode(x)
        return h + torch.randn(h.size()).cuda()
    def encode(self, x):
        return x * 2, x
""",
            line=6,
            column=20,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h, _ = self.encode(x)
        return h + torch.randn(h.size(), device="cuda")
    def encode(self, x):
        return x * 2, x
""",
            unsafe=True,
        ),
        Invalid(  # one `return` gives a tensor: `h` may be one
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size()).cuda()
    def encode(self, x, both=False):
        if both:
            return x * 2, x
        return x * 2
""",
            line=6,
            column=20,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size(), device="cuda")
    def encode(self, x, both=False):
        if both:
            return x * 2, x
        return x * 2
""",
            unsafe=True,
        ),
        Invalid(  # a subclass of the file overrides `encode`: `self.encode` may return a tensor
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size()).cuda()
    def encode(self, x):
        return x * 2, x
class Plain(Net):
    def encode(self, x):
        return x * 2
""",
            line=6,
            column=20,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size(), device="cuda")
    def encode(self, x):
        return x * 2, x
class Plain(Net):
    def encode(self, x):
        return x * 2
""",
            unsafe=True,
        ),
        Invalid(  # an alias of the class is a base: `Flat` overrides `encode`
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size()).cuda()
    def encode(self, x):
        return x * 2, x
Base = Net
class Flat(Base):
    def encode(self, x):
        return x * 2
""",
            line=6,
            column=20,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size(), device="cuda")
    def encode(self, x):
        return x * 2, x
Base = Net
class Flat(Base):
    def encode(self, x):
        return x * 2
""",
            unsafe=True,
        ),
        Invalid(  # a subscripted base names the class: `Flat` overrides `encode`
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size()).cuda()
    def encode(self, x):
        return x * 2, x
class Flat(Net[int]):
    def encode(self, x):
        return x * 2
""",
            line=6,
            column=20,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size(), device="cuda")
    def encode(self, x):
        return x * 2, x
class Flat(Net[int]):
    def encode(self, x):
        return x * 2
""",
            unsafe=True,
        ),
        Invalid(  # the class is bound again under its own name, derived from the first
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size()).cuda()
    def encode(self, x):
        return x * 2, x
class Net(Net):
    def encode(self, x):
        return x * 2
""",
            line=6,
            column=20,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size(), device="cuda")
    def encode(self, x):
        return x * 2, x
class Net(Net):
    def encode(self, x):
        return x * 2
""",
            unsafe=True,
        ),
        Invalid(  # another class borrows `forward`: there `self.encode` is its own, returning a tensor
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size()).cuda()
    def encode(self, x):
        return x * 2, x
class Flat(nn.Module):
    forward = Net.forward
    def encode(self, x):
        return x * 2
""",
            line=6,
            column=20,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size(), device="cuda")
    def encode(self, x):
        return x * 2, x
class Flat(nn.Module):
    forward = Net.forward
    def encode(self, x):
        return x * 2
""",
            unsafe=True,
        ),
        Invalid(  # `type` with three arguments makes a class whose `encode` returns a tensor
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size()).cuda()
    def encode(self, x):
        return x * 2, x
Flat = type("Flat", (Net,), {"encode": lambda self, x: x * 2})
""",
            line=6,
            column=20,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size(), device="cuda")
    def encode(self, x):
        return x * 2, x
Flat = type("Flat", (Net,), {"encode": lambda self, x: x * 2})
""",
            unsafe=True,
        ),
        Invalid(  # `setattr` may give an instance its own `encode`
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size()).cuda()
    def encode(self, x):
        return x * 2, x
def flatten(net):
    setattr(net, "encode", lambda x: x * 2)
""",
            line=6,
            column=20,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        h = self.encode(x)
        return h + torch.randn(h.size(), device="cuda")
    def encode(self, x):
        return x * 2, x
def flatten(net):
    setattr(net, "encode", lambda x: x * 2)
""",
            unsafe=True,
        ),
        Invalid(  # `h` is a `**` parameter too: bound twice, the read before the call is a dict's
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x, **h):
        z = torch.randn(h.get("n", 4)).cuda()
        h = self.encode(x)
        return z, h
    def encode(self, x):
        return x * 2, x
""",
            line=5,
            column=13,
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x, **h):
        z = torch.randn(h.get("n", 4), device="cuda")
        h = self.encode(x)
        return z, h
    def encode(self, x):
        return x * 2, x
""",
            unsafe=True,
        ),
        Invalid(  # moved in the body of `if self.device_id is not None:`, the branch of a run given accelerators
            """
import torch
import torch.nn as nn
class Margin(nn.Module):
    def __init__(self, device_id=None):
        super().__init__()
        self.device_id = device_id
    def forward(self, cosine):
        one_hot = torch.zeros(cosine.size())
        if self.device_id is not None:
            one_hot = one_hot.cuda(self.device_id[0])
        return one_hot * cosine
""",
            line=8,
            column=19,
            message="moved by a later",
        ),
        Invalid(  # moved in the arm of a conditional expression that a run on the accelerator takes
            """
import torch
import torch.nn as nn
class Margin(nn.Module):
    def forward(self, cosine):
        one_hot = torch.zeros(cosine.size())
        one_hot = one_hot.cuda() if cosine.is_cuda else one_hot
        return one_hot * cosine
""",
            line=5,
            column=19,
            message="moved by a later",
        ),
        Invalid(  # a legacy constructor of a list of one range (`arange`'s numbers as one row), plus an attribute read only as a number (a slice's bound included)
            """
import torch
import torch.nn as nn
class Queue(nn.Module):
    def __init__(self, size=64):
        super().__init__()
        self.size = size
        self.offset = 0
    def forward(self, p):
        n = p.shape[0]
        window = p[:, self.offset:self.offset + n]
        self.offset = (self.offset + n) % self.size
        label = torch.LongTensor([range(n)]) + self.offset
        label = label.squeeze().cuda()
        return window, label
""",
            line=12,
            column=17,
            message="moved by a later",
        ),
        Invalid(  # a row of a range (`[range(n)]`, a 1 x n tensor): the advice keeps the row's shape
            """
import torch
def fit(net, loader):
    for x, y in loader:
        ids = torch.LongTensor([range(x.size(0))]).cuda()
        net(x.cuda(), ids)
""",
            line=4,
            column=15,
            message="device=...).unsqueeze(0)`",
        ),
        Invalid(  # in-place arithmetic with a number, then joined into `image`, which the next statement moves
            """
import torch
def test(model, images, device):
    sigma = 15
    for image in images:
        noise = torch.ones(1, 1, image.size(2), image.size(3)).mul_(sigma / 255.0)
        image = torch.cat((image, noise), dim=1)
        image = image.to(device)
        output = model(image)
""",
            line=5,
            column=17,
            message="moved by a later",
        ),
        Invalid(  # in a function nested in a generator, called unconditionally in its loop over the loader (the project pass sees no nested function)
            """
import torch
def mixed(loader, alpha):
    def mix(x):
        perm = torch.randperm(x.size(0)).cuda()
        return alpha * x + (1 - alpha) * x[perm]
    for x, y in loader:
        yield mix(x.cuda()), y
""",
            line=4,
            column=16,
            message="of its enclosing function",
            fixed="""
import torch
def mixed(loader, alpha):
    def mix(x):
        perm = torch.randperm(x.size(0), device="cuda")
        return alpha * x + (1 - alpha) * x[perm]
    for x, y in loader:
        yield mix(x.cuda()), y
""",
            unsafe=True,
        ),
    ]

    VALID += [
        Valid(  # the target is a host tensor its function builds (`torch.LongTensor` of literal numbers, never rebound): `.type_as(src)` only casts
            """
import torch
def decode(model, steps):
    src = torch.LongTensor([[1, 2, 3, 4]])
    out = torch.zeros(1, 1).type_as(src)
    for i in range(steps):
        logits = model(src, out, torch.ones(1, i + 1).type_as(src.data))
        out = torch.cat([out, torch.empty(1, 1).type_as(src.data).fill_(logits.argmax())], dim=1)
    return out
def run(model):
    for _ in range(10):
        decode(model, 9)
"""
        ),
        Valid(  # `.to(w.device)` with `w` built with `device="cpu"` written in the call: on the host whatever the default device, nothing moves
            """
import torch
def smooth(model, loader, optimizer):
    weights = torch.tensor([0.25, 0.5, 0.25], device="cpu")
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        noise = torch.randn(3).to(weights.device)
        loss = model(x, weights + noise).mean()
        loss.backward()
        optimizer.step()
"""
        ),
    ]

    INVALID += [
        Invalid(  # `torch.ones(3)` follows torch's default device, which another file may set to the accelerator: where the target lives is unknown
            """
import torch
def smooth(model, loader, optimizer):
    weights = torch.ones(3)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        noise = torch.randn(3).to(weights.device)
        loss = model(x, weights + noise).mean()
        loss.backward()
        optimizer.step()
""",
            line=6,
            column=17,
            unsafe=True,
            fixed="""
import torch
def smooth(model, loader, optimizer):
    weights = torch.ones(3)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        noise = torch.randn(3, device=weights.device)
        loss = model(x, weights + noise).mean()
        loss.backward()
        optimizer.step()
""",
        ),
        Invalid(  # the host-built target's `.data` is moved through a tuple assignment: it may be on the device
            """
import torch
def smooth(model, loader, optimizer):
    weights = torch.FloatTensor([0.25, 0.5, 0.25])
    weights.data, scale = weights.data.cuda(), 2
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        noise = torch.randn(3).to(weights.device)
        loss = model(x, weights + noise).mean()
        loss.backward()
        optimizer.step()
""",
            line=7,
            column=17,
            unsafe=True,
            fixed="""
import torch
def smooth(model, loader, optimizer):
    weights = torch.FloatTensor([0.25, 0.5, 0.25])
    weights.data, scale = weights.data.cuda(), 2
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        noise = torch.randn(3, device=weights.device)
        loss = model(x, weights + noise).mean()
        loss.backward()
        optimizer.step()
""",
        ),
        Invalid(  # an alias of the host-built target has its `.data` moved: the target may be on the device
            """
import torch
def smooth(model, loader, optimizer):
    weights = torch.FloatTensor([0.25, 0.5, 0.25])
    same = weights
    same.data = same.data.cuda()
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        noise = torch.randn(3).to(weights.device)
        loss = model(x, weights + noise).mean()
        loss.backward()
        optimizer.step()
""",
            line=8,
            column=17,
            unsafe=True,
            fixed="""
import torch
def smooth(model, loader, optimizer):
    weights = torch.FloatTensor([0.25, 0.5, 0.25])
    same = weights
    same.data = same.data.cuda()
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        noise = torch.randn(3, device=weights.device)
        loss = model(x, weights + noise).mean()
        loss.backward()
        optimizer.step()
""",
        ),
        Invalid(  # the host-built target is handed to a helper called for its effect, which may move its `.data`
            """
import torch
def to_device_(t):
    t.data = t.data.cuda()
def smooth(model, loader, optimizer):
    weights = torch.FloatTensor([0.25, 0.5, 0.25])
    to_device_(weights)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        noise = torch.randn(3).to(weights.device)
        loss = model(x, weights + noise).mean()
        loss.backward()
        optimizer.step()
""",
            line=9,
            column=17,
            unsafe=True,
            fixed="""
import torch
def to_device_(t):
    t.data = t.data.cuda()
def smooth(model, loader, optimizer):
    weights = torch.FloatTensor([0.25, 0.5, 0.25])
    to_device_(weights)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        noise = torch.randn(3, device=weights.device)
        loss = model(x, weights + noise).mean()
        loss.backward()
        optimizer.step()
""",
        ),
        Invalid(  # the parameter's callers all give it a host-built local, yet a parameter stays unknown (a caller may be out of sight)
            """
import torch
def decode(model, src, steps):
    out = torch.zeros(1, 1).type_as(src)
    for i in range(steps):
        out = torch.cat([out, torch.empty(1, 1).type_as(src.data).fill_(model(src, out).argmax())], dim=1)
    return out
def demo(model):
    src = torch.LongTensor([[0, 1, 2, 3]])
    print(decode(model, src, steps=4))
""",
            line=5,
            column=31,
            message="on every loop iteration",
        ),
    ]

    VALID += [
        Valid(  # the accelerator's arm is never taken (its test is a module flag only ever False): a host cast
            """
import torch
import torch.nn as nn
USE_CUDA = False
Floats = torch.cuda.FloatTensor if USE_CUDA else torch.FloatTensor
class Grid(nn.Module):
    def forward(self, x):
        grid = torch.linspace(0, 1, x.size(-1)).type(Floats)
        return x + grid
"""
        ),
        Valid(  # a star import after the choice may rebind the type name: which type it holds is unknown
            """
import torch
import torch.nn as nn
Floats = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
from settings import *
class Grid(nn.Module):
    def forward(self, x):
        grid = torch.linspace(0, 1, x.size(-1)).type(Floats)
        return x + grid
"""
        ),
        Valid(  # the type string of a tensor the caller holds on the host: `.type(dtype)` of a parameter is not taken for a move
            """
import torch
import torch.nn as nn
class Head(nn.Module):
    def forward(self, x):
        lengths = torch.zeros(x.size(0))
        return self.decode(x, lengths.type())
    def decode(self, out, dtype):
        offsets = torch.arange(out.size(-1)).type(dtype)
        return out + offsets
"""
        ),
        Valid(  # every type the local may hold is a host type: the cast changes the dtype, nothing moves
            """
import torch
for x, y in train_loader:
    Kind = torch.DoubleTensor if x.dtype == torch.float64 else torch.FloatTensor
    mask = torch.ones(x.size(0), 1).type(Kind)
    loss = criterion(model(x) * mask, y)
    loss.backward()
"""
        ),
        Valid(  # a cast to a dtype or to the host's tensor type keeps the tensor on the host
            """
import torch
for x, y in train_loader:
    mask = torch.ones(x.size(0), 1).type(torch.float32)
    scale = torch.ones(x.size(0), 1).type(torch.FloatTensor)
    loss = criterion(model(x) * mask * scale, y)
    loss.backward()
"""
        ),
        Valid(  # the type is a parameter the callers choose: it may be the host's
            """
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def forward(self, x, Kind=torch.cuda.FloatTensor):
        grid = torch.linspace(0, 1, x.size(-1)).type(Kind)
        return x + grid
"""
        ),
        Valid(  # one arm of the choice is no tensor type (a dtype read off the input): the cast may not move
            """
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def forward(self, x):
        Kind = torch.cuda.FloatTensor if x.is_cuda else x.dtype
        grid = torch.linspace(0, 1, x.size(-1)).type(Kind)
        return x + grid
"""
        ),
        Valid(  # one caller passes a dtype: the parameter may hold no tensor type, and the cast may move nothing
            """
import torch
import torch.nn as nn
class Head(nn.Module):
    def forward(self, x):
        return self.decode(x, torch.float32) + self.decode(x, x.type())
    def decode(self, out, dtype):
        offsets = torch.arange(out.size(-1)).type(dtype)
        return out + offsets
"""
        ),
        Valid(  # the method rebinds the parameter before the cast: not the callers' tensor type
            """
import torch
import torch.nn as nn
class Head(nn.Module):
    def forward(self, x):
        return self.decode(x, x.type())
    def decode(self, out, dtype):
        dtype = torch.float64 if out.dtype == torch.float64 else torch.float32
        offsets = torch.arange(out.size(-1)).type(dtype)
        return out + offsets
"""
        ),
        Valid(  # a function rebinds the module's type name through `global`: which type it holds is unknown
            """
import torch
Floats = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
def to_host():
    global Floats
    Floats = pick_type()
for x, y in train_loader:
    mask = torch.ones(x.size(0), 1).type(Floats)
    loss = criterion(model(x) * mask, y)
    loss.backward()
"""
        ),
    ]
    VALID += [
        Valid(  # a helper's zeros get labels written in by an in-place method (a one-hot): data, not a fresh host tensor
            """
import torch
import torch.nn as nn
def encode(labels, width):
    table = torch.zeros(len(labels), width)
    table.scatter_(1, labels.unsqueeze(1), 1.0)
    return table
class Head(nn.Module):
    def forward(self, x, labels):
        return x * encode(labels, 8).cuda()
"""
        ),
        Valid(  # a method copies a caller's tensor into its zeros, then reshapes them: data, not a fresh host tensor
            """
import torch
import torch.nn as nn
class Head(nn.Module):
    def grid(self, rows, cols, values):
        g = torch.zeros(rows, cols)
        g.copy_(values)
        g = g.flatten()
        return g
    def forward(self, x):
        return x + self.grid(2, 3, x[:2, :3]).to(x.device).sum()
"""
        ),
        Valid(  # a cached method (any decorator): a call may give back a tensor made on an earlier call, not a new one
            """
import functools
import torch
import torch.nn as nn
class Head(nn.Module):
    @functools.lru_cache()
    def band(self, n):
        return torch.ones(n, n).triu()
    def forward(self, x):
        return x @ self.band(x.shape[-1]).to(x.device)
"""
        ),
    ]

    INVALID += [
        Invalid(  # one call gives the parameter a batch moved to the device: where the target lives is unknown
            """
import torch
def decode(model, src, steps):
    out = torch.zeros(1, 1).type_as(src)
    for i in range(steps):
        out = torch.cat([out, torch.empty(1, 1).type_as(src.data).fill_(model(src, out).argmax())], dim=1)
    return out
def demo(model):
    src = torch.LongTensor([[0, 1, 2, 3]])
    print(decode(model, src, steps=4))
def evaluate(model, loader):
    for x in loader:
        decode(model, x, 4)
""",
            line=5,
            column=31,
            message="on every loop iteration",
        ),
        Invalid(  # the function is read otherwise than called (`run = decode`): its callers are not all seen
            """
import torch
def decode(model, src, steps):
    out = src[:, :1]
    for i in range(steps):
        out = torch.cat([out, torch.empty(1, 1).type_as(src.data).fill_(model(src, out).argmax())], dim=1)
    return out
def demo(model):
    src = torch.LongTensor([[0, 1, 2, 3]])
    print(decode(model, src, steps=4))
run = decode
""",
            line=5,
            column=31,
            message="on every loop iteration",
        ),
        Invalid(  # the host-built target is rebound to its move: where it lives is no longer the host
            """
import torch
def decode(model, steps):
    src = torch.LongTensor([[1, 2, 3, 4]])
    src = src.cuda()
    out = src[:, :1]
    for i in range(steps):
        logits = model(src, out)
        out = torch.cat([out, torch.empty(1, 1).type_as(src.data).fill_(logits.argmax())], dim=1)
    return out
""",
            line=8,
            column=31,
            message="on every loop iteration",
        ),
        Invalid(  # `torch.tensor(values)` of a parameter: the data may be a device tensor, whose device it keeps
            """
import torch
def smooth(model, loader, optimizer, values):
    weights = torch.tensor(values)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        noise = torch.randn(3).to(weights.device)
        loss = model(x, weights + noise).mean()
        loss.backward()
        optimizer.step()
""",
            line=6,
            column=17,
            unsafe=True,
            fixed="""
import torch
def smooth(model, loader, optimizer, values):
    weights = torch.tensor(values)
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        noise = torch.randn(3, device=weights.device)
        loss = model(x, weights + noise).mean()
        loss.backward()
        optimizer.step()
""",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._in_helpers: list[_Candidate] = []
        self._functions: dict[tuple, cst.FunctionDef] = {}
        self._nested: set[tuple] = set()  # keys of functions defined inside another function (`mixup` in a loader's generator)
        self._defined_again: set[tuple] = set()  # keys this file defines more than once
        self._bound_earlier: dict[int, list[cst.BaseExpression]] = {}  # id(move) -> the values `name` may hold (a configured chain: several)
        self._assigned: list[list[cst.BaseExpression]] = []  # the targets of the assignments being visited
        self._cast_before_move: set[int] = set()  # id of a `.type_as(x)` that a `.to(d)` / `.cuda()` moves on
        self._overrides: set[int] = set()  # id of an `if` that picks a value by the configuration (iteration.configured_overrides)
        self._blocks: list[cst.IndentedBlock] = []  # the blocks being visited, outermost first
        self._flows: dict[int, Flow] = {}  # id of a statement or block -> host_flow.Flow there (computed when first asked)
        self._flowed: set[int] = set()  # ids of the blocks whose statements' flows are in `_flows`
        self._statement: Optional[cst.SimpleStatementLine] = None
        self._reported: set[int] = set()  # ids of the factories and bound values reported (two moves may reach one: names, unpacking)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._assigned.append([t.target for t in node.targets])

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._assigned.pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(node)
        self._overrides.update(map(id, configured_overrides(node.body)))  # `ff = A` / `if opt.PCB: ff = B`
        for value, move in later_moves(node.body, self._holds_factory, self._moved_by_helper, self.ctx.resolve):  # `z = torch.rand(n)` ... `z = z.cuda()`
            self._bound_earlier.setdefault(id(move), []).append(value)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement = node

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._statement = None  # a compound statement's header (`if (0.5 * n).cuda().sum() > 0:`) has no flow of its own

    def _holds_factory(self, value: cst.BaseExpression) -> bool:
        """`holds_factory` for a value bound in the block being visited, with the flow of the function's
        names where the value reads one (`window = 0.54 - 0.46 * torch.cos(2 * math.pi * n / N)`)."""
        return holds_factory(value, self.ctx, self._flow_of_bound(value) if self._reads_names(value) else EMPTY)

    def _reads_names(self, value: cst.BaseExpression) -> bool:
        """Does `value` read a name its function binds to a value with a factory call in it, or to one
        computed from such a name (`host_flow.factory_names`)?  The gate before the flow is computed."""
        function = self.ctx.function_node
        if function is None:
            return False
        names = self.ctx.memo(("ml013-factory-names", id(function)), lambda: factory_names(function, self._is_factory))
        return bool(names) and any(type(n) is cst.Name and n.value in names for n in code_descendants(value))  # type: ignore[attr-defined]

    def _is_factory(self, call: cst.Call) -> bool:
        return factory_kind(call, self.ctx) is not None

    def _function_level(self) -> Optional[int]:
        """The level in `self._blocks` of the body of the function being visited: flows start there
        (names of the class body or of an outer function are not the function's locals, and their
        facts are asked of the function being visited).  None outside a function or where its body
        is no block (`def f(): return ...`)."""
        function = self.ctx.function_node
        if function is None:
            return None
        return next((level for level in range(len(self._blocks) - 1, -1, -1) if self._blocks[level] is function.body), None)

    def _block_flows(self, level: int) -> dict[int, Flow]:
        """The flows at the statements of `self._blocks[level]` (and at the blocks inside them),
        computed once: the entry flow is the one its enclosing block gives it, up to the function's
        body, whose entry is EMPTY.  `level` is at or inside `_function_level()`."""
        block = self._blocks[level]
        if id(block) not in self._flowed:
            if block is not self.ctx.function_node.body:  # type: ignore[union-attr]
                self._block_flows(level - 1)
            entry = self._flows.get(id(block), EMPTY)
            holds = lambda value, flow: holds_factory(value, self.ctx, flow)  # noqa: E731
            self._flows.update(statement_flows(block.body, entry, holds, self.ctx))
            self._flowed.add(id(block))
        return self._flows

    def _flow_here(self) -> Flow:
        """The flow at the statement being visited (a statement of the innermost block)."""
        if self._statement is None or self._function_level() is None:
            return EMPTY
        return self._block_flows(len(self._blocks) - 1).get(id(self._statement), EMPTY)

    def _moved_by_helper(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """What `call` moves besides `.cuda()` / `.to()` / `.type_as()`: a project helper's argument, or
        the receiver of a cast to an accelerator's type (`z.type(torch.cuda.FloatTensor)`)."""
        found = moved_argument(call, self.ctx)
        if found is not None:
            return found[0]
        if cuda_type_cast(call, self.ctx):
            return call.func.value  # type: ignore[attr-defined]
        return None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        key = self.ctx.function_key  # the Context has entered the function already
        if key is not None:
            if key in self._functions:
                self._defined_again.add(key)  # two functions so named: a call may reach either
            self._functions.setdefault(key, node)
            if any(frame.kind == "function" for frame in self.ctx.frames[:-1]):
                self._nested.add(key)  # the project pass summarises no nested function: its callers are this file's

    def visit_Call(self, node: cst.Call) -> None:
        """A move (`.cuda()`, `.to(d)`, a cast that moves, a project helper's move): what it moves."""
        ctx = self.ctx
        func = node.func
        helper = None
        type_as = type_as_argument(node)
        if isinstance(func, cst.Attribute) and func.attr.value in ("cuda", "to"):
            moved = func.value
            self._cast_before_move.update(map(id, moving_casts_under(moved)))
        elif cuda_type_cast(node, ctx):  # `torch.zeros(n).type(torch.cuda.FloatTensor)`: a cast and a move
            moved = func.value  # type: ignore[attr-defined]
        elif type_as is not None:  # `torch.ones(n).type_as(x)`: a cast that moves to `x`'s device too
            if id(node) in self._cast_before_move:
                return  # `.type_as(x).to(d)`: the outer move is the one reported
            moved = func.value  # type: ignore[attr-defined]
        else:  # a project helper that returns its argument moved (`async_copy_to(x, gpu)`)
            helper = moved_argument(node, ctx)
            if helper is None:
                return
            moved = helper[0]
        # `(0.54 - 0.46 * torch.cos(n)).cuda()` needs the flow of the function's names; a name moved alone is `later_moves`'
        flows = type(through_reshapes(moved)) is not cst.Name and self._reads_names(moved)
        found = factory_under(moved, ctx, self._flow_here() if flows else EMPTY)
        earlier = self._bound_earlier.get(id(node), ())
        if found is not None and not (found.through_name and earlier):  # a name moved alone: quoted as bound (`eps = ... .normal_()`)
            fixable = found.fixable and helper is None  # `device=` is a helper's to give, not this call's
            self._consider(node, found.call, fixable, found.call if found.through_name else None, helper, type_as)
            return
        if found is not None and not any(factory_under(at, ctx, self._flow_of_bound(at) if self._reads_names(at) else EMPTY) for at in earlier):
            self._consider(node, found.call, False, found.call, helper, type_as)
            return
        for at in earlier:  # `z = torch.rand(n)` ... `z = z.cuda()`
            inner = factory_under(at, ctx, self._flow_of_bound(at) if self._reads_names(at) else EMPTY)
            if inner is not None:
                self._consider(node, inner.call, False, inner.call if inner.through_name else at, helper, type_as)  # no fix across statements

    def _flow_of_bound(self, value: cst.BaseExpression) -> Flow:
        """The flow at the statement that bound `value` (a statement of a block being visited)."""
        floor = self._function_level()
        if floor is None:
            return EMPTY
        for level in range(len(self._blocks) - 1, floor - 1, -1):
            for statement in self._blocks[level].body:
                if type(statement) is cst.SimpleStatementLine and any(type(s) is cst.Assign and s.value is value for s in statement.body):
                    return self._block_flows(level).get(id(statement), EMPTY)  # the binding found first: no block beyond it is computed
        return EMPTY

    def _consider(self, node: cst.Call, factory: cst.Call, fixable: bool, at: Optional[cst.CSTNode], helper, type_as) -> None:
        """Judge the factory that the move `node` applies to (directly, or to the value `at` a name
        was bound to earlier): report it where it runs on every step."""
        ctx = self.ctx
        name = factory_kind(factory, ctx)
        if name is None or not made_on_host(factory, name):
            return
        if raising_tuple_read(factory, ctx) is not None:
            return  # `torch.randn(h.size())` with `h = self.encode(x)` a tuple: the factory never runs
        if name in LEGACY_SIZED_CONSTRUCTORS or from_helper(name):
            fixable = False  # legacy constructors take no `device=` for an accelerator, nor does a helper's factory here
        target = destination(node, helper, type_as, ctx)
        if target is None:
            return
        device, device_alone = target  # `device=` alone would not give the factory `x`'s dtype (`.type_as(x)`, `.to(x)`)
        if follows_host_tensor(device, ctx):
            return  # `.type_as(src)` with `src = torch.LongTensor([[1, 2]])`: a host tensor's device, nothing moves
        if self._assigned and statement_fills_cache(self._assigned[-1], ctx):  # `if self.mask is None: self.mask = torch.ones(n).cuda()`: once, then kept
            return
        if any(self._opt_in(condition, node) for condition, _ in ctx.frame.conditions):
            return  # `if init:` of `forward(self, x, init=False)`, `if self.lu:` of `__init__(self, lu=False)`: a special call, not every one
        judged = (node, factory)  # both the move and the factory: a chain doing them in every branch runs them on every pass
        candidate = _Candidate(node, factory, name, device, fixable and device_alone, ctx.function_key, every_call(ctx, self._configured, judged), at)
        if ctx.class_name is not None and ctx.function_node is not None and ctx.function_node.name.value == "forward":
            self._report(candidate, "inside `forward`")
        elif ctx.function_node is not None and ctx.model.function_role(ctx.function_node) == "plotting":
            return  # a plotting function: not a cost of the training step
        elif ctx.in_loop and every_training_step(ctx, self._configured, judged) and ctx.model.loop_scope(ctx.loop).kind == "step":
            if not moves_nothing(device, ctx) and not follows_host_batch(device, candidate.move, ctx):
                self._report(candidate, "on every loop iteration" if every_iteration(ctx, self._configured, judged) else "on every training step its branch takes")
        elif ctx.function_key is not None:
            self._in_helpers.append(candidate)

    def _opt_in(self, condition: cst.CSTNode, move: cst.Call) -> bool:
        """Does `condition`, an `if` around `move`, test a flag parameter defaulting to False
        (`iteration.opt_in_parameter`) that some call of the function leaves off?  Every call turning
        it on (`sinc(..., cuda)` with `cuda = x.is_cuda`: the project pass's `flag_on`) makes its
        branch run as the callers do.  Or is `move` in the body of `if self.lu:`, an attribute that
        keeps such a flag of the constructor, which some construction leaves off
        (`iteration.attribute_flag_off`)?  (Its `else` is the ordinary instance's.)"""
        test = condition.test  # type: ignore[attr-defined]
        if opt_in_parameter(test, self.ctx.function_node) is not None and not flag_turned_on(test, self.ctx):
            return True
        if type(condition) is not cst.If or not attribute_flag_off(test, self.ctx):
            return False
        return any(inner is move for inner in code_descendants(condition.body))

    def _configured(self, node: cst.CSTNode) -> bool:
        return configured_branch(node, self.ctx, self._overrides)

    def finish(self, facts) -> None:  # `facts`: the traversal's; the project pass's `per_step` says what runs per step
        if not self._in_helpers:
            return
        passes = {key for key, node in self._functions.items() if runs_own_pass(node)}
        project = self.ctx.project
        nested_per_step = None  # this file's step loops' unconditional callees, for nested functions (asked once)
        for candidate in self._in_helpers:
            key = candidate.function
            helper = f"`{key[1]}()` (its `__init__`)" if key[0] == "method" and key[2] == "__init__" else f"`{key[-1]}()`"
            if project.runs_per_forward(key):  # a class's `forward`, in this file or another, calls it (or constructs its class)
                self._report(candidate, f"in {helper}, which `forward` calls")
            elif not candidate.unconditional or key in passes:
                continue
            elif key in self._functions and self.ctx.model.function_role(self._functions[key]) == "plotting":
                continue
            elif key[0] == "method" and key[2] in _BATCH_HOOKS:  # its own body (a framework's hook runs on the device it chose)
                self._report(candidate, f"in {helper}, {_HOOK}")
            elif (runs_on := project.per_step_of(key)) is not None:  # a loop or a per-batch hook, maybe in another file
                if not moves_nothing_in_project(candidate.device, self.ctx):
                    self._report(candidate, f"in {helper}, which runs on {runs_on}")
            elif key in self._nested and key not in self._defined_again:  # `def mixup(...)` inside a generator, called in its loop over the loader
                if nested_per_step is None:
                    nested_per_step = step_loop_called_functions(facts, lambda loop: self.ctx.model.loop_scope(loop).kind == "step")
                if key in nested_per_step and not moves_nothing_in_project(candidate.device, self.ctx):
                    self._report(candidate, f"in {helper}, which runs on every iteration of a training/evaluation loop of its enclosing function")

    def _report(self, candidate: "_Candidate", where: str) -> None:
        node, factory, name, device = candidate.move, candidate.factory, candidate.name, candidate.device
        if id(factory) in self._reported or (candidate.bound is not None and id(candidate.bound) in self._reported):
            return  # two moves reach one factory: through names (or one unpacked value: `yy, xx = torch.meshgrid(...)`), or a cast that moves then a later move
        self._reported.add(id(factory))
        if candidate.bound is not None:
            self._reported.add(id(candidate.bound))
        module = self.ctx.module
        fix = None
        if move_is_only_device(node) and device_keyword_joins(factory) and candidate.wrapper_fixable:
            new_factory = append_keyword(factory, "device", device)
            receiver = node.func.value  # type: ignore[attr-defined]
            new = new_factory if receiver is factory else receiver.deep_replace(factory, new_factory)
            fix = self.replace(
                node,
                new,
                f"Create it on the device: `torch.{name}(..., device={module.code_for_node(device)})`",
                safe=same_values_on_device(factory, name) and cuda_target_certain(node),
            )
        shown = node if candidate.bound is None else candidate.bound
        text = f"`{shorten(module.code_for_node(shown), 60)}`"
        if candidate.bound is not None:  # bound to a name, moved by a later statement
            text += f", moved by a later `{shorten(module.code_for_node(node), 60)}`,"
        self.report(
            shown,
            f"{text} {where} creates the tensor in host memory and then copies it to the device each "
            f"time; create it there: {_advice(name, factory, self.ctx)}",
            fix,
        )


def _advice(name: str, factory: cst.Call, ctx) -> str:
    if from_helper(name):
        return f"pass the device to `{name}` and give the torch factory in it `device=`"
    if name in LEGACY_SIZED_CONSTRUCTORS and len(factory.args) == 1 and counts_range(factory.args[0].value, ctx):
        row = ".unsqueeze(0)" if isinstance(factory.args[0].value, (cst.List, cst.Tuple)) else ""  # `[range(n)]`: a 1 x n row
        return f"`torch.arange(..., dtype=torch.{LEGACY_SIZED_CONSTRUCTORS[name]}, device=...){row}`"
    if name in LEGACY_SIZED_CONSTRUCTORS:
        return f"`torch.empty(..., dtype=torch.{LEGACY_SIZED_CONSTRUCTORS[name]}, device=...)` (or `torch.zeros`, for a `zero_()`)"
    return f"`torch.{name}(..., device=...)`"


@dataclass
class _Candidate:
    move: cst.Call  # the `.cuda()` / `.to(device)` call
    factory: cst.Call
    name: str  # the factory's name: "zeros"
    device: cst.BaseExpression
    wrapper_fixable: bool  # what lies between factory and move lets `device=` move into the factory
    function: Optional[tuple]
    unconditional: bool  # runs on every call of its function
    bound: Optional[cst.CSTNode] = None  # the value, when a name holds it until a later statement moves it


_HOOK = "a hook the framework runs once per batch"
