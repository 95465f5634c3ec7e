"""ML017 training-without-mixed-precision."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from memlint.analysis.closures import calls_optimizer_closure, handed_closure
from memlint.analysis.delegation import modules_handed_to_backpropagated_call
from memlint.analysis.frameworks import ignite_engine_run, lightning_fit, torchnet_engine_run, trains_unconditionally
from memlint.analysis.iteration import optimizer_loop_target
from memlint.analysis.looped_models import LOOPED_MODEL, LoopedModels, helper_work, work_at_site
from memlint.analysis.module_runs import MODULE_MARKERS, run_receivers, runs_module, runs_own_method
from memlint.analysis.handed_contexts import Handed, callers_hand_plain, handed_region
from memlint.analysis.precision_api import LOW_PRECISION_DTYPES, mixed_precision_call
from memlint.analysis.project_facts import training_work
from memlint.analysis.tables import BACKWARD_METHODS
from memlint.analysis.walk import held_as, held_name
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml017_training_without_mixed_precision.meta import META

# Configuration that asks a framework for mixed precision (Lightning, accelerate, transformers).
_PRECISION_KEYWORDS = frozenset({"mixed_precision", "fp16", "bf16", "precision", "amp", "use_amp", "amp_dtype"})
_PRECISION_STRING = re.compile(r"(?:16-mixed|bf16|fp16|float16|bfloat16|\bamp\b)", re.I)
_LOW_PRECISION_METHODS = frozenset({"half", "bfloat16", "autocast"})
# Evidence of a loop or function: its model runs under a context manager a caller hands in, that may be autocast
_UNKNOWN_PRECISION = "unknown precision"


# Two learner classes whose `train` runs the net, backpropagates and steps (the registry examples).
_LEARNERS = """import torch
class ValueLearner:
    def __init__(self, net):
        self.net = net.cuda()
        self.optimiser = torch.optim.Adam(net.parameters())
    def train(self, batch):
        loss = self.net(batch.cuda()).mean()
        self.optimiser.zero_grad()
        loss.backward()
        self.optimiser.step()
class PolicyLearner(ValueLearner):
    def train(self, batch):
        loss = -self.net(batch.cuda()).mean()
        self.optimiser.zero_grad()
        loss.backward()
        self.optimiser.step()
"""


class TrainingWithoutMixedPrecision(Rule):
    """
    ## What it does
    Finds a training loop in a file that shows no sign of reduced precision. No sign means no
    autocast, no GradScaler, no `.half()` / `.bfloat16()`, no `torch.float16` / `torch.bfloat16`,
    no apex amp (`amp.initialize(model, optimizer, opt_level="O1")`, `amp.scale_loss(loss, optimizer)`,
    `FP16_Optimizer`), and no framework setting for it (`precision="16-mixed"`, `mixed_precision="bf16"`,
    `fp16=True`), and no string naming it (a `--amp` flag: what it selects may be read anywhere,
    so its name counts, whatever the file does with it). A loop whose model runs inside a context
    manager its function is handed (`with amp_autocast():` where `amp_autocast` is a parameter: the
    caller may pass autocast or `suppress` by a flag) is of unknown precision and not reported, unless
    the region shows it is no autocast (`prof.step()` in its body) or the file's own calls of the
    function all hand a plain one (`model.no_sync`, `nullcontext`, `tqdm(...)`). Off by default:
    select it with `--select ML017` or `extend-select = ["ML017"]`.

    A training loop calls backward and an optimizer's `step()` and runs a model with gradients on (a
    model run under `torch.no_grad()` saves no activations), in its own body or in the file's
    functions it calls (`loss = compute_td_loss(batch)`, `train_D(x)`, `self.batch_backward()`, with
    `optimizer.step()` inside): a call of a module or of something named like a model, a module's
    own method (`agent.get_action_and_value(obs)`, `self.compute_loss(x)`), or a call of a name the file treats as a module
    (`G(z)` where the file calls `G.train()` or `G.parameters()`; a model kept in a dict of the
    training state, `state["model"].loss(sample)` after `state["model"].train()`, as protonets'
    `Engine` does, and `state["optimizer"].step()` for its optimizer; an entry of a container whose
    entries the file gives a module's method, `self.networks["feat_model"](inputs, labels)` after
    `self.networks[key].parameters()`, not a slot named like a loss), or a call handed the model
    that computes the loss the loop backpropagates (`loss = loss_registry[kind](model, x, t)`, a
    loss helper of another file reached through a dict). An optimizer is what the file builds
    with `torch.optim` (or a known optimizer factory), whatever its name (`Gopt, Dopt =
    self.build_optimizers(opts)` whose returns are `optim.Adam(...)`), else a name like one
    (`optimizer`, `opt_G`, `optimizerD`). A call of an optimizer closure,
    a callable the function also hands to an optimizer's `step(closure)` (by torch.optim's contract
    it runs the model and backpropagates), counts for both; the `step(closure)` itself runs a
    closure the function defines (LBFGS's `def closure(): ...; loss.backward()` in the loop), so
    what that body does itself (its model run, its backward) counts for the loop of the step, or
    its function (where the function defines two closures of that name, only what both do). A loop over
    the optimizers (`for optimizer in optimizers: optimizer.step()`, `for opt in opt_list:
    opt.step()`) is the step of the loop around it, or of its function (a trainer's `step(opt_list)`
    helper, then a step of every loop that calls it through `self.update()`), and a
    function of another file counts for what the project pass says it does on every call
    (`train_epoch(model, optimizer, ...)` that runs the model, backpropagates and steps:
    `FileView.update_calls`), as does a method of another file's class on an instance the code
    builds (`policy.train(buffer)` with `policy = TD3.TD3(...)`, or `DDPG.DDPG(...)` in another
    branch: every such class's method must do it; a class of the file or one named in lower case,
    `discrete_BCQ.discrete_BCQ(...)`, counts too), or that a factory function returns (`agent =
    make_agent(args)` whose every `return` builds such a class, `CurlSacAgent(...)`, or returns a
    name bound only to such classes, by branch: `get_model(opts)`), or a class a function picks at
    run time by a name (`globals()[name]`, a module loaded with `importlib`: DomainBed's
    `get_algorithm_class`, `create_model(opt)`), where every candidate class's method so named,
    overriding one method of a common base, does it, or a class taken from a registry dict
    (`learner = le_REGISTRY[args.learner](mac, ...)`, the project's module-level `REGISTRY = {}` filled
    with `REGISTRY["q_learner"] = QLearner`, ..., and used by other files only to read an entry),
    where every entry's method does it. A factory may import the class of each branch
    under one name (`from models.model_plain import ModelPlain as M`, `... import ModelGAN as M`,
    then `M(opt)`: KAIR's `define_Model` builds any of them); a method that hands its work to its
    base's (`super().optimize_parameters(step)`) does what that one does; and a placeholder its
    class leaves to be overridden (`raise NotImplementedError`), called on `self` in a loop
    (deep-person-reid's `self.forward_backward(data)` in `Engine.train`), does what every override
    of it in the project's subclasses does on every call (with none, nothing is known). A backward in a loop nested in the one that
    steps (gradient accumulation over micro-batches) counts for the loop that steps, and a helper
    that runs the model in a loop of its own that neither backpropagates nor steps, itself or
    through a call it makes there (a meta-learner's loss summed over the tasks of a batch), runs it
    for a loop that calls it with gradients on (not under `torch.no_grad()`, and not where every
    run's output is detached at once: features extracted, not trained).

    Not reported: a script or notebook that never mentions an accelerator (no `cuda`, `device`,
    `gpu`, ... anywhere, or only to hide the GPUs with `os.environ["CUDA_VISIBLE_DEVICES"] = ""`:
    CUDA autocast has nothing to apply to on the CPU), unless the training
    work its loop calls is in another file that names one (TD3's `policy.train`); a loop that runs no model
    (two scalar weights fitted to a test function: no activations to shrink). A file with no code
    at module level (a library module) may get its device from its caller, so it is not required
    to mention one, unless the files of the project that import it mention none either (a CPU-only
    project: `FileView.host_importers` from the project pass).

    A Lightning `Trainer(...)` runs the loop inside `trainer.fit(module)`: every batch through the
    module's `training_step`, backward and optimizer step, in the precision its `precision=` sets
    (32 bits when not given). The finding is on the `fit` call, where the loop runs and next to the
    Trainer whose `precision="bf16-mixed"` is the fix (a module's `training_step` may be fitted by
    several Trainers, or by one in another file), when the Trainer is built in the same scope with
    an accelerator argument (`gpus=1`, `accelerator="gpu"` or `"auto"`; not `"cpu"` / 0) and nothing
    that may set the precision another way (`plugins=`, `strategy=`, `**config`, positional
    arguments). A Trainer built from a config or the command line (`Trainer.from_argparse_args(args)`,
    `LightningCLI`) cannot be read: not reported.

    torchnet's `Engine` (imported from `torchnet.engine`) runs the loop inside `engine.train(network,
    iterator, maxepoch, optimizer)`: the network, the loss's backward and the optimizer's step for
    every sample. The finding is on that call, in a file that names an accelerator.

    pytorch-ignite's `Engine(process_function)` (imported from `ignite.engine`) calls the function once
    per batch inside `engine.run(loader, max_epochs=n)`: where that function runs a model,
    backpropagates and steps an optimizer on every call (not under `if optimizer is not None:`, a
    training flag or the engine's state: an evaluation engine may be built from the same step), `run`
    is the training loop and the finding is on the engine's first `run`. The engine may be built by a
    factory of the file (`trainer = create_trainer(model, ...)` whose every `return` is
    `Engine(_update)` of one function); an engine handed in, ignite's own
    `create_supervised_trainer`, a factory of another file, an `async def` factory or a name some
    function rebinds through `global` cannot be read, and are not reported.

    It is advice, reported once per loop: the file may run on hardware or with a model where mixed
    precision does not pay, or precision may be configured in another file (a launcher, a config)
    memlint does not see.

    ## Why is this bad?
    Activations saved for backward usually dominate training memory for large batches; computing
    them in float16 or bfloat16 under autocast roughly halves them (and uses the tensor cores),
    while weights, gradients and optimizer state stay float32.

    ## Example
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    No automatic fix: where autocast goes, whether a GradScaler is needed (float16) or not
    (bfloat16), and whether the model is numerically fine in reduced precision are decisions.

    ## Measured effect
    Not measured by memlint's fixtures yet (autocast needs a GPU to pay off). Per
    ../spec/memory-facts.md, autocast keeps fp32 weights, gradients and optimizer state: it shrinks
    activations, not model state.
    """

    meta = META
    severity = Severity.INFO
    fix_safety = "none"

    VALID = [
        Valid(  # the forward runs under a context manager the caller chooses: autocast or not, not known here
            """
import torch
def train_one_epoch(model, loader, optimizer, amp_autocast):
    for x, y in loader:
        with amp_autocast():
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # the same with a context manager object handed in (`torch.autocast("cuda")` or `nullcontext()`)
            """
import torch
def train_one_epoch(model, loader, optimizer, precision_ctx):
    for x, y in loader:
        with precision_ctx:
            loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # the per-step function runs the forward in the region; its callers are in other files
            """
import torch
def train_step(model, x, optimizer, precision_ctx):
    with precision_ctx():
        loss = model(x.cuda()).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""
        ),
        Valid(  # the region calls a helper of the file that runs the model: its forward is in the region
            """
import torch
def compute_loss(model, x):
    return model(x.cuda()).mean()
def train(model, loader, optimizer, amp_autocast):
    for x in loader:
        with amp_autocast():
            loss = compute_loss(model, x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # a fallback keeps the caller's choice: `ctx = ctx or nullcontext()`
            """
import contextlib
import torch
def train(model, loader, optimizer, ctx=None):
    ctx = ctx or contextlib.nullcontext()
    if ctx is None:
        ctx = contextlib.nullcontext()
    for x in loader:
        with ctx:
            loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # one caller in the file hands a choice with an unknown alternative: the region stays unknown
            """
import contextlib
import torch
def step(model, x, optimizer, region):
    with region():
        loss = model(x.cuda()).mean()
    loss.backward()
    optimizer.step()
def train(model, loader, optimizer, chosen):
    for x in loader:
        step(model, x, optimizer, chosen if chosen else contextlib.nullcontext)
"""
        ),
        Valid(  # a parameter named as a registry dict holds whatever the caller hands: here scorers only
            """
LEARNERS_PLACEHOLDER
class Scorer(ValueLearner):
    def train(self, batch):
        with torch.no_grad():
            print(self.net(batch.cuda()).mean())
LEARNERS = {"value": ValueLearner, "policy": PolicyLearner}
SCORERS = {"score": Scorer}
def run(args, net, buffer, LEARNERS=SCORERS):
    learner = LEARNERS[args.learner](net)
    for batch in buffer:
        learner.train(batch)
""".replace("LEARNERS_PLACEHOLDER\n", _LEARNERS)
        ),
        Valid(  # a helper's loop runs the backbone, but the caller calls it under no_grad: features only
            """
import torch
def embed(backbone, loader):
    return torch.cat([backbone(x.cuda()) for x in loader])
def embed_all(backbone, loader):
    out = []
    for x in loader:
        out.append(backbone(x.cuda()))
    return torch.cat(out)
def fit_probe(backbone, loader, labels):
    probe = torch.zeros(256, 10, device="cuda", requires_grad=True)
    opt = torch.optim.SGD([probe], lr=0.1)
    for epoch in range(5):
        with torch.no_grad():
            feats = embed_all(backbone, loader)
        loss = torch.nn.functional.cross_entropy(feats @ probe, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        Valid(  # a helper's loop detaches every backbone output: no graph leaves it for the caller's backward
            """
import torch
def embed_all(backbone, loader):
    out = []
    for x in loader:
        out.append(backbone(x.cuda()).detach())
    return torch.cat(out)
def fit_probe(backbone, loader, labels):
    probe = torch.zeros(256, 10, device="cuda", requires_grad=True)
    opt = torch.optim.SGD([probe], lr=0.1)
    for epoch in range(5):
        feats = embed_all(backbone, loader)
        loss = torch.nn.functional.cross_entropy(feats @ probe, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        Valid(  # a registry dict one of whose learners only scores under no_grad: the loop may train nothing
            """
LEARNERS_PLACEHOLDER
class Scorer(ValueLearner):
    def train(self, batch):
        with torch.no_grad():
            print(self.net(batch.cuda()).mean())
LEARNERS = {"value": ValueLearner, "score": Scorer}
def run(args, net, buffer):
    learner = LEARNERS[args.learner](net)
    for batch in buffer:
        learner.train(batch)
""".replace("LEARNERS_PLACEHOLDER\n", _LEARNERS)
        ),
        Valid(  # a registry dict a decorator fills too: which classes it holds is not known
            """
LEARNERS_PLACEHOLDER
LEARNERS = {"value": ValueLearner, "policy": PolicyLearner}
def register(name):
    def add(cls):
        LEARNERS[name] = cls
        return cls
    return add
def run(args, net, buffer):
    learner = LEARNERS[args.learner](net)
    for batch in buffer:
        learner.train(batch)
""".replace("LEARNERS_PLACEHOLDER\n", _LEARNERS)
        ),
        Valid(  # the loss helper's own loop runs the model under no_grad: no activations saved
            """
import torch
class MetaLearner:
    def __init__(self, model, optimizer, device):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.scale = torch.nn.Parameter(torch.ones(1, device=device))
    def outer_loss(self, batch):
        total = 0.0
        for x, y in zip(*batch):
            with torch.no_grad():
                out = self.model(x)
            total = total + (self.scale * out - y).pow(2).mean()
        return total
    def train_iter(self, loader):
        for batch in loader:
            self.optimizer.zero_grad()
            loss = self.outer_loss(batch)
            loss.backward()
            self.optimizer.step()
"""
        ),
        Valid(  # an override of the placeholder that is only a docstring: a dry run that trains nothing
            """
import torch
class Engine:
    def __init__(self, loader, model, optimizer):
        self.loader = loader
        self.model = model.cuda()
        self.optimizer = optimizer
    def run(self):
        for data in self.loader:
            self.forward_backward(data)
    def forward_backward(self, data):
        raise NotImplementedError
class SoftmaxEngine(Engine):
    def forward_backward(self, data):
        loss = self.model(data.cuda()).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
class DryRun(Engine):
    def forward_backward(self, data):
        \"\"\"Iterates the loader only.\"\"\"
"""
        ),
        Valid(  # an override of the placeholder that is only `pass`
            """
import torch
class Engine:
    def __init__(self, loader, model, optimizer):
        self.loader = loader
        self.model = model.cuda()
        self.optimizer = optimizer
    def run(self):
        for data in self.loader:
            self.forward_backward(data)
    def forward_backward(self, data):
        raise NotImplementedError
class SoftmaxEngine(Engine):
    def forward_backward(self, data):
        loss = self.model(data.cuda()).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
class DryRun(Engine):
    def forward_backward(self, data):
        pass
"""
        ),
        Valid(  # a base method whose body is `pass` is a working no-op default, run when the base itself is built
            """
import torch
class Engine:
    def __init__(self, loader, model, optimizer):
        self.loader = loader
        self.model = model.cuda()
        self.optimizer = optimizer
    def run(self):
        for data in self.loader:
            self.step(data)
    def step(self, data):
        pass
class Trainer(Engine):
    def step(self, data):
        loss = self.model(data.cuda()).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
def benchmark(loader, model, optimizer):
    Engine(loader, model, optimizer).run()
"""
        ),
        Valid(  # a subclass binds the placeholder by assignment: an override the pass does not follow
            """
import torch
class Engine:
    def __init__(self, loader, model, optimizer):
        self.loader = loader
        self.model = model.cuda()
        self.optimizer = optimizer
    def run(self):
        for data in self.loader:
            self.forward_backward(data)
    def forward_backward(self, data):
        raise NotImplementedError
class SoftmaxEngine(Engine):
    def forward_backward(self, data):
        loss = self.model(data.cuda()).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
    def score(self, data):
        with torch.no_grad():
            return self.model(data.cuda()).mean()
class Evaluator(SoftmaxEngine):
    forward_backward = SoftmaxEngine.score
"""
        ),
        Valid(  # a subclass defined inside a function overrides the placeholder where the pass does not look
            """
import torch
class Engine:
    def __init__(self, loader, model, optimizer):
        self.loader = loader
        self.model = model.cuda()
        self.optimizer = optimizer
    def run(self):
        for data in self.loader:
            self.forward_backward(data)
    def forward_backward(self, data):
        raise NotImplementedError
class SoftmaxEngine(Engine):
    def forward_backward(self, data):
        loss = self.model(data.cuda()).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
def make_evaluator():
    class Evaluator(Engine):
        def forward_backward(self, data):
            with torch.no_grad():
                self.model(data.cuda())
    return Evaluator
"""
        ),
        Valid(  # `super()` follows the MRO: with two bases, Frozen's forward-only `optimize` may be the one that runs
            """
import torch
import torch.nn as nn
class Plain:
    def __init__(self):
        self.net = nn.Linear(8, 4).cuda()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
    def optimize(self, batch):
        self.opt.zero_grad()
        self.net(batch).mean().backward()
        self.opt.step()
class Logged(Plain):
    def log(self, msg):
        print(msg)
class Frozen(Plain):
    def optimize(self, batch):
        with torch.no_grad():
            self.net(batch)
class Video(Logged, Frozen):
    def optimize(self, batch):
        self.log("step")
        super().optimize(batch)
def main(loader):
    trainer = Video()
    for batch in loader:
        trainer.optimize(batch)
"""
        ),
        Valid(  # a placeholder one of whose overrides only scores under no_grad: the loop may train nothing
            """
import torch
class Engine:
    def __init__(self, loader, model, optimizer):
        self.loader = loader
        self.model = model.cuda()
        self.optimizer = optimizer
    def run(self):
        for data in self.loader:
            self.forward_backward(data)
    def forward_backward(self, data):
        raise NotImplementedError
class SoftmaxEngine(Engine):
    def forward_backward(self, data):
        loss = self.model(data.cuda()).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
class Scorer(Engine):
    def forward_backward(self, data):
        with torch.no_grad():
            return self.model(data.cuda()).mean()
"""
        ),
        Valid(  # `super(Other, self)` skips past this class's bases: which method runs is not followed
            """
import torch
import torch.nn as nn
class Plain:
    def __init__(self):
        self.net = nn.Linear(8, 4).cuda()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
    def optimize(self, batch):
        self.opt.zero_grad()
        self.net(batch).mean().backward()
        self.opt.step()
class Video(Plain):
    def optimize(self, batch):
        super(Plain, self).optimize(batch)
def main(loader):
    trainer = Video()
    for batch in loader:
        trainer.optimize(batch)
"""
        ),
        Valid(  # ignite's evaluation engine: its process function runs the model under no_grad, steps nothing
            """
import torch
from ignite.engine import Engine
def make_evaluator(net):
    net.cuda()
    def infer(engine, batch):
        net.eval()
        with torch.no_grad():
            return net(batch[0].cuda())
    engine = Engine(infer)
    return engine
def main(net, opt, loader):
    evaluator = make_evaluator(net)
    evaluator.run(loader)
    opt.step()
    net(torch.ones(1).cuda()).sum().backward()
"""
        ),
        Valid(  # a factory that may return an engine of another process function (or none): not read
            """
import torch
from ignite.engine import Engine
def make_engine(net, opt, train):
    net.cuda()
    def update(engine, batch):
        opt.zero_grad()
        net(batch.cuda()).mean().backward()
        opt.step()
    if train:
        return Engine(update)
    return None
def main(net, opt, loader):
    engine = make_engine(net, opt, True)
    engine.run(loader, max_epochs=3)
"""
        ),
        Valid(  # one ignite step for both engines: without an optimizer (its default) the evaluator steps nothing
            """
import torch
from ignite.engine import Engine
def build(net, loss_fn, opt=None):
    def work(engine, batch):
        out = loss_fn(net(batch[0].cuda()), batch[1].cuda())
        if opt is not None:
            opt.zero_grad()
            out.backward()
            opt.step()
        return out.item()
    return Engine(work)
def check(net, loss_fn, loader):
    build(net, loss_fn).run(loader)
"""
        ),
        Valid(  # a training flag decides the step: this engine is built to evaluate
            """
import torch
from ignite.engine import Engine
def build(net, opt, training):
    def work(engine, batch):
        if not training:
            with torch.no_grad():
                return net(batch.cuda())
        opt.zero_grad()
        net(batch.cuda()).sum().backward()
        opt.step()
    return Engine(work)
def check(net, opt, loader):
    scorer = build(net, opt, training=False)
    scorer.run(loader)
"""
        ),
        Valid(  # the step branches on the engine's state, set to evaluate here
            """
import torch
from ignite.engine import Engine
net = Net().cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
def work(engine, batch):
    if engine.state.learn:
        opt.zero_grad()
        net(batch.cuda()).sum().backward()
        opt.step()
    else:
        with torch.no_grad():
            net(batch.cuda())
scorer = Engine(work)
scorer.state.learn = False
scorer.run(loader)
"""
        ),
        Valid(  # a function rebinds the module's engine through `global`: which step runs is not known
            """
import torch
from ignite.engine import Engine
def learn(engine, batch):
    opt.zero_grad()
    net(batch.cuda()).sum().backward()
    opt.step()
def score(engine, batch):
    with torch.no_grad():
        return net(batch.cuda())
runner = Engine(learn)
def switch():
    global runner
    runner = Engine(score)
switch()
runner.run(loader)
"""
        ),
        Valid(  # an `async def` factory gives a coroutine, not an engine
            """
import torch
from ignite.engine import Engine
def learn(engine, batch):
    opt.zero_grad()
    net(batch.cuda()).sum().backward()
    opt.step()
async def build():
    return Engine(learn)
runner = build()
runner.run(loader)
"""
        ),
        Valid(  # an `Engine` that is not ignite's: what its `run` does is its own code's business
            """
import torch
from mylib.engine import Engine
def make_engine(net, opt):
    net.cuda()
    def update(engine, batch):
        opt.zero_grad()
        net(batch.cuda()).mean().backward()
        opt.step()
    return Engine(update)
def main(net, opt, loader):
    engine = make_engine(net, opt)
    engine.run(loader, max_epochs=3)
"""
        ),
        Valid(  # the training step handed to ignite under autocast: the file shows reduced precision
            """
import torch
from ignite.engine import Engine
def make_trainer(net, opt):
    net.cuda()
    def update(engine, batch):
        opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = net(batch.cuda()).mean()
        loss.backward()
        opt.step()
    return Engine(update)
trainer = make_trainer(Net(), opt)
trainer.run(loader, max_epochs=3)
"""
        ),
        Valid(  # the network runs under no_grad (its logits computed once, no activations saved): the step fits one temperature
            """
import torch
import torch.nn.functional as F
def calibrate(net, loader):
    net.cuda().eval()
    t = torch.ones(1, device="cuda", requires_grad=True)
    opt = torch.optim.SGD([t], lr=0.01)
    for x, y in loader:
        with torch.no_grad():
            logits = net(x.cuda())
        loss = F.cross_entropy(logits / t, y.cuda())
        loss.backward()
        opt.step()
"""
        ),
        Valid(  # a dict's entries called but never given a module's method (transforms, losses): no model runs
            """
import torch
class Runner:
    def __init__(self, model, loader):
        self.model = model.cuda()
        self.loader = loader
        self.steps = {"augment": lambda x: x.flip(0), "criterion": torch.nn.MSELoss()}
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
    def train(self):
        for x, y in self.loader:
            x = self.steps["augment"](x.cuda())
            loss = self.steps["criterion"](x, y.cuda())
            loss.backward()
            self.opt.step()
"""
        ),
        Valid(  # a loss kept beside the networks (`.parameters()` given to its optimizer too): the slot named like a loss runs no model
            """
import torch
class Runner:
    def __init__(self, parts, loader):
        self.loader = loader
        self.parts = {key: part.cuda() for key, part in parts.items()}
        self.opt = torch.optim.SGD(self.parts["CenterLoss"].parameters(), lr=0.1)
    def train(self, feats):
        for y in self.loader:
            loss = self.parts["CenterLoss"](feats, y.cuda())
            loss.backward()
            self.opt.step()
"""
        ),
        Valid(  # `closure()` never handed to an optimizer's `step`: its body is the caller's, and its name alone is no evidence that it backpropagates
            """
import torch
def optimize(parameters, closure, lr, num_iter):
    optimizer = torch.optim.Adam(parameters, lr=lr)
    for j in range(num_iter):
        optimizer.zero_grad()
        closure()
        optimizer.step()
def get_noise(shape):
    return torch.rand(shape).cuda()
"""
        ),
        Valid(  # a learning-rate scheduler is no optimizer, whatever torch.optim module builds it: this loop steps no weights (the model is fitted elsewhere)
            """
import torch
def fit(model, loader, base):
    sched = torch.optim.lr_scheduler.StepLR(base, step_size=10)
    for x in loader:
        loss = model(x.cuda()).mean()
        loss.backward()
        sched.step()
"""
        ),
        Valid(  # a CPU self-test that only seeds the CUDA generator: nothing is put on an accelerator
            """
import torch
if __name__ == "__main__":
    torch.manual_seed(42)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(42)
    model = torch.nn.Linear(8, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=1)
    for _ in range(10):
        loss = model(torch.randn(2, 8)).sum()
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(
            """
import torch
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(  # a framework setting
            """
import torch
from accelerate import Accelerator
accelerator = Accelerator(mixed_precision="bf16")
for x, y in loader:
    loss = model(x, y)
    accelerator.backward(loss)
    optimizer.step()
"""
        ),
        Valid(  # a dict's other slot: `state["loader"]` is no model, so the loop runs none
            """
import torch
def train(state):
    state["model"].cuda()
    for sample in state["loader"]:
        loss = state["loader"].dataset.score(sample)
        loss.backward()
        state["optimizer"].step()
"""
        ),
        Valid(  # apex's amp, set up behind a command-line switch: O1 runs the forward under autocast-style casts
            """
import torch
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if args.half:
    from apex import amp
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    if args.half:
        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
    else:
        loss.backward()
    optimizer.step()
"""
        ),
        Valid(  # an engine of the project's own, not torchnet's: what its `train` runs is its code's business
            """
import torch
from protonets.engine import Engine
def main(model, optimizer, train_loader):
    model.cuda()
    def step(sample):
        return criterion(model(sample[0].cuda()), sample[1].cuda())
    engine = Engine()
    engine.train(step, train_loader, 10, optimizer)
"""
        ),
        Valid(  # Lightning Trainers whose precision or accelerator cannot be read, or that keep the loop on the CPU
            """
import argparse
import torch
import pytorch_lightning as pl
from pytorch_lightning import Trainer
model = Net()
Trainer.from_argparse_args(argparse.Namespace(gpus=1)).fit(model, loader)
pl.Trainer(max_epochs=5).fit(model, loader)
pl.Trainer(gpus=0, max_epochs=5).fit(model, loader)
pl.Trainer(accelerator="cpu").fit(model, loader)
trainer = pl.Trainer(gpus=1, **config["trainer"])
trainer.fit(model, loader)
device = torch.device("cuda")
"""
        ),
        Valid(  # Lightning in 16-bit mixed precision
            """
import pytorch_lightning as pl
trainer = pl.Trainer(gpus=1, precision=16)
trainer.fit(model, loader)
"""
        ),
        Valid(  # no optimizer step: not a training loop
            """
import torch
for x in loader:
    model(x.cuda()).sum().backward()
    saliency.append(x.grad)
"""
        ),
        Valid(  # a CPU-only script (nothing runs on an accelerator): CUDA autocast cannot apply
            """
import torch
from torch import nn, optim
model = nn.Sequential(nn.Embedding(100, 10), nn.Flatten(), nn.Linear(20, 100))
optimizer = optim.SGD(model.parameters(), lr=1e-3)
for context, target in trigrams:
    loss = nn.functional.cross_entropy(model(context), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(  # the only CUDA mention hides every GPU (ikostrikov/pytorch-a3c): a CPU-only run, CUDA autocast cannot apply
            """
import os
import torch
os.environ["CUDA_VISIBLE_DEVICES"] = ""
model = torch.nn.Linear(8, 4)
optimizer = torch.optim.Adam(model.parameters())
for x in loader:
    loss = model(x).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(  # no model runs: two scalar weights on a test function (nothing for autocast to shrink)
            """
import torch
from torch import nn
def train_curve(optimizer_func, curve_func, device="cuda"):
    weights = nn.Parameter(torch.tensor([5.0, 5.0], device=device))
    optim = optimizer_func([weights])
    for _ in range(100):
        loss = curve_func(weights[0], weights[1])
        optim.zero_grad()
        loss.backward()
        optim.step()
"""
        ),
        Valid(  # the factory may hand back something else (`None` without a loader): the called step is not known
            """
import torch
import torch.nn as nn
def make_step(model, optimizer, loader):
    def step(x, y):
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return step if loader else None
model = nn.Linear(4, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_step = make_step(model, optimizer, loader)
for x, y in loader:
    train_step(x, y)
"""
        ),
        Valid(  # a `--amp` flag whose branch calls a helper memlint cannot read: the flag may select mixed precision there
            """
import argparse
import torch
from utils import setup_precision
parser = argparse.ArgumentParser()
parser.add_argument("--amp", action="store_true")
args = parser.parse_args()
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if args.amp:
    model = setup_precision(model)
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(  # a flag's destination that is no string literal: unknown, so the flag's name still counts (a bad `\\N{...}` escape is ML000: the file cannot run)
            """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true", dest=DEST)
args = parser.parse_args()
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(  # a `--amp` flag whose branch only sets text, which a call then carries on: what it selects is not shown here
            """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--amp", action="store_true")
args = parser.parse_args()
precision = "fp32"
if args.amp:
    precision = "mixed"
model = make_model(precision).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(  # a loop over learning-rate schedulers named with `opt` in them: their `step()` moves no weights, so the batch loop only measures gradients
            """
import torch
def gradient_report(net, batches, opt_schedulers):
    net.cuda()
    for x in batches:
        net.zero_grad()
        net(x.cuda()).sum().backward()
        for opt_scheduler in opt_schedulers:
            opt_scheduler.step()
"""
        ),
        Valid(  # an LBFGS closure that calls only a method of the module itself, which divides by one learned scalar: no model runs in the fit
            """
import torch
import torch.nn as nn
class Calibrated(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.t = nn.Parameter(torch.ones(1))
    def scaled(self, logits):
        return logits / self.t
    def calibrate(self, logits, labels):
        self.cuda()
        optimizer = torch.optim.LBFGS([self.t])
        def closure():
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(self.scaled(logits), labels)
            loss.backward()
            return loss
        for _ in range(3):
            optimizer.step(closure)
"""
        ),
        Valid(  # an LBFGS closure that fits two scalars: the step runs its body, and no model runs there
            """
import torch
def fit(steps):
    w = torch.zeros(2, device="cuda", requires_grad=True)
    optimizer = torch.optim.LBFGS([w])
    for _ in range(steps):
        def closure():
            optimizer.zero_grad()
            loss = (w - 1).pow(2).sum()
            loss.backward()
            return loss
        optimizer.step(closure)
"""
        ),
        Valid(  # one name, two closures: which def the step runs is not told apart, so only what both do counts (one runs no model)
            """
import torch
def calibrate(model, logits, labels, steps):
    model.cuda()
    temperature = torch.ones(1, device="cuda", requires_grad=True)
    optimizer = torch.optim.LBFGS([temperature])
    if steps > 0:
        def closure():
            optimizer.zero_grad()
            loss = model(logits).mean()
            loss.backward()
            return loss
    else:
        def closure():
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(logits / temperature, labels)
            loss.backward()
            return loss
    for _ in range(10):
        optimizer.step(closure)
"""
        ),
        Valid(  # a helper that steps each learning-rate scheduler: no optimizer step, whatever the loop around it runs
            """
import torch
def step_all(schedulers):
    for scheduler in schedulers:
        scheduler.step()
def fit(model, loader, schedulers):
    model.cuda()
    for x in loader:
        loss = model(x.cuda()).mean()
        loss.backward()
        step_all(schedulers)
"""
        ),
    ]

    INVALID = [
        Invalid(  # a lock handed to a logging helper: no region around the training loop's forward
            """
import torch
def log_value(lock, stream, value):
    with lock:
        stream.write(str(value))
def train(model, loader, optimizer):
    for x in loader:
        loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            line=6,
            column=5,
        ),
        Invalid(  # the handed-in region comes after the forward (a log written after the step; a region after the loop)
            """
import torch
def train(model, loader, optimizer, log_file, region):
    for x in loader:
        loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with log_file:
            pass
    with region():
        pass
""",
            line=3,
            column=5,
        ),
        Invalid(  # a grad context handed to an evaluation function, and a nested function's and another class's own parameter
            """
import torch
class Saver:
    def write(self, stream, state):
        with stream:
            torch.save(state, stream)
def evaluate(model, loader, grad_ctx):
    with grad_ctx():
        return [model(x.cuda()) for x in loader]
def train(model, loader, optimizer):
    def save(handle):
        with handle:
            torch.save(model.state_dict(), handle)
    for x in loader:
        loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    evaluate(model, loader, torch.no_grad)
    save(open("last.pt", "wb"))
""",
            line=13,
            column=5,
        ),
        Invalid(  # the parameter is bound again before the `with`: the function's own file, nothing handed in
            """
import torch
def train(model, loader, optimizer, ctx=None):
    ctx = open("log.txt", "a")
    for x in loader:
        with ctx:
            loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            line=4,
            column=5,
        ),
        Invalid(  # the region shows what it enters: a timer called with a label, a profiler stepped in the body
            """
import torch
def train(model, loader, optimizer, timer, prof):
    with prof:
        for x in loader:
            with timer("forward"):
                loss = model(x.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            prof.step()
""",
            line=4,
            column=9,
        ),
        Invalid(  # the only caller in the file hands a progress bar: a plain region
            """
import torch
from tqdm import tqdm
def run_epoch(model, loader, optimizer, bar):
    with bar:
        for x in loader:
            loss = model(x.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
def main(model, loader, optimizer):
    run_epoch(model, loader, optimizer, tqdm(total=len(loader)))
""",
            line=5,
            column=9,
        ),
        Invalid(  # the caller picks between `model.no_sync` and `nullcontext` (gradient accumulation): no precision
            """
import contextlib
import torch
def train_step(model, x, optimizer, sync_context):
    with sync_context():
        loss = model(x.cuda()).mean()
        loss.backward()
    optimizer.step()
    optimizer.zero_grad()
def train(model, loader, optimizer, accumulate=4):
    for i, x in enumerate(loader):
        ctx = model.no_sync if (i + 1) % accumulate else contextlib.nullcontext
        train_step(model, x, optimizer, ctx)
""",
            line=10,
            column=5,
        ),
        Invalid(  # `async with` over a parameter elsewhere, and `with` over a starred or indexed one
            """
import torch
async def fetch(sem, queue):
    async with sem:
        return await queue.get()
def other(a, *args, **kwargs):
    with kwargs:
        pass
    with args[0]:
        pass
def train(model, loader, optimizer):
    for x in loader:
        loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            line=11,
            column=5,
        ),
        Invalid(  # the context manager is the function's own, a nullcontext: nothing the caller may make autocast
            """
import contextlib
import torch
def train(model, loader, optimizer):
    ctx = contextlib.nullcontext()
    for x in loader:
        with ctx:
            loss = model(x.cuda()).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            line=5,
            column=5,
        ),
        Invalid(  # a parameter of the enclosing function, rebound by the inner one before its `with`: its own timer
            """
import torch
from timers import Timer
def make_trainer(model, optimizer, timer):
    def fit(loader):
        timer = Timer()
        for x in loader:
            with timer:
                loss = model(x.cuda()).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return fit
""",
            line=6,
            column=9,
        ),
        Invalid(  # the step hands the work to its base's through `super()` (cszn/KAIR's `ModelVRT.optimize_parameters`, issue 27)
            """
import torch
import torch.nn as nn
class Plain:
    def __init__(self):
        self.net = nn.Linear(8, 4).cuda()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
    def optimize(self, batch):
        self.opt.zero_grad()
        self.net(batch).mean().backward()
        self.opt.step()
class Video(Plain):
    def optimize(self, batch):
        self.net.requires_grad_(True)
        super().optimize(batch)
def main(loader):
    trainer = Video()
    for batch in loader:
        trainer.optimize(batch)
""",
            line=17,
            column=5,
        ),
        Invalid(  # the loop calls a placeholder its subclasses override, and every override trains (deep-person-reid's `Engine.train`, issue 27)
            """
import torch
class Engine:
    def __init__(self, loader):
        self.loader = loader
    def train(self):
        for data in self.loader:
            self.forward_backward(data)
    def forward_backward(self, data):
        raise NotImplementedError
class SoftmaxEngine(Engine):
    def __init__(self, loader, model, optimizer):
        super().__init__(loader)
        self.model = model.cuda()
        self.optimizer = optimizer
    def forward_backward(self, data):
        loss = self.model(data.cuda()).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
""",
            line=6,
            column=9,
        ),
        Invalid(  # the class's own method runs the networks in a loop of its own: a model run of the loop calling it
            """
import torch
import torch.nn as nn
class Transfer(nn.Module):
    def __init__(self, featurizer, head):
        super().__init__()
        self.featurizer, self.head = featurizer.cuda(), head.cuda()
        self.opt = torch.optim.SGD(self.head.parameters(), lr=0.1)
    def gap(self, batches):
        losses = []
        for x, y in batches:
            losses.append(nn.functional.cross_entropy(self.head(self.featurizer(x)), y))
        return max(losses) - min(losses)
    def update(self, batches, steps):
        for _ in range(steps):
            self.opt.zero_grad()
            loss = -self.gap(batches)
            loss.backward()
            self.opt.step()
""",
            line=14,
            column=9,
        ),
        Invalid(  # a method of the module's own class (`self.compute_loss(x)`), which runs the network
            """
import torch
import torch.nn as nn
class Trainer(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net.cuda()
        self.opt = torch.optim.Adam(self.net.parameters())
    def compute_loss(self, x):
        return self.net(x).mean()
    def fit(self, loader):
        for x in loader:
            loss = self.compute_loss(x.cuda())
            loss.backward()
            self.opt.step()
""",
            line=11,
            column=9,
        ),
        Invalid(  # a plain class keeps its networks in a dict: an entry called (`self.nets["encoder"](x)`) is a model, as the file gives the entries `.parameters()`
            """
import torch
class Runner:
    def __init__(self, builders, loader):
        self.loader = loader
        self.nets = {}
        for key, build in builders.items():
            self.nets[key] = build().cuda()
        self.opt = torch.optim.SGD([p for key in self.nets for p in self.nets[key].parameters()], lr=0.1)
    def forward_batch(self, x):
        self.out = self.nets["encoder"](x)
    def backward_batch(self):
        self.opt.zero_grad()
        self.loss.backward()
        self.opt.step()
    def train(self):
        for x, y in self.loader["train"]:
            self.forward_batch(x.cuda())
            self.loss = (self.out - y.cuda()).pow(2).mean()
            self.backward_batch()
""",
            line=16,
            column=9,
        ),
        Invalid(  # a trainer's helper steps each optimizer of a list (`for opt in opt_list`): the step of `update`, called per batch
            """
import torch
class Trainer:
    def __init__(self, enc, dec):
        self.enc, self.dec = enc.cuda(), dec.cuda()
        self.opt_enc = torch.optim.Adam(self.enc.parameters())
        self.opt_dec = torch.optim.Adam(self.dec.parameters())
    @staticmethod
    def step(opt_list):
        for opt in opt_list:
            opt.step()
    def update(self, batch):
        loss = self.dec(self.enc(batch)).mean()
        loss.backward()
        self.step([self.opt_enc, self.opt_dec])
    def train(self, loader):
        for batch in loader:
            self.enc.train()
            self.update(batch.cuda())
""",
            line=16,
            column=9,
        ),
        Invalid(  # LBFGS: `optimizer.step(closure)` runs the closure defined in the loop, its model and its backward
            """
import torch
def fit(model, target, steps):
    model.cuda()
    optimizer = torch.optim.LBFGS(model.parameters())
    for _ in range(steps):
        def closure():
            optimizer.zero_grad()
            loss = (model(target.cuda()) - 1).pow(2).mean()
            loss.backward()
            return loss
        optimizer.step(closure)
""",
            line=5,
            column=5,
        ),
        Invalid(  # a per-batch helper whose `step(closure)` runs its closure's model and backward: the loop calling it trains
            """
import torch
model = Net().cuda()
optimizer = torch.optim.LBFGS(model.parameters())
def fit_step(x):
    def closure():
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        return loss
    optimizer.step(closure)
for x in loader:
    fit_step(x.cuda())
""",
            line=11,
            column=1,
        ),
        Invalid(  # a step on an instance of a class picked by name from the module's globals: every candidate's `optimize` trains
            """
import torch
import torch.nn as nn
class Base:
    def optimize(self, batch):
        raise NotImplementedError
class Plain(Base):
    def __init__(self):
        self.net = nn.Linear(8, 4).cuda()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
    def optimize(self, batch):
        self.opt.zero_grad()
        self.net(batch).mean().backward()
        self.opt.step()
def get_trainer_class(name):
    return globals()[name]
def main(name, loader):
    trainer_class = get_trainer_class(name)
    trainer = trainer_class()
    for batch in loader:
        trainer.optimize(batch)
""",
            line=19,
            column=5,
        ),
        Invalid(  # the step is the inner function a factory returns, called through the name bound to its result (kefirski/pytorch_RVAE's `rvae.trainer(optimizer)`, issue 27)
            """
import torch
import torch.nn as nn
def make_step(model, optimizer):
    def step(x, y):
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return step
model = nn.Linear(4, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_step = make_step(model, optimizer)
for x, y in loader:
    train_step(x, y)
""",
            line=13,
            column=1,
        ),
        Invalid(  # Lightning: the Trainer puts the loop on the GPU and sets no precision (32 bits); the finding is on `fit`
            """
import torch
import pytorch_lightning as pl
class Net(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 2)
    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)
    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())
trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=10)
trainer.fit(Net(), loader)
""",
            line=13,
            column=1,
            message="precision=",
        ),
        Invalid(  # the step is a method of the agent a factory function builds (MishaLaskin/curl's `make_agent`, issue 27)
            """
import torch
from torch import nn
device = torch.device("cuda")
class CurlAgent:
    def __init__(self):
        self.actor = nn.Linear(4, 2).to(device)
        self.optimizer = torch.optim.Adam(self.actor.parameters())
    def update(self, buffer):
        s, a = buffer.sample()
        loss = (self.actor(s) - a).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
def make_agent(args):
    if args.agent == "curl_sac":
        return CurlAgent()
    raise ValueError(args.agent)
def main(args, buffer):
    agent = make_agent(args)
    for step in range(args.num_train_steps):
        agent.update(buffer)
""",
            line=20,
            column=5,
        ),
        Invalid(  # the model and the optimizer kept in a dict of the training state (protonets' `Engine.train`, issue 27)
            """
import torch
def train(model, loader, optim_method, max_epoch):
    state = {"model": model.cuda(), "loader": loader, "epoch": 0}
    state["optimizer"] = optim_method(state["model"].parameters())
    while state["epoch"] < max_epoch:
        state["model"].train()
        for sample in state["loader"]:
            state["optimizer"].zero_grad()
            loss, state["output"] = state["model"].loss(sample)
            loss.backward()
            state["optimizer"].step()
        state["epoch"] += 1
""",
            line=7,
            column=9,
        ),
        Invalid(  # a class named in lower case, its instance's `train` the step (sfujim/BCQ's `discrete_BCQ`)
            """
import torch
from torch import nn
class discrete_BCQ(object):
    def __init__(self, device):
        self.Q = nn.Linear(4, 2).to(device)
        self.Q_optimizer = torch.optim.Adam(self.Q.parameters())
    def train(self, replay_buffer):
        state, action = replay_buffer.sample()
        loss = (self.Q(state) - action).pow(2).mean()
        self.Q_optimizer.zero_grad()
        loss.backward()
        self.Q_optimizer.step()
def train_BCQ(replay_buffer, device, args):
    policy = discrete_BCQ(device)
    while True:
        for _ in range(args.eval_freq):
            policy.train(replay_buffer)
""",
            line=16,
            column=9,
        ),
        Invalid(  # the model runs through `nn.parallel.data_parallel(netG, inputs, gpus)` (StackGAN's trainer, issue 27)
            """
import torch
import torch.nn as nn
def train(netG, loader, gpus):
    optimizer = torch.optim.Adam(netG.parameters())
    for x in loader:
        out = nn.parallel.data_parallel(netG, (x.cuda(),), gpus)
        loss = out.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            line=5,
            column=5,
        ),
        Invalid(  # gradient accumulation: backward in the inner loop, the step in the loop around it (BigGAN's D step)
            """
import torch
model = Net().cuda()
optimizer = torch.optim.Adam(model.parameters())
for step_index in range(num_steps):
    optimizer.zero_grad()
    for accumulation_index in range(num_accumulations):
        loss = model(next(batches)).mean() / num_accumulations
        loss.backward()
    optimizer.step()
""",
            line=4,
            column=1,
        ),
        Invalid(  # `closure()` in the Adam loop: the function hands the same callable to LBFGS's `step`, so by torch.optim's contract it runs the model and backpropagates (deep-image-prior's optimize(), issue 27)
            """
import torch
def optimize(kind, parameters, closure, lr, num_iter):
    if kind == "LBFGS":
        optimizer = torch.optim.LBFGS(parameters, lr=lr)
        def closure2():
            optimizer.zero_grad()
            return closure()
        optimizer.step(closure2)
    else:
        optimizer = torch.optim.Adam(parameters, lr=lr)
        for j in range(num_iter):
            optimizer.zero_grad()
            closure()
            optimizer.step()
def get_noise(shape):
    return torch.rand(shape).cuda()
""",
            line=11,
            column=9,
        ),
        Invalid(  # optimizers known by what built them, whatever their names: `Gopt, Dopt` returned by the class's own builder (SEGAN's `train`)
            """
import torch
import torch.optim as optim
class SEGAN(torch.nn.Module):
    def build_optimizers(self, opts):
        if opts.opt == "rmsprop":
            Gopt = optim.RMSprop(self.G.parameters(), lr=opts.g_lr)
            Dopt = optim.RMSprop(self.D.parameters(), lr=opts.d_lr)
        else:
            Gopt = optim.Adam(self.G.parameters(), lr=opts.g_lr)
            Dopt = optim.Adam(self.D.parameters(), lr=opts.d_lr)
        return Gopt, Dopt
    def train(self, opts, dloader, criterion, device):
        Gopt, Dopt = self.build_optimizers(opts)
        for clean, noisy in dloader:
            clean, noisy = clean.to(device), noisy.to(device)
            Dopt.zero_grad()
            d_loss = criterion(self.D(clean), 1) + criterion(self.D(self.G(noisy).detach()), 0)
            d_loss.backward()
            Dopt.step()
            Gopt.zero_grad()
            g_loss = criterion(self.D(self.G(noisy)), 1)
            g_loss.backward()
            Gopt.step()
""",
            line=14,
            column=9,
        ),
        Invalid(  # the model runs in the call that computes the backpropagated loss: a loss helper reached through a dict registry (ddim's `Diffusion.train`)
            """
import torch
from functions.losses import loss_registry
def train(config, train_loader, device):
    model = Model(config).to(device)
    optimizer = get_optimizer(config, model.parameters())
    for x, t in train_loader:
        model.train()
        loss = loss_registry[config.model.type](model, x.to(device), t)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            line=6,
            column=5,
        ),
        Invalid(  # optimizers named for the network they step (DCGAN-style `optimizerD`, `optimizerG`)
            """
import torch
netD, netG = netD.cuda(), netG.cuda()
optimizerD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
while True:
    for p in netD.parameters():
        p.data.clamp_(-0.01, 0.01)
    netD.zero_grad()
    errD = netD(real.cuda()).mean() - netD(netG(noise.cuda())).mean()
    errD.backward()
    optimizerD.step()
""",
            line=4,
            column=1,
            message="autocast",
        ),
        Invalid(
            """
import torch
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x.cuda()), y.cuda())
    loss.backward()
    optimizer.step()
""",
            line=2,
            column=1,
            message="autocast",
        ),
        Invalid(  # backward and step in a per-step helper (RL-Adventure's DQN)
            """
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = DQN().to(device)
optimizer = torch.optim.Adam(model.parameters())
def compute_td_loss(batch_size):
    state, action, reward = replay_buffer.sample(batch_size)
    q_value = model(state).gather(1, action)
    loss = (q_value - reward).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss
for frame_idx in range(1, num_frames + 1):
    action = model.act(state, epsilon)
    state, reward, done, _ = env.step(action)
    if len(replay_buffer) > batch_size:
        loss = compute_td_loss(batch_size)
""",
            line=13,
            column=1,
        ),
        Invalid(  # torchnet's Engine.train runs the network, its backward and the optimizer's step for every sample
            """
import torch
from torchnet.engine import Engine
def main(model, optimizer, train_loader):
    model.cuda()
    def step(sample):
        y = model(sample[0].cuda())
        return criterion(y, sample[1].cuda()), y
    engine = Engine()
    engine.train(step, train_loader, 10, optimizer)
""",
            line=9,
            column=5,
            message="torchnet's Engine trains in full float32",
        ),
        Invalid(  # ignite's Engine calls the process function a factory of the file hands it once per batch of `run`
            """
import torch
from ignite.engine import Engine
def make_trainer(net, opt, criterion):
    net.cuda()
    def update(engine, batch):
        opt.zero_grad()
        loss = criterion(net(batch[0].cuda()), batch[1].cuda())
        loss.backward()
        opt.step()
        return loss.item()
    return Engine(update)
def main(net, opt, criterion, train_loader):
    trainer = make_trainer(net, opt, criterion)
    trainer.run(train_loader, max_epochs=30)
""",
            line=14,
            column=5,
            message="ignite's Engine trains in full float32",
        ),
        Invalid(  # one engine run once per epoch and once more: one loop, reported at its first `run`
            """
import torch
from ignite.engine import Engine
net = Net().cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
def learn(engine, batch):
    opt.zero_grad()
    net(batch.cuda()).sum().backward()
    opt.step()
runner = Engine(learn)
for epoch in range(5):
    runner.run(loader, max_epochs=1)
runner.run(loader, max_epochs=2)
""",
            line=11,
            column=5,
            message="ignite's Engine trains in full float32",
        ),
        Invalid(  # the engine built in place, from a module-level process function
            """
import torch
import ignite.engine
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
def train_step(engine, batch):
    optimizer.zero_grad()
    loss = model(batch.cuda()).mean()
    loss.backward()
    optimizer.step()
trainer = ignite.engine.Engine(train_step)
trainer.run(loader, max_epochs=5)
""",
            line=11,
            column=1,
            message="ignite's Engine trains in full float32",
        ),
        Invalid(  # a helper of apex's fp16 utilities that reads a number off the loss changes no precision
            """
import torch
from apex.fp16_utils import to_python_float
model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total += to_python_float(loss)
""",
            line=5,
            column=1,
        ),
        Invalid(  # an optimizer of apex is no mixed precision: only its amp is
            """
import torch
from apex.optimizers import FusedAdam
model = Net().cuda()
optimizer = FusedAdam(model.parameters(), lr=1e-3)
for x, y in loader:
    loss = criterion(model(x.cuda()), y.cuda())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            line=5,
            column=1,
        ),
        Invalid(  # one optimizer per part of the model, stepped in a loop over them: one training step
            """
import torch
def train(net, batches, optimizers, steps):
    net.train()
    for i in range(steps):
        batch = next(batches)
        net.zero_grad()
        loss = net(batch.cuda()).mean()
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
""",
            line=4,
            column=5,
        ),
        Invalid(  # a learner class picked from a registry dict by a configured key: every entry's `train` trains
            """
LEARNERS_PLACEHOLDER
LEARNERS = {}
LEARNERS["value"] = ValueLearner
LEARNERS["policy"] = PolicyLearner
def run(args, net, buffer):
    learner = LEARNERS[args.learner](net)
    for batch in buffer:
        learner.train(batch)
""".replace("LEARNERS_PLACEHOLDER\n", _LEARNERS),
            line=22,
            column=5,
        ),
        Invalid(  # the loss helper runs the model in a loop of its own, over the tasks of a meta-batch
            """
import torch
class MetaLearner:
    def __init__(self, model, optimizer, device):
        self.model = model.to(device)
        self.optimizer = optimizer
    def outer_loss(self, batch):
        total = 0.0
        for x, y in zip(*batch):
            total = total + (self.model(x) - y).pow(2).mean()
        return total
    def train_iter(self, loader):
        for batch in loader:
            self.optimizer.zero_grad()
            loss = self.outer_loss(batch)
            yield loss.item()
            loss.backward()
            self.optimizer.step()
""",
            line=12,
            column=9,
        ),
        Invalid(  # a helper whose own loop trains is reported there, not again in the loop that calls it
            """
import torch
def fit_tasks(model, opt, tasks):
    for x, y in tasks:
        loss = model(x.cuda()).sub(y.cuda()).pow(2).mean()
        loss.backward()
        opt.step()
def train(model, opt, loader):
    for batch in loader:
        fit_tasks(model, opt, batch)
        decay = sum(p.pow(2).sum() for p in model.parameters())
        decay.backward()
        opt.step()
""",
            line=3,
            column=5,
        ),
        Invalid(  # the same, the helper's loop backpropagating and stepping through a call: reported once, there
            """
import torch
def update(loss, opt):
    opt.zero_grad()
    loss.backward()
    opt.step()
def fit_tasks(model, opt, tasks):
    for x, y in tasks:
        update(model(x.cuda()).sub(y.cuda()).pow(2).mean(), opt)
def train(model, opt, loader):
    for batch in loader:
        fit_tasks(model, opt, batch)
        decay = sum(p.pow(2).sum() for p in model.parameters())
        decay.backward()
        opt.step()
""",
            line=7,
            column=5,
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._loops: dict[int, cst.CSTNode] = {}
        self._evidence: dict[int, set[str]] = {}  # id(loop) or function key -> {"backward", "step", "model"}
        self._mixed = False
        self._module_names: set[str] = set()  # names the file treats as modules (`G.train()`, `D.zero_grad()`)
        # calls of a name that may be a module: (the name, the loops around the call, or its function's key and def)
        # (and the keys of the functions around the call: a model run there runs in each of them)
        self._maybe_model: list[tuple[list[str], tuple[int, ...], Optional[tuple], Optional[int], tuple]] = []
        self._fits: list[cst.Call] = []  # `trainer.fit(module)` of a Lightning Trainer in 32 bits on an accelerator
        self._engine_trains: list[cst.Call] = []  # `engine.train(network, iterator, maxepoch, optimizer)` of torchnet
        # `trainer.run(loader, ...)` of an ignite Engine, with the process function it calls per batch
        # and the call that builds the engine
        self._engine_runs: list[tuple[cst.Call, cst.FunctionDef, cst.Call]] = []
        # what each def does outside its loops, by the def (a name may be defined twice: `closure`)
        self._def_evidence: dict[int, set[str]] = {}
        # `optimizer.step(closure)` with `closure` a def of the function: the step runs its body
        # (the defs the name may hold, the innermost loop around the step, else its function's key and def)
        self._closure_steps: list[tuple[tuple[cst.FunctionDef, ...], Optional[cst.CSTNode], Optional[tuple], Optional[int]]] = []
        self._looped_models = LoopedModels()  # model runs in a function's own loops
        self._detached_runs: set[int] = set()  # id(call) of `call.detach()`: the run's graph is dropped at once
        # with-regions over a context manager the function is handed (`with amp_autocast():`), open
        # now: (the with, its function, what it enters); a model run in one of its own function's
        # is of unknown precision for the loops and the function around it (memlint.analysis.handed_contexts)
        self._regions: list[tuple[cst.With, Optional[cst.CSTNode], Handed]] = []
        # loop ids and function keys with a model run in such a region, the region, and for the run
        # of a name the file may treat as a module, its entry in `_maybe_model`
        self._region_runs: list[tuple[tuple, Handed, Optional[int]]] = []
        self._call_scopes: dict[int, cst.CSTNode] = {}  # id(call) -> the function it is made in
        # calls made in such a region (a per-step helper of this file that runs the model): id(call) -> (marks, region)
        self._region_calls: dict[int, list[tuple[tuple, Handed]]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        func = node.func
        if ctx.function_node is not None:  # (a caller handing a context manager reads its names here)
            self._call_scopes[id(node)] = ctx.function_node
            if self._regions:
                self._note_region_run(ctx, call=node)
        if mixed_precision_call(node, ctx):  # autocast, a GradScaler, apex's amp / FP16_Optimizer
            self._mixed = True
        if isinstance(func, cst.Attribute) and func.attr.value in _LOW_PRECISION_METHODS:
            self._mixed = True
        if isinstance(func, cst.Attribute) and func.attr.value == "detach" and isinstance(func.value, cst.Call):
            self._detached_runs.add(id(func.value))  # (seen before the inner call: visits go outside in)
        for kind in training_work(node, ctx):  # a helper of another file (`train_epoch(model, ...)`)
            if kind == "model":
                self._note_model(ctx)
            elif ctx.loop is not None:
                self._note(ctx.loop, kind)
            elif ctx.function_key is not None:
                self._note_function(kind)
        if runs_module(node, ctx):
            # a method of `self` (`self.temperature_scale(logits)`) runs no module the closure can
            # name: a closure handed to a step runs the model only through one (`self.model(x)`)
            self._note_model(ctx, for_closure=not runs_own_method(node, ctx), detached=id(node) in self._detached_runs)
        elif calls_optimizer_closure(node, ctx):
            # `closure()` in the loop, a callable the function hands to an optimizer's `step`:
            # by torch.optim's contract it runs the model and backpropagates (memlint.analysis.closures)
            self._note_model(ctx)
            self._note(ctx.loop, "backward")
        else:
            callees = run_receivers(func)
            if callees and ctx.grad_mode.records_graph is not False:  # (a model run under no_grad: above)
                loops = tuple(id(loop) for loop in ctx.loops)
                for loop in ctx.loops:
                    self._loops.setdefault(id(loop), loop)
                self._maybe_model.append((callees, loops, None if loops else ctx.function_key, None if loops else self._def_id(), ctx.function_chain))
                self._note_region_run(ctx, maybe=len(self._maybe_model) - 1)
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method == "fit" and lightning_fit(node, ctx) is not None:
            self._fits.append(node)
        if method == "train" and (run := torchnet_engine_run(node, ctx)) is not None and run[0] == "train":
            self._engine_trains.append(node)  # torchnet's `engine.train(network, ...)`: the loop runs inside
        if method == "run" and (run := ignite_engine_run(node, ctx)) is not None:
            self._engine_runs.append((node, *run))  # ignite's loop: the process function once per batch
        if method in MODULE_MARKERS:
            owner = held_name(func.value)  # `G.train()`, `state["model"].train()`
            if owner is not None and owner != "self":
                self._module_names.add(owner)
        kind = None
        loops = ctx.loops
        if method in BACKWARD_METHODS:
            kind = "backward"
        elif method == "step" and (receiver := held_as(func.value)) is not None:  # `opt.step()`, `state["optimizer"].step()`
            stepped = loops and isinstance(func.value, cst.Name) and optimizer_loop_target(loops[-1]) == receiver
            if stepped:  # `for optimizer in optimizers: optimizer.step()`: the step of the loop around it
                loops = loops[:-1]
            kind = "step" if stepped or ctx.model.steps_optimizer(node) else None
        if kind is None:
            return
        if kind == "step" and (closures := handed_closure(node, ctx)):
            # LBFGS's `optimizer.step(closure)`: the closure's model run and backward are this step's
            # (the tuple of the function's defs so named, one object for every step handed that name:
            # `finish` reads it once, however many steps and defs a file has)
            self._closure_steps.append((closures, loops[-1] if loops else None, None if loops else ctx.function_key, None if loops else self._def_id()))
            if loops:
                self._loops.setdefault(id(loops[-1]), loops[-1])
        if kind == "backward" and loops:
            # gradients accumulated in an inner loop (micro-batches) are stepped by the loop around
            # it: a backward counts for every enclosing loop, as a model run does
            for loop in loops:
                self._note(loop, kind)
        elif loops:
            self._note(loops[-1], kind)
        elif ctx.function_key is not None:  # a per-step helper (`compute_td_loss`): its caller's loop trains
            self._note_function(kind)

    def visit_Assign(self, node: cst.Assign) -> None:
        # the modules handed to the call whose result is backpropagated run in it
        ctx = self.ctx
        if not ctx.loops:
            return
        handed = modules_handed_to_backpropagated_call(node, ctx)
        if handed is None:
            return
        module, names = handed
        if module:
            self._note_model(ctx)
        elif names:  # a name the file treats as a module (`model.train()`), known at the end
            loops = tuple(id(loop) for loop in ctx.loops)
            for loop in ctx.loops:
                self._loops.setdefault(id(loop), loop)
            self._maybe_model.append((names, loops, None, None, ctx.function_chain))
            self._note_region_run(ctx, maybe=len(self._maybe_model) - 1)

    def _note_model(self, ctx, for_closure: bool = True, detached: bool = False) -> None:
        if ctx.grad_mode.records_graph is False:
            # a model run under `torch.no_grad()` saves no activations for backward: autocast has
            # nothing there to shrink (logits computed once, then a temperature fitted to them)
            return
        self._note_region_run(ctx)
        # the model may run in a loop nested in the training loop (micro-batches): every enclosing one
        for loop in ctx.loops:
            self._note(loop, "model")
        if not ctx.in_loop and ctx.function_key is not None:
            self._note_function("model", for_closure)
        elif ctx.function_key is not None and not detached:
            # a helper that runs the model in a loop of its own (not `model(x).detach()`: features
            # kept without their graph): its run, where that loop neither backpropagates nor steps
            self._looped_models.note(ctx, for_closure)

    def _note_function(self, kind: str, for_closure: bool = True) -> None:
        """`kind` done by the current function outside its loops: under its key (a name, as the
        file's call sites are) and, where `for_closure`, under its def (for a closure handed to a step)."""
        self._evidence.setdefault(self.ctx.function_key, set()).add(kind)
        if for_closure:
            self._def_evidence.setdefault(self._def_id(), set()).add(kind)

    def _def_id(self) -> Optional[int]:
        function = self.ctx.function_node
        return None if function is None else id(function)

    def _note(self, loop: cst.CSTNode, kind: str) -> None:
        self._loops[id(loop)] = loop
        self._evidence.setdefault(id(loop), set()).add(kind)

    def visit_With(self, node: cst.With) -> None:
        handed = handed_region(node, self.ctx)
        if handed is not None:  # `with amp_autocast():` of a parameter: the caller may hand autocast
            self._regions.append((node, self.ctx.function_node, handed))

    def leave_With(self, node: cst.With) -> None:
        if self._regions and self._regions[-1][0] is node:
            self._regions.pop()

    def _mark_unknown_precision(self, facts) -> None:
        """The loops and functions whose model runs in a with-region over a handed-in context
        manager that the file's callers do not all show to be plain: of unknown precision (a
        function's mark reaches the loops that call it, as its work does)."""
        plain: dict[int, bool] = {}
        runs = list(self._region_runs)
        if self._region_calls:  # `with amp_autocast(): loss = compute_loss(model, batch)`: the helper's model run
            helpers = helper_work(self._evidence, facts)
            for key, sites in facts.call_sites.items():
                work = helpers.get(key)
                if work and ("model" in work or LOOPED_MODEL in work):
                    for site in sites:
                        for marks, handed in self._region_calls.get(id(site.node), ()):
                            runs.append((marks, handed, None))
        for marks, handed, maybe in runs:
            if maybe is not None and not any(callee in self._module_names for callee in self._maybe_model[maybe][0]):
                continue  # a name's run: a model's only where the file treats the name as a module
            known = plain.get(id(handed))
            if known is None:
                known = plain[id(handed)] = callers_hand_plain(handed, facts.call_sites.get(handed.key, []), self._call_scopes)
            if not known:
                for mark in marks:
                    self._evidence.setdefault(mark, set()).add(_UNKNOWN_PRECISION)

    def _note_region_run(self, ctx, maybe: Optional[int] = None, call: Optional[cst.Call] = None) -> None:
        """A model run (or, with `maybe`, the run of a name the file may treat as a module, entry
        `maybe` of `_maybe_model`; with `call`, a call that may reach a helper of this file that
        runs one) inside a with-region over a handed-in context manager of its own function: its
        loops and function are of unknown precision, if the region turns out not plain."""
        if not self._regions:
            return
        function = ctx.function_node
        for _, scope, handed in self._regions:
            if scope is function:
                marks = tuple(id(loop) for loop in ctx.loops) + ((ctx.function_key,) if ctx.function_key is not None else ())
                if call is not None:
                    self._region_calls.setdefault(id(call), []).append((marks, handed))
                else:
                    self._region_runs.append((marks, handed, maybe))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("float16", "half", "bfloat16") and self.ctx.resolve(node) in LOW_PRECISION_DTYPES:
            self._mixed = True

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in _PRECISION_KEYWORDS:
            self._mixed = True

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if not self._mixed and _PRECISION_STRING.search(node.value):  # docstrings are long: search until found
            # (a `--amp` flag's name counts: whether the file's use of it selects nothing cannot be
            # told soundly, as the parsed arguments reach code this file does not show)
            self._mixed = True

    def finish(self, facts) -> None:
        if self._mixed:
            return
        # the file may run on the CPU only (the model's `host_only`: it names no accelerator, and it
        # is a script, or its importers in the project name none); then only a loop whose training
        # work runs in a file that names one (`policy.train(buffer)` of TD3.py, which puts its
        # networks on cuda: "accelerator" from the project pass) is on an accelerator
        host_only = self.ctx.model.host_only(self.ctx.project.host_importers)
        for callees, loops, function, definition, chain in self._maybe_model:
            if any(callee in self._module_names for callee in callees):
                for loop in loops:
                    self._evidence.setdefault(loop, set()).add("model")
                if function is not None:
                    self._evidence.setdefault(function, set()).add("model")
                    self._def_evidence.setdefault(definition, set()).add("model")
        # a model run in a helper's own loop that neither backpropagates nor steps is the helper's
        # work, for a loop that calls it with gradients on (memlint.analysis.looped_models)
        self._looped_models.settle(self._evidence, self._def_evidence, facts)
        self._mark_unknown_precision(facts)
        closure_work: dict[int, set[str]] = {}  # loop -> what the closures its steps run do
        works: dict[int, set[str]] = {}  # id(the defs a name may hold) -> what every one of them does
        for defs, loop, function, definition in self._closure_steps:
            # what every def the name may hold does in its own body (a helper it calls is not followed)
            work = works.get(id(defs))
            if work is None:
                work = works[id(defs)] = set.intersection(*(self._def_evidence.get(id(d), set()) for d in defs))
            if loop is not None:
                closure_work.setdefault(id(loop), set()).update(work)
            elif function is not None:
                self._evidence.setdefault(function, set()).update(work)
                self._def_evidence.setdefault(definition, set()).update(work)
        if not host_only:
            for fit in self._fits:  # Lightning's loop runs in `fit`; its Trainer sets the precision
                self.report(
                    fit,
                    "Lightning trains in full float32 precision: `precision=\"bf16-mixed\"` (or \"16-mixed\") in the "
                    "Trainer computes activations under autocast, roughly halving the activation memory saved for backward",
                )
            for run in self._engine_trains:  # torchnet's loop: network, backward and step for every sample
                self.report(
                    run,
                    "torchnet's Engine trains in full float32 precision: computing the network's activations under "
                    '`torch.autocast("cuda", dtype=torch.bfloat16)` (or float16 with a GradScaler) roughly halves '
                    "the activation memory saved for backward",
                )
            reported: set[int] = set()
            for run, process, engine in self._engine_runs:
                # a training step where the process function itself (outside loops of its own) runs
                # a model, backpropagates and steps an optimizer, the last two on every call (an
                # evaluation engine built from the same step skips them under a condition); once per
                # engine: its first `run` (`trainer.run(...)` once per epoch is one loop)
                if id(engine) in reported or not trains_unconditionally(process):
                    continue
                if {"backward", "step", "model"} <= self._def_evidence.get(id(process), set()):
                    reported.add(id(engine))
                    self.report(
                        run,
                        "ignite's Engine trains in full float32 precision: computing the activations of its "
                        'process function under `torch.autocast("cuda", dtype=torch.bfloat16)` (or float16 with '
                        "a GradScaler) roughly halves the activation memory saved for backward",
                    )
        helpers = helper_work(self._evidence, facts)  # what each function does, with what it calls
        called_in: dict[int, set[str]] = {}
        for key, sites in facts.call_sites.items():
            for site in sites:
                if site.loop is not None and key in helpers:
                    called_in.setdefault(id(site.loop), set()).update(work_at_site(helpers[key], site))
                    self._loops.setdefault(id(site.loop), site.loop)
        for key, work in closure_work.items():
            called_in.setdefault(key, set()).update(work)
        for key, loop in self._loops.items():
            evidence = self._evidence.get(key, set()) | called_in.get(key, set())
            if {"backward", "step", "model"} <= evidence and not (host_only and "accelerator" not in evidence):
                if _UNKNOWN_PRECISION in evidence:
                    continue  # its model runs under a context manager a caller hands in: autocast, maybe
                self.report(
                    loop,
                    "training loop in full float32 precision: computing activations under "
                    '`torch.autocast("cuda", dtype=torch.bfloat16)` (or float16 with a GradScaler) roughly '
                    "halves the activation memory saved for backward",
                )
