"""ML002 eval-without-no-grad."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis import GradMode
from memlint.analysis.delegation import self_helper_runs_model
from memlint.analysis.evaluation import Region, factory_of, is_model_call, regions, runs_evaluated_model, runs_method_of, runs_model_method
from memlint.analysis.frameworks import torchnet_engine_run, torchnet_test_builds_graph
from memlint.analysis.frozen import is_frozen_model
from memlint.analysis.notebooks import jupyter_cells
from memlint.analysis.returned import hands_back_no_history, returns_nothing_from
from memlint.analysis.walk import code_descendants
from memlint.diagnostics import Severity
from memlint.rule import Invalid, NodeFix, Rule, Valid
from memlint.rules.ml002_eval_without_no_grad.meta import META
from memlint.pipeline.text import shorten


class EvalWithoutNoGrad(Rule):
    """
    ## What it does
    Finds a model run in an evaluation context while gradient tracking is on. Evaluation context
    means: after `model.eval()` / `self.eval()` / `model.train(False)` in the same function (in a
    block that certainly ran, with no `.train()` in between; also chained onto the construction
    whose result the statement binds: `model = Generator(4).cuda().eval()`, which puts only that
    target in eval mode: a later `net.eval()` opens `net`'s own region; X is a model when the scope builds it
    from an nn.Module class, the file's own or one it imports from another linted file: MUNIT's
    `trainer = MUNIT_Trainer(config)`), in a module-level function that
    runs a global model the module itself put in eval mode (`model.eval()` as a statement of the
    module, not behind an `if`; the function binds no local of that name, calls no `.train()`, is
    not called by the module before the `.eval()`, is not handed to other code as a value (captum's
    `LayerIntegratedGradients(forward_func, ...)` takes gradients through it), and nothing in the
    file calls `model.train()`, rebinds `model` after the `.eval()` or declares it `global`: SSD's
    `detect.py`), after a method of the class that certainly puts the model in eval mode for the
    literal argument given (`self.net_mode(train=False)` whose body runs `self.net.eval()` in the
    `else` of `if train:`), in the body of `with X(model):` where X is a class of the project whose
    `__enter__` puts models in eval mode (pytorch_sac's `utils.eval_mode`, calling `model.train(False)`), after
    `X.m()` where every project method `m` only puts in eval mode every model its class holds (SCAN's
    `model.val_start()`, whose body is `self.img_enc.eval(); self.txt_enc.eval()`; X a model by the
    evidence `X.eval()` asks; not where the function also calls a method that may backpropagate or
    step; a statement calling a project method so named that may call `.train()`, itself or through
    `self.m()`, `model.train_start()`, ends the region), in the eval branch of a mode switch (`if phase == TRAIN: gat.train()` /
    `else: gat.eval()`: the code after it outside `if phase == TRAIN:` blocks, where backward may
    only run inside those) when the file calls the function with another constant for that
    parameter (`main_loop(phase=LoopPhase.TEST)`, also through the name bound to a factory that
    returns it; for a method, its class calling `self.run_epoch('val', loader)`, every use of
    `self.run_epoch` such a call: CenterNet's trainer, whose eval branch may also pick the
    wrapped module, `model = self.model.module`, and empty the cache) outside any `no_grad`, where
    one of the calls choosing eval runs with gradients (the grad mode at the call: not in a method
    decorated `@torch.no_grad()`, nor after `torch.set_grad_enabled(False)`, nor only ever called
    without gradients), no `with` of the function takes a manager that reads the phase (`with
    torch.no_grad() if phase != 'train' else nullcontext():`), the body never binds the phase
    again, and no `elif phase == 'val':` of a chain backpropagates, or where a loop over literal phases around the switch selects
    it (`for phase in ["train", "val"]:`), in a loop over a loader whose name
    marks it as validation or test data (`val_loader`, `test_dl`, `dev_dataloader`, ...) or in a
    loop that draws its batches from one by hand (`test_dataloader.__iter__().next()`), or in a
    function whose name says it evaluates (`evaluate`, `validate`, `run_test`, `predict`, `infer`,
    `inference`, `eval_epoch`, `eval_train`, ...; not one whose name says it trains before it evaluates, `trainValidateSegmentation`;
    a method of an nn.Module so named only where it hands back nothing with history, its model outputs
    flow nowhere else (no store, append or unknown call) and it calls no other method of self or of a
    submodule, pytorch-semseg's `tile_predict` returning a numpy score map: otherwise it is a building block
    of a forward its callers may train through) or draws samples to look at (a verb of drawing or showing with
    a noun of what is shown: `sample_images`, `save_samples`, `generate_imgs`; not `sample_actions`)
    and keeps them (hands back nothing with history), in a file that calls no `.eval()` (where one
    does, the calls after it are the regions). The first model call of each such region is reported.
    Each model put in eval mode has a region of its own, also where another model's region holds the
    block (`model_1.eval()`, then `if two_stage: model_2.eval(); model_2(x)`), and a name bound again
    to a model built in eval mode (`net = Net(classify=True).eval()`) opens a new one. The mode call
    may be chained into `Module.apply(fn)`, which returns the module (`model.eval().apply(add_hooks)`),
    or made by a function of the file, or a method of the class called on `self`, that returns the
    model it put in eval mode by an unconditional statement (`self.net = self._load_native(...)`
    whose body ends `net.eval()`, `return net`). `X.eval()` under `if do_aff:` (no `else`, a test of
    names and comparisons) reaches the bodies of later `if`s whose test implies it (`if do_aff and
    do_tps:`), until a name of the test is rebound or something trains, where the rest of the block
    computes no gradients. A method of the evaluated model that a class of the file decorates with
    `@torch.no_grad()` is not taken for its run (the receiver's class is not known). After
    `X.eval()` the call must run X itself: `X(x)`, a submodule `X.encoder(x)`, or a method of X fed
    data (`X.get_action(obs)`, `X.get_last_selfattention(img)`, or a method that every nn.Module class of
    the program defining it runs a model in: protonets' `model.loss(sample)`, in a file that never
    names torch), or a function of the file handed
    X that calls it (`get_sample_image(G, n)` whose body runs `G(z)`, or `get_sample_image()` whose
    body runs the global `G`, with no grad switch of its own; or runs X through a method of it fed data,
    `greedy_decode(model, src)` whose body runs `model.encode(src, mask)`), `nn.parallel.data_parallel(X, inputs, gpus)`, an object built around X and fed data
    (`elbo = SVI(model, ...)`, every binding of `elbo` in its scope so built, then `-elbo(x)`), a method of the class that runs
    `self.model` (`self._process_one_batch(x)` after `self.model.eval()`; its `if` blocks that the
    call's literal arguments rule out do not run: `self._run_one_epoch(cross_valid=True)` skips the backward
    under `if not cross_valid:`, `self._pass(loader, 'val')` the one under `if phase == 'train':` (also
    `!=`, `in`, `not in` a literal tuple; strings, integers, `True`/`False`/`None`, never compared across kinds;
    positional-only parameters counted; not where another class of the file overrides the helper); in a function named as an
    evaluation or a loop over evaluation data, a method that runs any model of `self`, in an
    nn.Module also through a method of self fed data whose name says it runs it: CloserLookFewShot's
    `self.correct(x)` over `test_loader`, whose body runs `self.set_forward(x)`), `self.feature.forward(x)`
    in an nn.Module (its submodule, whatever built it), after `self.eval()` a method fed data, named as
    running a module, of a submodule of self (`self.gen_a.encode(x)`, where `self.gen_a` is valued a module
    or its class gives it `.parameters()`: MUNIT's trainer `forward`; not a tokenizer's `encode`, nor a method
    some project method so named may compute gradients in, a PGD attack's `perturb`), a local alias of a submodule
    (`encoder = self.net.encoder`; also in a module-level script, and either branch of a conditional
    expression of such attributes: `encode = trainer.gen_a.encode if a2b else trainer.gen_b.encode`), a `forward_*` method fed data (`forward_masks(x)`), a submodule
    named like nothing that the model's class of the file assigns a layer (`model._encoder(x)`); a fresh layer or a DataFrame used later (another notebook cell) is not X's evaluation,
    nor is a parameterless function that builds the model it runs (by its class, or through a
    factory of the file that returns one: `net = densenet_cifar()`), loads no weights and loops over
    nothing (`def test(): net = VGG(); net(torch.randn(2, 3, 32, 32))`: a shape check). Building a model from a class
    (`Model(envs)`, even when `Model` is annotated `nn.Module`) runs nothing, nor does a call whose result,
    the scope's one binding of its name, then gets a method only a module has (`model = net(pretrained=True)`
    then `model.eval()`: a factory looked up by name; the run is the later `model(x)`), nor does `cls.helper(model)`
    in a `@classmethod`, a method of the class as `self.helper(model)` is, whatever its name (DensePose's
    `extract_embedder_from_model` only reads an attribute of the model). Wrapping inputs in
    `Variable(x, volatile=True)` does not turn gradients off (it has done nothing since PyTorch
    0.4), so it does not silence the rule; `torch` reached through a star import
    (`from utils import *`) is still torch, so `@torch.no_grad()` there does.

    torchnet's `engine.test(network, iterator)` (an `Engine` of `torchnet.engine`, by its import) is an
    evaluation loop of its own: it runs the network over every batch and turns no gradients off, so
    it is reported where the network is, by Python's scope rules, the very function the file also
    hands to that engine's `train` (its parameters are the ones trained), and neither it nor a
    function of the file it calls sets a grad mode (a parameter, or another scope's function of
    the same name, is not read).

    It stays silent when the code runs without gradient tracking: `with torch.no_grad()`,
    `torch.inference_mode()`, `torch.set_grad_enabled(False)`, their decorator forms, a decorator of
    the project's own that wraps `no_grad`, a function only ever called from such a context (in any
    file linted with it, directly or through callers that are; a call of a function picked out of a
    literal of functions, `infer_fn = [infer_basic, infer_mirror][level]` then `infer_fn(x)`, counts
    as a call of each, where the picked name is bound once in a function and only ever called; a
    name bound at module level (another file may import it) or without that evidence blocks the
    proof for each function of its literal; a method call whose receiver's class
    is not known, `gan.visualize_results()` with `gan` any of several classes or the result of a
    call, is taken as a call of every method of the project so named, unless training code makes
    it; one made without gradients on a receiver that the file builds with one of several classes
    (`trainer = MUNIT_Trainer(config)` or `UNIT_Trainer(config)`, then `trainer.sample(x)` under no_grad)
    is a call without gradients of each class's method; one made without gradients settles the methods so named where they all override one
    method of a common base: HRNet's `test_dataset.multi_scale_inference(...)` under no_grad, and
    `self.inference(...)` there may run a subclass's override), and the hooks a framework already
    runs without gradients (Lightning's `validation_step`, `test_step`, `predict_step` and their
    `on_*` hooks), and a method that runs its model under its own `no_grad` (where every method of
    the program so named does: curl's `agent.sample_action(obs)`). A model the file freezes and never thaws (`model.freeze()`, Lightning's, or
    `model.requires_grad_(False)`, also in a chain of module methods, `sampler.eval().requires_grad_(False)`,
    or chained onto its construction, `model = Net().eval().requires_grad_(False)`, or `p.requires_grad =
    False` over its parameters, by a statement of the loop's body, not behind an `if` that may keep a head
    trainable, in a loop that neither breaks nor sets `True` for some; locally in the
    function, for `self.model` anywhere in its class, for a module-level name frozen by the module's
    own statements in a function that binds no local of that name, or in module-level code by a statement
    before the run in a block that holds it, with nothing done to it in between but runs, `.eval()`, `.to()`,
    `.cuda()`, `.half()` (not `model.backbone.requires_grad_(False)`, nor a freeze behind an `if` the run is
    not behind, nor one followed by `model.fc = nn.Linear(...)` or `setattr`); a parameter of a module-level function
    that every call of it in the linted files hands a model its caller froze before the call (also in the
    blocks around the call), or makes
    without gradients, also through callers that pass their own such parameter on: KAIR's
    `test(model, L)`) builds no graph, so an evaluation region
    whose first model run is such a model, or that evaluates such a model (`model.requires_grad_(False)`,
    `model.eval()`, then `evaluate_coco(..., model)`), is not reported (nor what it computes from the outputs). It also stays silent when the evaluation region computes gradients
    (`.backward()`, `torch.autograd.grad`, `torch.func.*`: saliency maps and adversarial examples
    need them; also where it hands what it computed from its model to a function of the file that
    runs backward on what that parameter holds: a perceptual or teacher net's outputs fed to
    `step(optimizer, loss)`)
    or runs a model whose `forward` computes them, in any file linted with it (a learner
    that adapts itself with `torch.autograd.grad` at test time, MAML-style), also in a function
    nested in it or through a submodule it runs (robustness's `AttackerModel` runs `self.attacker`,
    a PGD attack), where that submodule runs behind `if flag:` of a parameter defaulting to False
    only in a call that may turn the flag on (`model(x, y, make_adv=True)`, or `**kwargs`), and
    also for a model a project function returns, alone or first in a tuple (`model, _ =
    make_and_restore_model(...)`); in a Jupyter notebook's own code, a cell that computes gradients
    leaves the region's other cells evaluation (not an earlier statement binding a name it reads: a forward it may differentiate), inside an explicit `torch.enable_grad()`, and in a function that training code of
    the linted files calls with gradients on (a loop that calls backward or an optimizer's step, a
    function that does, Lightning's `training_step`, also through the forward of its own module that such a
    step runs as `self(batch)`: nerf_pl's `render_rays`, whose nested `inference` the forward reaches; not a
    forward whose `if` tests read `self.training` or a defaulted parameter, which the step runs only in part): a `predict()` that a training step also runs
    needs its gradients, and must not be put under `no_grad`. That exemption does not hold for a
    function that puts its model in eval mode itself and hands back nothing that can carry autograd
    history (no return, or numbers, arrays, `.item()`s, detached values), storing nothing on `self`,
    a parameter or a global: nothing it computes can reach its caller's backward, so it is
    evaluation whoever calls it (Informer2020's `vali`, called by `train` after each epoch; MAML's
    `evaluation()`, whose `net.eval()` opens each episode and whose numbers come back through a
    statistics helper of the file), as is one that builds its own model (`model = Model(envs)`) and
    returns and stores nothing computed from it (cleanrl's `dqn_eval.evaluate`); a
    validation loss it returns for the caller to backpropagate (a meta-learning outer step) keeps
    it silent.

    Accepted limits (silence when unsure): `model.eval()` behind an `if`, or a `.train()` call in a
    nested block, ends the region; `pytest`-style `test_*` functions and names such as
    `validate_config` are not evaluation; the callers memlint sees are those in the files it lints
    (the project pass, docs/architecture.md), so a library's `predict()` that leaves grad mode to
    its caller is reported when nothing linted with it calls it under `no_grad`. Conversely, an
    `evaluate()` that a training script calls after training (with gradients on, outside any
    `no_grad`) counts as called by training code and stays silent, unless it puts the model in eval
    mode itself and hands back nothing with history (above). A mode switch's finding has no fix
    (`torch.set_grad_enabled(phase == TRAIN)` is the caller's choice).

    ## Why is this bad?
    With gradients on, every forward saves the activations its backward would need and links the
    outputs into an autograd graph. Evaluation never calls backward, so that memory is wasted for
    as long as the outputs (or anything computed from them) are alive, and holding an output across
    iterations keeps every graph alive (see ML001).

    ## Example
    ```python
    def evaluate(model, loader):
        model.eval()
        correct = 0
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
        return correct
    ```

    ## Use instead
    ```python
    @torch.no_grad()
    def evaluate(model, loader):
        model.eval()
        correct = 0
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
        return correct
    ```

    ## Fix safety
    The fix adds `@torch.no_grad()` to the function when the whole body is evaluation (its name says
    so, or `.eval()` is called before any model call), and otherwise wraps the loop (or the
    statement) that runs the model in `with torch.no_grad():`. With `prefer-inference-mode = true`
    it uses `torch.inference_mode()` instead (faster, but its tensors can never be used in autograd
    later). The fix is unsafe: if the outputs were used for gradients after all (outside the view
    of this file), they no longer can be. It uses the name the file imports `torch` under; when
    `torch` is not imported as a module, or the region contains `yield` / `await`, there is no fix.

    ## Measured effect
    Evaluation loop, 20 batches of 256 through an MLP 1024-2048-2048-10 (6.3M parameters), fp32,
    PyTorch 2.13 on CPU (exact tensor-storage tracker): peak 36.1 MiB with gradients on, 29.1 MiB
    under `torch.no_grad()`. The saving is the activations of one forward; it grows with batch size
    and depth, and without bound when outputs are kept across iterations (ML001).

    Fixture `ml002_eval_without_no_grad.py`, `memlint confirm fixtures` (PyTorch 2.13.0+cpu, exact
    tensor-storage tracker; docs/measured-savings.md): 5 batches of 256 through an MLP
    256-1024-1024-10 with memlint's `@torch.no_grad()` fix: 10,827,824 B before, 8,710,184 B after
    (2.0 MiB, 19.6% saved).
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "unsafe"

    VALID = [
        Valid(  # PaddlePaddle code: the file imports paddle and never torch
            """
import paddle
def evaluate(net, loader):
    net.eval()
    for x, y in loader:
        print(net(x))  # a paddle Layer: torch.no_grad has no say here
"""
        ),
        Valid(  # a helper named as an evaluation whose only caller hands it a model frozen first (KAIR's `utils_model.test`): no run builds a graph
            """
import torch
def predict(model, x):
    return model(x)
def main(net, images):
    for p in net.parameters():
        p.requires_grad = False
    return [predict(net, x) for x in images]
"""
        ),
        Valid(  # a model factory looked up by name, its result put in eval mode: the call builds a model, and the run is under no_grad
            """
import importlib
import torch
def run_inference(names):
    zoo = importlib.import_module("zoo")
    x = torch.rand(1, 3, 32, 32)
    for name in names:
        net = getattr(zoo, name)
        model = net(pretrained=True)
        model.eval()
        with torch.no_grad():
            y = model(x)
"""
        ),
        Valid(  # `self.eval()`, then a method named like encoding of an attribute that is no module (nothing gives it `.parameters()`): a tokenizer
            """
import torch
import torch.nn as nn
from text import Tokenizer
class Captioner(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokenizer = Tokenizer()
        self.head = nn.Linear(4, 4)
    def forward(self, x):
        return self.head(x)
    def prepare(self, text):
        self.eval()
        ids = self.tokenizer.encode(text)
        self.train()
        return ids
"""
        ),
        Valid(  # each trainer's `sample` puts its model in eval mode; the one call, on a receiver built by either class, runs under no_grad: neither builds a graph
            """
import torch
import torch.nn as nn
from nets import Generator
class Translator(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = Generator()
        self.opt = torch.optim.Adam(self.gen.parameters())
    def sample(self, x):
        self.eval()
        out = self.gen.decode(self.gen.encode(x))
        self.train()
        return out
class Cycle(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = Generator()
        self.opt = torch.optim.Adam(self.gen.parameters())
    def sample(self, x):
        self.eval()
        out = self.gen.decode(self.gen.encode(x))
        self.train()
        return out
def main(kind, loader):
    if kind == "cycle":
        trainer = Cycle()
    else:
        trainer = Translator()
    for x in loader:
        with torch.no_grad():
            shown = trainer.sample(x)
        print(shown.mean().item())
"""
        ),
        Valid(  # a module's `predict` that hands back its output with history: a building block its callers may train through
            """
import torch
import torch.nn as nn
class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 5, 1)
    def forward(self, x):
        return self.head(x)
    def predict(self, images):
        return self.forward(images).softmax(1)
"""
        ),
        Valid(  # a module's `tile_predict` keeping nothing with history, only ever called under no_grad
            """
import numpy as np
import torch
import torch.nn as nn
class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 5, 1)
    def forward(self, x):
        return self.head(x)
    def tile_predict(self, images):
        score = np.zeros((images.shape[0], 5, 8, 8))
        for i in range(2):
            tile = images[:, :, i * 4:(i + 1) * 4]
            score[:, :, i * 4:(i + 1) * 4] = self.forward(tile).softmax(1).data.cpu().numpy()
        return score.astype(np.float32)
def show(net, images):
    with torch.no_grad():
        print(net.tile_predict(images).sum())
"""
        ),
        Valid(  # nested helpers reached only through a pick out of a list or a dict of them, called under no_grad (airbench's `infer_fn = [infer_basic, infer_mirror, ...][tta_level]`)
            """
import torch
def infer(model, batches, level=0):
    def infer_plain(x, net):
        return net(x).clone()
    def infer_mirror(x, net):
        return 0.5 * net(x) + 0.5 * net(x.flip(-1))
    def infer_both(x, net):
        return 0.5 * infer_mirror(x, net) + 0.5 * infer_plain(x, net)
    model.eval()
    infer_fn = [infer_plain, infer_mirror, infer_both][level]
    with torch.no_grad():
        return torch.cat([infer_fn(x, model) for x in batches])
def predict(model, x, key):
    def predict_label(x):
        return model(x).argmax(1)
    def predict_scores(x):
        return model(x).softmax(1)
    with torch.no_grad():
        return {"label": predict_label, "scores": predict_scores}[key](x)
"""
        ),
        Valid(  # frozen by `requires_grad_(False)` chained onto the construction, in a function and at module level: no parameter asks for a gradient, so no graph is built
            """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
    def forward(self, x):
        return self.conv(x)
shared_encoder = Encoder().eval().requires_grad_(False)
def embed(images):
    encoder = Encoder().cuda().eval().requires_grad_(False)
    for image in images:
        print(encoder(image.cuda()).mean().item())
def describe(image):
    return shared_encoder(image).mean().item()
"""
        ),
        Valid(  # a script that freezes its model (in the blocks around the call) before handing it to an evaluation helper: neither the helper's run nor the call builds a graph
            """
import torch
from torch import nn
def evaluate_split(batches, model):
    for x in batches:
        print(model(x).argmax(1).tolist())
if __name__ == "__main__":
    net = nn.Linear(4, 2)
    if torch.cuda.is_available():
        net.load_state_dict(torch.load("net.pt"))
        net.requires_grad_(False)
        net.eval()
        evaluate_split([torch.ones(3, 4)], net)
"""
        ),
        Valid(  # frozen at the end of a chain of module methods, then traced (`torch.jit.trace` keeps the frozen parameters): no graph
            """
import torch
def score(net, batches, trace):
    net.eval().requires_grad_(False).cuda()
    if trace:
        net = torch.jit.trace(net, [batches[0].cuda()])
    for x in batches:
        print(net(x.cuda()).sum().item())
"""
        ),
        Invalid(  # a module-level freeze behind an `if` the run is not behind: it may not have run
            """
import torch
from torch import nn
net = nn.Linear(4, 2)
if torch.cuda.device_count() > 1:
    net.requires_grad_(False)
net.eval()
for x in [torch.ones(3, 4)]:
    print(net(x).argmax(1).tolist())
""",
            line=8,
            column=11,
            unsafe=True,
            fixed="""
import torch
from torch import nn
net = nn.Linear(4, 2)
if torch.cuda.device_count() > 1:
    net.requires_grad_(False)
net.eval()
with torch.no_grad():
    for x in [torch.ones(3, 4)]:
        print(net(x).argmax(1).tolist())
""",
        ),
        Invalid(  # frozen, then given a new head by `setattr` before the evaluation: the head asks for gradients
            """
import torch
from torch import nn
if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 4))
    net.requires_grad_(False)
    setattr(net, "head", nn.Linear(4, 2))
    net.eval()
    for x in [torch.ones(2, 8)]:
        print(net(x).argmax(1).tolist())
""",
            line=9,
            column=15,
            unsafe=True,
            fixed="""
import torch
from torch import nn
if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 4))
    net.requires_grad_(False)
    setattr(net, "head", nn.Linear(4, 2))
    net.eval()
    with torch.no_grad():
        for x in [torch.ones(2, 8)]:
            print(net(x).argmax(1).tolist())
""",
        ),
        Invalid(  # a freeze of a submodule (`net.backbone`) leaves the head's parameters asking for gradients
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)
    def forward(self, x):
        return self.head(self.backbone(x))
if __name__ == "__main__":
    net = Net()
    net.backbone.requires_grad_(False)
    net.eval()
    for x in [torch.ones(3, 4)]:
        print(net(x).argmax(1).tolist())
""",
            line=15,
            column=15,
            unsafe=True,
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)
    def forward(self, x):
        return self.head(self.backbone(x))
if __name__ == "__main__":
    net = Net()
    net.backbone.requires_grad_(False)
    net.eval()
    with torch.no_grad():
        for x in [torch.ones(3, 4)]:
            print(net(x).argmax(1).tolist())
""",
        ),
        Invalid(  # a loop over the parameters that freezes only those an `if` picks: the head still asks for gradients
            """
import torch
def score(net, batches):
    for name, p in net.named_parameters():
        if not name.startswith("head."):
            p.requires_grad = False
    net.eval()
    for x in batches:
        print(net(x).argmax(1).tolist())
""",
            line=8,
            column=15,
            unsafe=True,
            fixed="""
import torch
def score(net, batches):
    for name, p in net.named_parameters():
        if not name.startswith("head."):
            p.requires_grad = False
    net.eval()
    with torch.no_grad():
        for x in batches:
            print(net(x).argmax(1).tolist())
""",
        ),
        Valid(  # a fixed judge / guide net in eval mode whose outputs the region hands to a helper of the file that runs backward on that parameter: backward comes, through the helper
            """
import torch
import torch.nn.functional as F
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
    def forward(self, x):
        return self.conv(x)
def apply_update(optimizer, objective):
    optimizer.zero_grad()
    objective.backward()
    optimizer.step()
def fit(upscaler, pairs, optimizer):
    judge = Encoder().cuda().eval()
    for small, large in pairs:
        guess = upscaler(small)
        objective = F.l1_loss(judge(guess), judge(large))
        apply_update(optimizer, objective)
class Mimic:
    def __init__(self, learner, optimizer):
        self.learner = learner
        self.optimizer = optimizer
    def update(self, x, goal):
        objective = F.mse_loss(self.learner(x), goal)
        self.optimizer.zero_grad()
        objective.backward()
        self.optimizer.step()
    def run(self, batches):
        self.guide = Encoder().cuda().eval()
        for x in batches:
            hint = self.guide(x)
            self.update(x, hint)
"""
        ),
        Valid(  # `.eval()` chained onto constructions: a layer without parameters records no history, and the model runs under no_grad
            """
import torch
from torch import nn
class Upscaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
    def forward(self, x):
        return self.conv(x)
drop = nn.Dropout(0.5).eval()
model = Upscaler().eval()
x = torch.rand(1, 3, 32, 32)
print(drop(x).sum())
with torch.no_grad():
    print(model(x).sum())
"""
        ),
        Valid(  # torchnet's Engine: the test under no_grad, and a network that sets its own grad mode by the sample's flag
            """
import torch
from torchnet.engine import Engine
def main(model, optimizer, train_loader, test_loader):
    def step(sample):
        y = model(sample[0].cuda())
        return criterion(y, sample[1].cuda()), y
    def tagged(sample):
        with torch.set_grad_enabled(sample[2]):
            y = model(sample[0].cuda())
            return criterion(y, sample[1].cuda()), y
    def on_end_epoch(state):
        with torch.no_grad():
            engine.test(step, test_loader)
        engine.test(tagged, test_loader)
    engine = Engine()
    engine.hooks["on_end_epoch"] = on_end_epoch
    engine.train(step, train_loader, 10, optimizer)
    engine.train(tagged, train_loader, 10, optimizer)
"""
        ),
        Valid(  # torchnet's Engine: the network's grad mode set by a helper it calls, a network handed in as a parameter, another scope's function of the same name
            """
import torch
from torchnet.engine import Engine
def run(sample, training):
    with torch.set_grad_enabled(training):
        y = net(sample[0].cuda())
        return criterion(y, sample[1].cuda()), y
def main(optimizer, train_loader, test_loader):
    def step(sample):
        return run(sample, sample[2])
    def on_end_epoch(state):
        engine.test(step, test_loader)  # step's helper decides the grad mode
    engine = Engine()
    engine.hooks["on_end_epoch"] = on_end_epoch
    engine.train(step, train_loader, 10, optimizer)
def fit(optimizer, train_loader):
    def step(sample):
        y = net(sample[0].cuda())
        return criterion(y, sample[1].cuda()), y
    engine = Engine()
    engine.train(step, train_loader, 10, optimizer)
    return engine
def check(step, test_loader):
    engine = Engine()
    engine.test(step, test_loader)  # a parameter: what it runs is the caller's
def probe(engine, test_loader):
    def step(sample):
        # torch.no_grad() is only named in this comment
        return other(sample[0]), None
    engine.test(step, test_loader)  # not the engine that trained anything
"""
        ),
        Valid(  # an engine of the project's own (not torchnet's): what its `test` does is its code's business
            """
import torch
from protonets.engine import Engine
def main(model, optimizer, train_loader, test_loader):
    def step(sample):
        y = model(sample[0].cuda())
        return criterion(y, sample[1].cuda()), y
    engine = Engine()
    engine.train(step, train_loader, 10, optimizer)
    engine.test(step, test_loader)
"""
        ),
        Valid(  # a method only ever called on a receiver of unknown class (a parameter) under no_grad, and the override `self.inference()` there may run
            """
import torch
class BaseSet:
    def inference(self, model, image):
        return model(image)
    def multi_scale(self, model, image):
        return self.inference(model, image)
class FlipSet(BaseSet):
    def inference(self, model, image):
        return model(image.flip(-1))
def test(dataset, model, loader):
    with torch.no_grad():
        for image in loader:
            dataset.multi_scale(model, image)
"""
        ),
        Valid(  # the val phase runs its forward under no_grad (the `else` of `if phase == "val"` is the training phase's), and hands the model to an attack of another file that takes gradients through it (Person_reID's train.py)
            """
import torch
from attacks import fgsm
def train_model(model, dataloaders, criterion, optimizer, epochs, adv):
    for epoch in range(epochs):
        for phase in ["train", "val"]:
            if phase == "train":
                model.train(True)
            else:
                model.train(False)
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                if phase == "val":
                    with torch.no_grad():
                        outputs = model(inputs)
                else:
                    outputs = model(inputs)
                loss = criterion(outputs, labels)
                if adv:
                    adversarial = fgsm(model, inputs)
                    loss = loss + criterion(model(adversarial), labels)
                if phase == "train":
                    loss.backward()
                    optimizer.step()
"""
        ),
        Valid(  # a frozen feature network the function builds itself, whose output it returns: the training loop backpropagates through it (a perceptual loss)
            """
import torch
def perceptual(x, y, Features):
    features = Features()
    features.load_state_dict(torch.load("vgg.pt"))
    features.eval()
    return (features(x) - features(y)).pow(2).mean()

def train(generator, optimizer, batches, Features):
    for z, y in batches:
        loss = perceptual(generator(z), y, Features)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # the same phase loop with `torch.set_grad_enabled(phase == "train")` around the forward: no gradients in the val phase
            """
import torch
def train_model(model, dataloaders, criterion, optimizer, scheduler, epochs):
    for epoch in range(epochs):
        for phase in ["train", "val"]:
            if phase == "train":
                scheduler.step()
                model.train()
            else:
                model.eval()
            for inputs, labels in dataloaders[phase]:
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    loss = criterion(outputs, labels)
                if phase == "train":
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
"""
        ),
        Valid(  # `model._criterion` is a loss the model's class assigns: calling it after `model.eval()` runs no model
            """
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self._criterion = nn.MSELoss()
    def forward(self, x):
        return self.fc(x)
model = Model()
model.eval()
error = model._criterion(torch.randn(2, 4), torch.randn(2, 4))
"""
        ),
        Valid(  # a class named like a model that switches no held model's mode: `predict_batch` may be a building block of its forward
            """
import torch
class ScoreModel:
    def __init__(self, network):
        self.network = network

    def predict_batch(self, x):
        return self.network(x.float())
"""
        ),
        Valid(  # the helper the evaluation returns through hands back the model's output itself: the caller may backpropagate it
            """
import torch
def stats(pred):
    return pred.mean(), pred.std()
def evaluation(net, loader):
    for x, y in loader:
        net.eval()
        pred = net(x)
    mean, spread = stats(pred)
    return mean, spread
def train(net, opt, loader):
    for x, y in loader:
        net.train()
        mean, spread = evaluation(net, loader)
        opt.zero_grad()
        (mean + spread).backward()
        opt.step()
"""
        ),
        Valid(  # the shared epoch method called with cross_valid=False backpropagates: its gradients are needed
            """
import torch
class Solver:
    def __init__(self, model, optimizer, tr_loader, cv_loader):
        self.model = model
        self.optimizer = optimizer
        self.tr_loader = tr_loader
        self.cv_loader = cv_loader

    def train(self, epochs):
        for epoch in range(epochs):
            self.model.train()
            tr_loss = self._run_one_epoch(epoch)
            self.model.eval()
            val_loss = self._run_one_epoch(epoch, cross_valid=False)

    def _run_one_epoch(self, epoch, cross_valid=False):
        total_loss = 0
        data_loader = self.tr_loader if not cross_valid else self.cv_loader
        for x, y in data_loader:
            loss = self.model(x.cuda(), y.cuda())
            if not cross_valid:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total_loss += loss.item()
        return total_loss
"""
        ),
        Valid(  # batches drawn by hand from a validation loader, but the loop backpropagates through them: training, not evaluation
            """
import torch
def tune(net, optimizer, val_loader, steps):
    for i in range(steps):
        x, y = next(iter(val_loader))
        loss = net(x).sum()
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # the loop's last mode call is `.train()`: the model is left training
            """
import torch
for epoch in range(5):
    model.eval()
    with torch.no_grad():
        val = sum(criterion(model(x), y).item() for x, y in val_loader)
    model.train()
    for x, y in train_loader:
        opt.zero_grad()
        criterion(model(x), y).backward()
        opt.step()
pred = model(sample)
""",
        ),
        Valid(  # `prior.log_prob(z)`: a method of something the function did not put in eval mode (a distribution), after the model ran under no_grad
            """
import torch
def evaluate(loader, model, prior):
    model.eval()
    total = 0.0
    for x in loader:
        with torch.no_grad():
            z = model.encode(x)
        total += prior.log_prob(z).sum().item()
    return total
"""
        ),
        Valid(  # a function of the module's eval-mode model handed to other code: captum's attribution takes gradients through it
            """
import torch
from captum.attr import LayerIntegratedGradients
model = torch.load("bert.pt")
model.eval()
def squad_forward(inputs, position=0):
    return model(inputs_embeds=inputs)[position].max(1).values
lig = LayerIntegratedGradients(squad_forward, model.embeddings)
attributions = lig.attribute(inputs=torch.load("ids.pt"))
"""
        ),
        Valid(  # the file puts the global model back in training mode: the module-level `.eval()` may not hold when `detect` runs
            """
import torch
model = torch.load("checkpoint.pth")["model"].to("cuda")
model.eval()
def detect(image, min_score):
    locs, scores = model(image.unsqueeze(0))
    return model.detect_objects(locs, scores, min_score=min_score)
def finetune(loader, optimizer):
    model.train()
    for x, y in loader:
        model(x)[0].sum().backward()
        optimizer.step()
"""
        ),
        Valid(  # the function's `model` is its own parameter, not the module's model put in eval mode
            """
import torch
model = torch.load("checkpoint.pth")["model"]
model.eval()
def score(model, image):
    return model(image)
"""
        ),
        Valid(  # a receiver that may hold any of several classes, called under no_grad (and from a training loop): only ever without gradients, or training's
            """
import torch
from torch import nn
class GAN:
    def __init__(self):
        self.G = nn.Linear(100, 784)
        self.z = torch.rand(64, 100)
    def train(self, loader):
        for epoch in range(10):
            for x in loader:
                self.step(x)
            with torch.no_grad():
                self.visualize_results(epoch)
    def visualize_results(self, epoch):
        self.G.eval()
        return self.G(self.z).cpu().numpy()
class Logger:
    def visualize_results(self, epoch):
        print(epoch)
def main(kind, loader):
    if kind == "gan":
        gan = GAN()
    else:
        gan = Logger()
    gan.train(loader)
    with torch.no_grad():
        gan.visualize_results(10)
    for x in loader:
        other = make(x)
        other.visualize_results(1)
        other(x).backward()
"""
        ),
        Valid(  # the predictor freezes its model (Lightning's freeze(): every parameter without grad)
            """
import torch
from model import ColaModel
class Predictor:
    def __init__(self, path):
        self.model = ColaModel.load_from_checkpoint(path)
        self.model.eval()
        self.model.freeze()
        self.softmax = torch.nn.Softmax(dim=1)
    def predict(self, ids, mask):
        logits = self.model(torch.tensor([ids]), torch.tensor([mask]))
        return self.softmax(logits).tolist()
"""
        ),
        Valid(  # what a config's factory builds, with nothing in the file that only a module has: not known to be a model
            """
import torch
class Agent:
    def __init__(self, config):
        self.network = config.network_fn()
    def eval_step(self, state):
        q = self.network(state)
        return q.argmax(-1).cpu().numpy()
"""
        ),
        Valid(  # the helper turns gradients off itself
            """
import torch
def sample_images(G, n):
    with torch.no_grad():
        return G(torch.randn(n, 8))
def show(G):
    G.eval()
    images = sample_images(G, 16)
    return images
"""
        ),
        Valid(  # the helper only reads the model (no call of the parameter)
            """
import torch
def count(G):
    return sum(p.numel() for p in G.parameters())
def show(G, z):
    G.eval()
    n = count(G)
    return n
"""
        ),
        Valid(  # a shape check: `test()` builds an untrained model and runs it once on random input (issue 27)
            """
import torch
from torch import nn
class VGG(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(x)
def test():
    net = VGG()
    y = net(torch.randn(2, 4))
    print(y.size())
"""
        ),
        Valid(  # a layer without parameters records no history: nothing to evaluate
            """
import torch
from torch import nn
def demo(batch):
    bn = nn.BatchNorm1d(num_features=2, affine=False, momentum=None)
    bn.eval()
    normed = bn(batch)
    return normed
"""
        ),
        Valid(  # the standard pattern
            """
import torch
def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            out = model(x)
"""
        ),
        Valid(  # decorator form, torch imported under another name
            """
import torch as th
@th.inference_mode()
def validate(model, loader):
    for x, y in loader:
        out = model(x)
"""
        ),
        Valid(  # the project's own decorator that wraps no_grad
            """
import functools
import torch
def no_grad_eval(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with torch.no_grad():
            return fn(*args, **kwargs)
    return wrapper

@no_grad_eval
def evaluate(model, loader):
    for x, y in loader:
        out = model(x)
"""
        ),
        Valid(  # only ever called under no_grad in this file
            """
import torch
def run_epoch(model, loader):
    model.eval()
    for x, y in loader:
        out = model(x)

with torch.no_grad():
    run_epoch(net, val_loader)
"""
        ),
        Valid(  # saliency map: gradients are the point
            """
import torch
def saliency(model, x, target):
    model.eval()
    x.requires_grad_(True)
    score = model(x)[0, target]
    score.backward()
    return x.grad.abs()
"""
        ),
        Valid(  # adversarial example with torch.autograd.grad through an alias
            """
import torch
from torch.autograd import grad as agrad
def attack(model, x, y, loss_fn):
    model.eval()
    x = x.clone().requires_grad_(True)
    loss = loss_fn(model(x), y)
    (g,) = agrad(loss, x)
    return x + 0.01 * g.sign()
"""
        ),
        Valid(  # the model's forward adapts a base learner with torch.autograd.grad (MAML-style test-time fine-tuning: meta-transfer-learning's MtlLearner); no_grad would raise
            """
import torch
from torch import nn

class Learner(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Linear(4, 2)

    def forward(self, inp):
        return self.meta_forward(*inp)

    def meta_forward(self, shot, label, query):
        loss = ((self.base(shot) - label) ** 2).mean()
        grads = torch.autograd.grad(loss, self.base.parameters())
        fast = [p - 0.01 * g for p, g in zip(self.base.parameters(), grads)]
        return query @ fast[0].t() + fast[1]

class Trainer:
    def __init__(self):
        self.model = Learner()
        self.model = self.model.cuda()

    def validate(self, loader):
        self.model.eval()
        for shot, label, query in loader:
            logits = self.model((shot, label, query))
            print(logits.argmax(1))
"""
        ),
        Valid(  # Lightning runs validation_step without gradients
            """
import torch
import pytorch_lightning as pl
class Lit(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.eval()
        x, y = batch
        return self(x)
"""
        ),
        Valid(  # training loop: train() again after the evaluation block
            """
import torch
def train(model, loader, opt):
    model.eval()
    model.train()
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
"""
        ),
        Valid(  # eval() only behind a condition: cannot tell which mode the call runs in
            """
import torch
def step(model, x, training):
    if not training:
        model.eval()
    return model(x)
"""
        ),
        Valid(  # set_grad_enabled(False) as a statement
            """
import torch
def validate(model, loader):
    torch.set_grad_enabled(False)
    for x, y in loader:
        out = model(x)
"""
        ),
        Valid(  # a pytest unit test and an argument check are not evaluation
            """
import torch
def test_forward_shape():
    model = torch.nn.Linear(4, 2)
    assert model(torch.zeros(1, 4)).shape == (1, 2)

def validate_inputs(model, x):
    return model(x) is not None
"""
        ),
        Valid(  # a predict() that the training step also runs: its gradients are needed
            """
import torch
import lightning as L
def predict(model, x):
    return model(x).log_softmax(-1)
class Lit(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.nll_loss(predict(self, x), y)
"""
        ),
        Valid(  # explicit enable_grad inside an evaluation function
            """
import torch
@torch.no_grad()
def evaluate(model, x):
    with torch.enable_grad():
        out = model(x)
    return out
"""
        ),
        Valid(  # methods of a model are not model calls, even when named like one
            """
import torch
from torch import nn
def summarize(model: nn.Module):
    model.eval()
    model.fuse_model()
    return [m for m in model.modules()]
"""
        ),
        Valid(  # `predict` on a model class is part of its forward (it runs in training too)
            """
import torch
from torch import nn
from transformers.models.mask2former import Mask2FormerBase
class SegmenterForUniversalSegmentation(Mask2FormerBase):
    def __init__(self, config):
        super().__init__(config)
        self.class_predictor = nn.Linear(8, 2)
    def predict(self, logits):
        return self.class_predictor(logits)
    def forward(self, x):
        return self.predict(self.backbone(x))
"""
        ),
        Valid(  # verbs named like models are not models: prepare_model, postprocess_model
            """
import torch
def evaluation_loop(self, model, dataloader):
    model = self.accelerator.prepare_model(model, evaluation_mode=True)
    model.eval()
    quantizer.postprocess_model(model)
"""
        ),
        Valid(  # a user's own `eval` method on something that is not a model
            """
import torch
def compute(expr, model, x):
    expr.eval()
    return model(x)
"""
        ),
        Valid(  # torch reaches the file through a star import; the decorator is still no_grad
            """
from helpers import *

@torch.no_grad()
def compute_predictions(model, loader):
    for batch in loader:
        outputs = model(**batch)
"""
        ),
        Valid(  # `Model(envs)` builds the network from a class passed in; nothing runs
            """
import torch
def evaluate(model_path, make_env, Model: torch.nn.Module, device="cpu"):
    envs = make_env()
    model = Model(envs).to(device)
    model.load_state_dict(torch.load(model_path))
    model.eval()
    return model
"""
        ),
        Valid(  # `.eval()` was for another model (an earlier notebook cell); a fresh layer runs here
            """
import torch
from torch import nn
model_gpu.eval()
conv_layer = nn.Conv2d(3, 10, 3)
out = conv_layer(random_tensor)
"""
        ),
        Valid(  # a step function built by a factory: its caller runs it under no_grad
            """
import torch
class Trainer:
    def _make_val_step_fn(self):
        def perform_val_step_fn(x, y):
            self.model.eval()
            yhat = self.model(x)
            return self.loss_fn(yhat, y).item()
        return perform_val_step_fn
    def validate(self, loader):
        with torch.no_grad():
            return [self.val_step_fn(x, y) for x, y in loader]
"""
        ),
        Valid(  # a method of the model fed a configuration, not data (transformers' from_pretrained)
            """
import torch
def load(cls, config, generation_config):
    model = cls(config)
    model.eval()
    model.adjust_generation_fn(generation_config, from_auto_class=False)
    return model
"""
        ),
        Valid(  # a DataFrame with a prediction-like name, after the model's `.eval()`
            """
import torch
model_0.eval()
top_5_most_wrong = test_pred_df.sort_values(by=["correct", "pred_prob"]).head()
"""
        ),
        Valid(  # a validation loss that training backpropagates (a meta-learning outer step): the caller needs its gradients
            """
import torch
def query_loss(model, x, y, loss_fn):
    model.eval()
    loss = loss_fn(model(x), y)
    model.train()
    return loss
def train(model, loader, opt, loss_fn):
    for x, y in loader:
        outer = query_loss(model, x, y, loss_fn)
        outer.backward()
        opt.step()
"""
        ),
        Valid(  # the method that runs the model turns gradients off itself
            """
import torch
class Experiment:
    def __init__(self, model):
        self.model = model
    def _run_batch(self, x):
        with torch.no_grad():
            return self.model(x)
    def test(self, loader):
        self.model.eval()
        for x in loader:
            self._run_batch(x)
"""
        ),
        Valid(  # the mode helper puts the model in training mode for this argument: no evaluation region
            """
import torch
class Solver:
    def __init__(self, net):
        self.net = net
    def net_mode(self, train):
        if train:
            self.net.train()
        else:
            self.net.eval()
    def step(self, x):
        self.net_mode(train=True)
        return self.net(x)
"""
        ),
        Valid(  # the mode switch's eval phase only ever runs under no_grad
            """
import torch
def run(phase, model, data, opt, loss_fn):
    if phase == "train":
        model.train()
    else:
        model.eval()
    out = model(data.x)
    loss = loss_fn(out, data.y)
    if phase == "train":
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (out.argmax(1) == data.y).float().mean().item()
def main(model, data, opt, loss_fn):
    for epoch in range(100):
        run("train", model, data, opt, loss_fn)
        with torch.no_grad():
            run("val", model, data, opt, loss_fn)
"""
        ),
        Valid(  # backward runs whatever the phase: the eval-mode pass is trained (a model with batch norm frozen)
            """
import torch
def run(phase, model, data, opt, loss_fn):
    if phase == "train":
        model.train()
    else:
        model.eval()
    loss = loss_fn(model(data.x), data.y)
    loss.backward()
    opt.step()
def main(model, data, opt, loss_fn):
    run("train", model, data, opt, loss_fn)
    run("finetune", model, data, opt, loss_fn)
"""
        ),
        Valid(  # a policy's sampling of actions is trained through: not samples to look at
            """
import torch
def sample_actions(policy, obs):
    return policy(obs.cuda()).sample()
"""
        ),
        Invalid(  # `self.eval()` then a layer-running method of the module on a `Variable(..., volatile=True)` input: volatile does nothing since PyTorch 0.4, as everywhere else (pytorch-wavenet's `generate`)
            """
import torch
import torch.nn as nn
from torch.autograd import Variable
class WaveNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.start_conv = nn.Conv1d(classes, 32, 1)
        self.end_conv = nn.Conv1d(32, classes, 1)
    def wavenet(self, input):
        return self.end_conv(self.start_conv(input))
    def forward(self, input):
        return self.wavenet(input)
    def generate(self, first):
        self.eval()
        input = Variable(first, volatile=True)
        x = self.wavenet(input)
        self.train()
        return x.data.numpy()
""",
            line=16,
            column=13,
            unsafe=True,
            fixed="""
import torch
import torch.nn as nn
from torch.autograd import Variable
class WaveNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.start_conv = nn.Conv1d(classes, 32, 1)
        self.end_conv = nn.Conv1d(32, classes, 1)
    def wavenet(self, input):
        return self.end_conv(self.start_conv(input))
    def forward(self, input):
        return self.wavenet(input)
    @torch.no_grad()
    def generate(self, first):
        self.eval()
        input = Variable(first, volatile=True)
        x = self.wavenet(input)
        self.train()
        return x.data.numpy()
""",
        ),
        Valid(  # `self.eval()`, then a method of the module that runs its layers to train them: a backward follows
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(8, 8, 1)
    def features(self, x):
        return self.conv(x)
    def forward(self, x):
        return self.features(x)
    def adapt(self, x, opt):
        self.eval()
        loss = self.features(x).pow(2).mean()
        loss.backward()
        opt.step()
"""
        ),
        Valid(  # the eval phase hands the model to a function of the file that backpropagates through it (an adversarial example): gradients are needed
            """
import torch
def step(phase, model, optimizer, criterion, x, y):
    train = (phase == "train")
    if train:
        model.train()
    else:
        model.eval()
    y_hat = model(x)
    loss = criterion(y_hat, y)
    if not train:
        adversarial(model, x, y, criterion)
    if train:
        loss.backward()
        optimizer.step()
    return loss.item()
def adversarial(model, x, y, criterion):
    x = x.clone().requires_grad_(True)
    criterion(model(x), y).backward()
    return x.grad.sign()
def train_loop(model, loaders, optimizer, criterion):
    for epoch in range(10):
        for phase, loader in loaders.items():
            for x, y in loader:
                step(phase, model, optimizer, criterion, x, y)
phases = ["train", "val"]
"""
        ),
        Valid(  # a phase loop over a dict's keys where nothing in the file names a phase other than training: whether an eval phase runs, the file does not say
            """
import torch
def step(phase, model, optimizer, criterion, x, y):
    train = (phase == "train")
    if train:
        model.train()
    else:
        model.eval()
    loss = criterion(model(x), y)
    if train:
        loss.backward()
        optimizer.step()
    return loss.item()
def train_loop(model, loaders, optimizer, criterion):
    for epoch in range(10):
        for phase, loader in loaders.items():
            for x, y in loader:
                step(phase, model, optimizer, criterion, x, y)
"""
        ),
        Valid(  # a submodule whose forward takes gradients of its input in a nested function (a PGD attack, robustness's Attacker) run after `self.eval()`, and a model holding it run with its flag on: gradients are the point
            """
import torch
from torch import nn
class Perturber(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
    def forward(self, x, y, steps=3):
        def ascend(x):
            x = x.detach().requires_grad_(True)
            loss = nn.functional.cross_entropy(self.net(x), y)
            grad, = torch.autograd.grad(loss, [x])
            return x + 0.01 * grad.sign()
        for _ in range(steps):
            x = ascend(x)
        return x
class Robust(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.perturber = Perturber(net)
    def forward(self, x, y=None, perturb=False):
        if perturb:
            self.eval()
            x = self.perturber(x, y)
        return self.net(x)
def attack_accuracy(net, loader):
    model = Robust(net)
    model.eval()
    hits = 0
    for x, y in loader:
        hits += (model(x, y, perturb=True).argmax(1) == y).sum().item()
    return hits
""",
        ),
        Valid(  # a parameterless shape check of a model a factory of the file builds (robustness's densenet `test()`)
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.fc = nn.Linear(3 * 32 * 32, width)
    def forward(self, x):
        return self.fc(x.flatten(1))
def net_small(**kwargs):
    return Net(**kwargs)
def test():
    net = net_small()
    x = torch.randn(1, 3, 32, 32)
    y = net(x)
    print(y.size())
""",
        ),
        Valid(  # a driver whose name says it trains and validates, drawing the graph of one output (ESPNet's `trainValidateSegmentation`, `viz.make_dot(y)`): no evaluation by its name
            """
import torch
def train(model, loader, optimizer):
    model.train()
    for inputs, targets in loader:
        loss = (model(inputs) - targets).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
def trainValidateSegmentation(model, loader, optimizer, draw):
    x = torch.randn(1, 3, 64, 64)
    y = model(x)
    draw(y.grad_fn)
    for epoch in range(10):
        train(model, loader, optimizer)
""",
        ),
        Valid(  # a classmethod's `cls.helper(model)` calls the class's own method, which only reads an attribute of the model: no run, whatever its name says
            """
from torch import nn
class Tester:
    @classmethod
    def pick_head(cls, model: nn.Module):
        if hasattr(model, "heads"):
            return model.heads.embedder
        return None
    @classmethod
    def test(cls, cfg, model):
        head = cls.pick_head(model)
        return run_all(model, head)
"""
        ),
        Valid(  # a helper named as an evaluation nested in a renderer that the training step runs through its own forward (`self(batch)`): it needs gradients
            """
import torch
import torch.nn as nn
import pytorch_lightning as pl
def render(models, rays):
    def inference(model, x):
        return model(x)
    return inference(models[0], rays)
class System(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.models = nn.ModuleList([nn.Linear(3, 3)])
    def forward(self, rays):
        return render(self.models, rays)
    def training_step(self, batch, batch_idx):
        return self(batch).sum()
"""
        ),
    ]

    INVALID = [
        Invalid(  # the training step runs its own forward, whose training branch returns the loss: the inference path after it (a module-level helper named as an evaluation) is not training code
            """
import torch.nn as nn
import pytorch_lightning as pl
def inference(backbone, images):
    scores = backbone(images)
    return scores.softmax(-1)
class Detector(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(8, 4)
    def forward(self, images, targets=None):
        if self.training:
            return nn.functional.cross_entropy(self.backbone(images), targets)
        return inference(self.backbone, images)
    def training_step(self, batch, batch_idx):
        images, targets = batch
        return self(images, targets)
""",
            line=4,
            column=14,
        ),
        Invalid(  # the training step runs its own forward with the default mode "train": the evaluating helper behind `mode != "train"` is not training code
            """
import torch
import torch.nn as nn
def predict(net, x):
    net.eval()
    return net(x)
class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 4)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
    def forward(self, x, mode="train"):
        if mode == "train":
            return self.net(x)
        return predict(self.net, x)
    def train_step(self, x, y):
        loss = (self(x) - y).pow(2).mean()
        loss.backward()
        self.opt.step()
        return loss.item()
""",
            line=5,
            column=12,
            unsafe=True,
            fixed="""
import torch
import torch.nn as nn
@torch.no_grad()
def predict(net, x):
    net.eval()
    return net(x)
class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 4)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
    def forward(self, x, mode="train"):
        if mode == "train":
            return self.net(x)
        return predict(self.net, x)
    def train_step(self, x, y):
        loss = (self(x) - y).pow(2).mean()
        loss.backward()
        self.opt.step()
        return loss.item()
""",
        ),
        Invalid(  # the classmethod's helper only hands back a submodule; the run is the call of what it returned
            """
from torch import nn
class Tester:
    @classmethod
    def pick_head(cls, model: nn.Module):
        return model.heads.embedder
    @classmethod
    def test(cls, model, x):
        head = cls.pick_head(model)
        return head(x).sum().item()
""",
            line=9,
            column=16,
        ),
        Invalid(  # the training step runs its own forward only under no_grad: the renderer's nested `inference` is no training code
            """
import torch
import torch.nn as nn
import pytorch_lightning as pl
def render(models, rays):
    def inference(model, x):
        return model(x)
    return inference(models[0], rays)
class System(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.models = nn.ModuleList([nn.Linear(3, 3)])
    def forward(self, rays):
        return render(self.models, rays)
    def training_step(self, batch, batch_idx):
        with torch.no_grad():
            target = self(batch)
        return self.models[0](batch).sub(target).sum()
""",
            line=6,
            column=16,
            fixed="""
import torch
import torch.nn as nn
import pytorch_lightning as pl
def render(models, rays):
    @torch.no_grad()
    def inference(model, x):
        return model(x)
    return inference(models[0], rays)
class System(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.models = nn.ModuleList([nn.Linear(3, 3)])
    def forward(self, rays):
        return render(self.models, rays)
    def training_step(self, batch, batch_idx):
        with torch.no_grad():
            target = self(batch)
        return self.models[0](batch).sub(target).sum()
""",
            unsafe=True,
        ),
        Invalid(  # a factory call whose result is put in eval mode builds the model; the run after it is the evaluation (ResNeSt's test)
            """
import importlib
import torch
def run_inference(names):
    zoo = importlib.import_module("zoo")
    x = torch.rand(1, 3, 32, 32)
    for name in names:
        net = getattr(zoo, name)
        model = net(pretrained=True)
        model.eval()
        y = model(x)
""",
            line=10,
            column=13,
            unsafe=True,
            message="`model(x)` runs in `run_inference`",
            fixed="""
import importlib
import torch
@torch.no_grad()
def run_inference(names):
    zoo = importlib.import_module("zoo")
    x = torch.rand(1, 3, 32, 32)
    for name in names:
        net = getattr(zoo, name)
        model = net(pretrained=True)
        model.eval()
        y = model(x)
""",
        ),
        Invalid(  # the helper's one caller freezes its model only after handing it over: the runs have gradients on
            """
import torch
def predict(model, x):
    return model(x)
def main(net, images):
    outs = [predict(net, x) for x in images]
    for p in net.parameters():
        p.requires_grad = False
    return outs
""",
            line=3,
            column=12,
            unsafe=True,
            fixed="""
import torch
@torch.no_grad()
def predict(model, x):
    return model(x)
def main(net, images):
    outs = [predict(net, x) for x in images]
    for p in net.parameters():
        p.requires_grad = False
    return outs
""",
        ),
        Invalid(  # `self.eval()` in a module, then methods of a submodule (`self.gen.parameters()` shows it is one) with gradients on (MUNIT's trainer `forward`)
            """
import torch
import torch.nn as nn
from nets import Generator
class Translator(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = Generator()
        self.opt = torch.optim.Adam(self.gen.parameters())
    def forward(self, x):
        self.eval()
        code = self.gen.encode(x)
        out = self.gen.decode(code)
        self.train()
        return out
""",
            line=11,
            column=16,
            unsafe=True,
            message="runs after `self.eval()`",
            fixed="""
import torch
import torch.nn as nn
from nets import Generator
class Translator(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = Generator()
        self.opt = torch.optim.Adam(self.gen.parameters())
    @torch.no_grad()
    def forward(self, x):
        self.eval()
        code = self.gen.encode(x)
        out = self.gen.decode(code)
        self.train()
        return out
""",
        ),
        Invalid(  # a submodule's method handed its data by keyword after `self.eval()` (the screen must let the file through)
            """
import torch
import torch.nn as nn
from nets import Coder
class Painter(nn.Module):
    def __init__(self):
        super().__init__()
        self.coder = Coder()
        self.opt = torch.optim.Adam(self.coder.parameters())
    def preview(self, x):
        self.eval()
        z = self.coder.encode(inputs=x)
        self.train()
        return z.detach()
""",
            line=11,
            column=13,
            unsafe=True,
            message="runs after `self.eval()`",
            fixed="""
import torch
import torch.nn as nn
from nets import Coder
class Painter(nn.Module):
    def __init__(self):
        super().__init__()
        self.coder = Coder()
        self.opt = torch.optim.Adam(self.coder.parameters())
    @torch.no_grad()
    def preview(self, x):
        self.eval()
        z = self.coder.encode(inputs=x)
        self.train()
        return z.detach()
""",
        ),
        Invalid(  # a submodule's method handed its data unpacked from a dict after `self.eval()`
            """
import torch
import torch.nn as nn
from nets import Coder
class Painter(nn.Module):
    def __init__(self):
        super().__init__()
        self.coder = Coder()
        self.opt = torch.optim.Adam(self.coder.parameters())
    def preview(self, batch):
        self.eval()
        z = self.coder.encode(**batch)
        self.train()
        return z.detach()
""",
            line=11,
            column=13,
            unsafe=True,
            message="runs after `self.eval()`",
            fixed="""
import torch
import torch.nn as nn
from nets import Coder
class Painter(nn.Module):
    def __init__(self):
        super().__init__()
        self.coder = Coder()
        self.opt = torch.optim.Adam(self.coder.parameters())
    @torch.no_grad()
    def preview(self, batch):
        self.eval()
        z = self.coder.encode(**batch)
        self.train()
        return z.detach()
""",
        ),
        Invalid(  # a submodule's method in the region of a context manager of the file putting `self` in eval mode
            """
import torch
import torch.nn as nn
from nets import Coder
class frozen_mode:
    def __init__(self, *nets):
        self.nets = nets
    def __enter__(self):
        for n in self.nets:
            n.train(False)
    def __exit__(self, *exc):
        for n in self.nets:
            n.train(True)
class Painter(nn.Module):
    def __init__(self):
        super().__init__()
        self.coder = Coder()
        self.opt = torch.optim.Adam(self.coder.parameters())
    def preview(self, x):
        with frozen_mode(self):
            z = self.coder.encode(x)
        return z.detach()
""",
            line=20,
            column=17,
            unsafe=True,
            message="frozen_mode(self)",
            fixed="""
import torch
import torch.nn as nn
from nets import Coder
class frozen_mode:
    def __init__(self, *nets):
        self.nets = nets
    def __enter__(self):
        for n in self.nets:
            n.train(False)
    def __exit__(self, *exc):
        for n in self.nets:
            n.train(True)
class Painter(nn.Module):
    def __init__(self):
        super().__init__()
        self.coder = Coder()
        self.opt = torch.optim.Adam(self.coder.parameters())
    @torch.no_grad()
    def preview(self, x):
        with frozen_mode(self):
            z = self.coder.encode(x)
        return z.detach()
""",
        ),
        Valid(  # a submodule's method that takes gradients of its input (a Langevin sampler) after `self.eval()`: the project pass's gradient_methods
            """
import torch
import torch.nn as nn
class Energy(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Linear(2, 1)
    def forward(self, x):
        return self.f(x).sum()
    def sample(self, x):
        x = x.clone().requires_grad_(True)
        for _ in range(10):
            g, = torch.autograd.grad(self.forward(x), x)
            x = (x - 0.01 * g).detach().requires_grad_(True)
        return x.detach()
class Learner(nn.Module):
    def __init__(self):
        super().__init__()
        self.energy = Energy()
        self.opt = torch.optim.SGD(self.energy.parameters(), lr=0.1)
    def negatives(self, x):
        self.eval()
        x_neg = self.energy.sample(x)
        self.train()
        return x_neg
"""
        ),
        Valid(  # a predict-named module method that first adapts through a method of self taking a backward and a step: no evaluation
            """
import torch
import torch.nn as nn
class Adapter(nn.Module):
    def __init__(self, net, opt):
        super().__init__()
        self.net = net
        self.opt = opt
    def forward(self, x):
        return self.net(x)
    def adjust(self, x):
        out = self.net(x)
        loss = -(out.softmax(1) * out.log_softmax(1)).sum(1).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
    def predict(self, x):
        self.adjust(x)
        return self.net(x).argmax(1).cpu().numpy()
"""
        ),
        Valid(  # predict-named module methods whose outputs leave through an alias of self's dict, an append to self's list, a container handed in
            """
import torch
import torch.nn as nn
class Memory(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.slots = {}
        self.seen = []
    def forward(self, x):
        return self.enc(x)
    def infer(self, x, key):
        slots = self.slots
        slots[key] = self.forward(x)
    def predict(self, x):
        z = self.forward(x)
        self.seen.append(z)
        return z.sum().item()
    def predict_into(self, x, sink):
        sink.append(self.forward(x))
"""
        ),
        Valid(  # a scikit-learn classifier's predict_proba after `self.eval()`: another class's `self.clf.parameters()` says nothing of this class's `self.clf`
            """
import numpy as np
import torch
import torch.nn as nn
from sklearn.svm import SVC
class Probe(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.clf = SVC()
    def score(self, feats):
        self.eval()
        return self.clf.predict_proba(feats)
class Tuner(nn.Module):
    def __init__(self, clf):
        super().__init__()
        self.clf = clf
        self.opt = torch.optim.SGD(self.clf.parameters(), lr=0.1)
"""
        ),
        Invalid(  # a module's method named as prediction whose outputs end as a numpy array: no building block of a training forward (pytorch-semseg's `tile_predict`)
            """
import numpy as np
import torch
import torch.nn as nn
class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 5, 1)
    def forward(self, x):
        return self.head(x)
    def tile_predict(self, images):
        score = np.zeros((images.shape[0], 5, 8, 8))
        for i in range(2):
            tile = images[:, :, i * 4:(i + 1) * 4]
            score[:, :, i * 4:(i + 1) * 4] = self.forward(tile).softmax(1).data.cpu().numpy()
        return score.astype(np.float32)
""",
            line=14,
            column=46,
            unsafe=True,
            message="runs in `tile_predict`",
            fixed="""
import numpy as np
import torch
import torch.nn as nn
class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 5, 1)
    def forward(self, x):
        return self.head(x)
    @torch.no_grad()
    def tile_predict(self, images):
        score = np.zeros((images.shape[0], 5, 8, 8))
        for i in range(2):
            tile = images[:, :, i * 4:(i + 1) * 4]
            score[:, :, i * 4:(i + 1) * 4] = self.forward(tile).softmax(1).data.cpu().numpy()
        return score.astype(np.float32)
""",
        ),
        Invalid(  # a train word after the evaluation word names the split evaluated (`eval_train`), not a driver that trains
            """
import torch
def eval_train(model, train_loader):
    hits = 0
    for x, y in train_loader:
        hits += (model(x).argmax(1) == y).sum().item()
    return hits
""",
            line=5,
            column=18,
            unsafe=True,
            fixed="""
import torch
@torch.no_grad()
def eval_train(model, train_loader):
    hits = 0
    for x, y in train_loader:
        hits += (model(x).argmax(1) == y).sum().item()
    return hits
""",
        ),
        Invalid(  # a model whose forward attacks its input only with its flag on, run without it after `.eval()`: plain inference
            """
import torch
from torch import nn
class Perturber(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
    def forward(self, x, y, steps=3):
        def ascend(x):
            x = x.detach().requires_grad_(True)
            loss = nn.functional.cross_entropy(self.net(x), y)
            grad, = torch.autograd.grad(loss, [x])
            return x + 0.01 * grad.sign()
        for _ in range(steps):
            x = ascend(x)
        return x
class Robust(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.perturber = Perturber(net)
    def forward(self, x, y=None, perturb=False):
        if perturb:
            self.eval()
            x = self.perturber(x, y)
        return self.net(x)
def clean_accuracy(net, loader):
    model = Robust(net)
    model.eval()
    hits = 0
    for x, y in loader:
        hits += (model(x).argmax(1) == y).sum().item()
    return hits
""",
            line=31,
            column=18,
            fixed="""
import torch
from torch import nn
class Perturber(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
    def forward(self, x, y, steps=3):
        def ascend(x):
            x = x.detach().requires_grad_(True)
            loss = nn.functional.cross_entropy(self.net(x), y)
            grad, = torch.autograd.grad(loss, [x])
            return x + 0.01 * grad.sign()
        for _ in range(steps):
            x = ascend(x)
        return x
class Robust(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.perturber = Perturber(net)
    def forward(self, x, y=None, perturb=False):
        if perturb:
            self.eval()
            x = self.perturber(x, y)
        return self.net(x)
def clean_accuracy(net, loader):
    model = Robust(net)
    model.eval()
    hits = 0
    with torch.no_grad():
        for x, y in loader:
            hits += (model(x).argmax(1) == y).sum().item()
    return hits
""",
            unsafe=True,
            message="`model(x)` runs after `model.eval()`",
        ),
        Invalid(  # a function named for evaluating on the training data that puts its model in eval mode: its `.eval()` opens the region, whatever else the name says
            """
import torch
def train_evaluate(model, train_loader):
    model.eval()
    total = 0.0
    for x, y in train_loader:
        total += (model(x) - y).pow(2).mean().item()
    return total
""",
            line=6,
            column=19,
            fixed="""
import torch
@torch.no_grad()
def train_evaluate(model, train_loader):
    model.eval()
    total = 0.0
    for x, y in train_loader:
        total += (model(x) - y).pow(2).mean().item()
    return total
""",
            unsafe=True,
            message="`model(x)` runs after `model.eval()`",
        ),
        Invalid(  # torchnet's Engine.test runs the network it trains over the test loader with gradients on
            """
import torch
import torchnet as tnt
def main(model, optimizer, train_loader, test_loader):
    def step(sample):
        y = model(sample[0].cuda())
        return criterion(y, sample[1].cuda()), y
    def on_end_epoch(state):
        engine.test(step, test_loader)
    engine = tnt.engine.Engine()
    engine.hooks["on_end_epoch"] = on_end_epoch
    engine.train(step, train_loader, 10, optimizer)
""",
            line=8,
            column=9,
            message="torchnet's evaluation loop",
        ),
        Invalid(  # an evaluation that builds and loads its own model and hands back only what the environment returned: a training loop calling it gets nothing of the graph (cleanrl's dqn_eval.evaluate)
            """
import torch
def evaluate(model_path, envs, Model, episodes):
    model = Model(envs)
    model.load_state_dict(torch.load(model_path))
    model.eval()
    obs = envs.reset()
    returns = []
    while len(returns) < episodes:
        q_values = model(torch.Tensor(obs))
        actions = torch.argmax(q_values, dim=1).cpu().numpy()
        obs, reward, done, info = envs.step(actions)
        if done:
            returns += [info["return"]]
    return returns

def train(q_network, optimizer, envs, batches, Model):
    for step, (x, y) in enumerate(batches):
        loss = (q_network(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            torch.save(q_network.state_dict(), "q.pt")
            print(evaluate("q.pt", envs, Model, 10))
""",
            line=9,
            column=20,
            unsafe=True,
            fixed="""
import torch
@torch.no_grad()
def evaluate(model_path, envs, Model, episodes):
    model = Model(envs)
    model.load_state_dict(torch.load(model_path))
    model.eval()
    obs = envs.reset()
    returns = []
    while len(returns) < episodes:
        q_values = model(torch.Tensor(obs))
        actions = torch.argmax(q_values, dim=1).cpu().numpy()
        obs, reward, done, info = envs.step(actions)
        if done:
            returns += [info["return"]]
    return returns

def train(q_network, optimizer, envs, batches, Model):
    for step, (x, y) in enumerate(batches):
        loss = (q_network(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            torch.save(q_network.state_dict(), "q.pt")
            print(evaluate("q.pt", envs, Model, 10))
""",
        ),
        Invalid(  # the eval branch of a mode switch selected by a loop over literal phases (`for phase in ["train", "val"]`): the validation phase runs the model with gradients on (pytorch-tiny-imagenet's train_model)
            """
import torch
def train_model(model, dataloaders, criterion, optimizer, scheduler, epochs):
    for epoch in range(epochs):
        for phase in ["train", "val"]:
            if phase == "train":
                scheduler.step()
                model.train()
            else:
                model.eval()
            for inputs, labels in dataloaders[phase]:
                outputs = model(inputs)
                loss = criterion(outputs, labels)
                if phase == "train":
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
""",
            line=11,
            column=27,
        ),
        Invalid(  # the same phase loop with the switch quoted `'train'` and the backward's guard `"train"`: one phase, compared by value, not by quoting
            """
import torch
def train_model(model, dataloaders, criterion, optimizer, epochs):
    for epoch in range(epochs):
        for phase in ["train", "val"]:
            if phase == 'train':
                model.train()
            else:
                model.eval()
            for inputs, labels in dataloaders[phase]:
                outputs = model(inputs)
                loss = criterion(outputs, labels)
                if phase == "train":
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
""",
            line=10,
            column=27,
        ),
        Invalid(  # a submodule named like nothing (`model._encoder`) that the model's class assigns a module: running it runs the model (the VQ-VAE notebook's reconstruction cell)
            """
import torch
import torch.nn as nn

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x)

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self._encoder = Encoder()
        self._pre_vq_conv = nn.Conv2d(4, 4, 1)
        self._scale = 2.0
    def forward(self, x):
        return self._pre_vq_conv(self._encoder(x))

model = Model().cuda()
model.eval()
batch = torch.randn(2, 4)
out = model._pre_vq_conv(model._encoder(batch))
print(out.shape)
""",
            line=23,
            column=7,
            unsafe=True,
            fixed="""
import torch
import torch.nn as nn

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x)

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self._encoder = Encoder()
        self._pre_vq_conv = nn.Conv2d(4, 4, 1)
        self._scale = 2.0
    def forward(self, x):
        return self._pre_vq_conv(self._encoder(x))

model = Model().cuda()
model.eval()
batch = torch.randn(2, 4)
with torch.no_grad():
    out = model._pre_vq_conv(model._encoder(batch))
print(out.shape)
""",
        ),
        Invalid(  # a class named like a model that drives the model it holds (`self.network.eval()`) is an estimator, not a layer: its `_predict_batch` is evaluation (tabnet's TabModel)
            """
import torch
from sklearn.base import BaseEstimator
class TabModel(BaseEstimator):
    def fit(self, loader):
        for x, y in loader:
            self.network.train()
            loss = self.network(x).sum()
            loss.backward()
            self.optimizer.step()
        self.network.eval()

    def _predict_batch(self, x):
        scores = self.network(x.float())
        return scores.cpu().detach().numpy()
""",
            line=13,
            column=18,
            unsafe=True,
            fixed="""
import torch
from sklearn.base import BaseEstimator
class TabModel(BaseEstimator):
    def fit(self, loader):
        for x, y in loader:
            self.network.train()
            loss = self.network(x).sum()
            loss.backward()
            self.optimizer.step()
        self.network.eval()

    @torch.no_grad()
    def _predict_batch(self, x):
        scores = self.network(x.float())
        return scores.cpu().detach().numpy()
""",
        ),
        Invalid(  # `net.eval()` first thing in each episode, numbers handed back through a statistics helper of the file: evaluation whoever calls it (MAML-Pytorch's naive5_train.evaluation, called from the training loop)
            """
import numpy as np
import scipy.stats
import torch
def confidence(accs):
    m, se = np.mean(accs), scipy.stats.sem(accs)
    return m, se * 1.96
def evaluation(net, loader):
    accs = []
    for x, y in loader:
        net.eval()
        pred = net(x)
        accs.append((pred.argmax(1) == y).float().mean().item())
    accuracy, interval = confidence(np.array(accs))
    return accuracy, interval
def train(net, opt, loader):
    for x, y in loader:
        net.train()
        loss = net(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        accuracy, interval = evaluation(net, loader)
""",
            line=11,
            column=16,
            unsafe=True,
            fixed="""
import numpy as np
import scipy.stats
import torch
def confidence(accs):
    m, se = np.mean(accs), scipy.stats.sem(accs)
    return m, se * 1.96
@torch.no_grad()
def evaluation(net, loader):
    accs = []
    for x, y in loader:
        net.eval()
        pred = net(x)
        accs.append((pred.argmax(1) == y).float().mean().item())
    accuracy, interval = confidence(np.array(accs))
    return accuracy, interval
def train(net, opt, loader):
    for x, y in loader:
        net.train()
        loss = net(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        accuracy, interval = evaluation(net, loader)
""",
        ),
        Invalid(  # a shared epoch method whose backward sits under `if not cross_valid:`, called with cross_valid=True after eval() (Speech-Transformer's solver)
            """
import torch
class Solver:
    def __init__(self, model, optimizer, tr_loader, cv_loader):
        self.model = model
        self.optimizer = optimizer
        self.tr_loader = tr_loader
        self.cv_loader = cv_loader

    def train(self, epochs):
        for epoch in range(epochs):
            self.model.train()
            tr_loss = self._run_one_epoch(epoch)
            self.model.eval()
            val_loss = self._run_one_epoch(epoch, cross_valid=True)

    def _run_one_epoch(self, epoch, cross_valid=False):
        total_loss = 0
        data_loader = self.tr_loader if not cross_valid else self.cv_loader
        for x, y in data_loader:
            loss = self.model(x.cuda(), y.cuda())
            if not cross_valid:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total_loss += loss.item()
        return total_loss
""",
            line=14,
            column=24,
            unsafe=True,
            fixed="""
import torch
class Solver:
    def __init__(self, model, optimizer, tr_loader, cv_loader):
        self.model = model
        self.optimizer = optimizer
        self.tr_loader = tr_loader
        self.cv_loader = cv_loader

    def train(self, epochs):
        for epoch in range(epochs):
            self.model.train()
            tr_loss = self._run_one_epoch(epoch)
            self.model.eval()
            with torch.no_grad():
                val_loss = self._run_one_epoch(epoch, cross_valid=True)

    def _run_one_epoch(self, epoch, cross_valid=False):
        total_loss = 0
        data_loader = self.tr_loader if not cross_valid else self.cv_loader
        for x, y in data_loader:
            loss = self.model(x.cuda(), y.cuda())
            if not cross_valid:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total_loss += loss.item()
        return total_loss
""",
        ),
        Invalid(  # a periodic test inside the training loop draws its batches by hand (LearningToCompare's omniglot scripts)
            """
import torch
def train(net, optimizer, train_loader, test_loader, episodes):
    for episode in range(episodes):
        x, y = next(iter(train_loader))
        loss = net(x).sum()
        loss.backward()
        optimizer.step()
        if episode % 100 == 0:
            for i in range(10):
                tx, ty = test_loader.__iter__().next()
                out = net(tx)
                print((out.argmax(1) == ty).float().mean().item())
""",
            line=11,
            column=23,
            unsafe=True,
            fixed="""
import torch
def train(net, optimizer, train_loader, test_loader, episodes):
    for episode in range(episodes):
        x, y = next(iter(train_loader))
        loss = net(x).sum()
        loss.backward()
        optimizer.step()
        if episode % 100 == 0:
            with torch.no_grad():
                for i in range(10):
                    tx, ty = test_loader.__iter__().next()
                    out = net(tx)
                    print((out.argmax(1) == ty).float().mean().item())
""",
        ),
        Invalid(  # a GAN's sampling function, called after each epoch with gradients on (issue 27's probes)
            """
import torch
G = Generator().cuda()
optimizer = torch.optim.Adam(G.parameters())
def sample_images(n):
    z = torch.randn(n, 100, device="cuda")
    save_image(G(z), "samples.png")
""",
            line=6,
            column=16,
            unsafe=True,
            fixed="""
import torch
G = Generator().cuda()
optimizer = torch.optim.Adam(G.parameters())
@torch.no_grad()
def sample_images(n):
    z = torch.randn(n, 100, device="cuda")
    save_image(G(z), "samples.png")
""",
        ),
        Invalid(  # a function named for evaluation runs the model it put in eval mode through a method fed data (RAdam's train_1bw.py, issue 27)
            """
import torch
def evaluate(loader, lm_model, criterion):
    lm_model.eval()
    total = 0.0
    for words, labels in loader:
        output = lm_model.log_prob(words)
        total += criterion(output, labels).item()
    return total
""",
            line=6,
            column=18,
            unsafe=True,
            fixed="""
import torch
@torch.no_grad()
def evaluate(loader, lm_model, criterion):
    lm_model.eval()
    total = 0.0
    for words, labels in loader:
        output = lm_model.log_prob(words)
        total += criterion(output, labels).item()
    return total
""",
        ),
        Invalid(  # a module-level evaluation script: a language model's `log_prob(words)` runs the model (RAdam's eval_1bw.py, issue 27)
            """
import torch
from lm import LM
lm_model = LM(vocab=1000).cuda()
lm_model.load_state_dict(torch.load("lm.pt"))
lm_model.eval()
total_loss = 0
for words, labels in torch.load("test.pt"):
    output = lm_model.log_prob(words)
    total_loss += torch.nn.functional.nll_loss(output, labels).item()
print(total_loss)
""",
            line=8,
            column=14,
            unsafe=True,
            fixed="""
import torch
from lm import LM
lm_model = LM(vocab=1000).cuda()
lm_model.load_state_dict(torch.load("lm.pt"))
lm_model.eval()
total_loss = 0
with torch.no_grad():
    for words, labels in torch.load("test.pt"):
        output = lm_model.log_prob(words)
        total_loss += torch.nn.functional.nll_loss(output, labels).item()
print(total_loss)
""",
        ),
        Invalid(  # a module-level `model.eval()` covers a function of the file that runs that global model (SSD's detect.py, issue 27)
            """
import torch
model = torch.load("checkpoint.pth")["model"].to("cuda")
model.eval()
def detect(image, min_score):
    locs, scores = model(image.unsqueeze(0))
    return model.detect_objects(locs, scores, min_score=min_score)
if __name__ == "__main__":
    detect(load_image("img.jpg"), 0.2)
""",
            line=5,
            column=20,
            unsafe=True,
            fixed="""
import torch
model = torch.load("checkpoint.pth")["model"].to("cuda")
model.eval()
@torch.no_grad()
def detect(image, min_score):
    locs, scores = model(image.unsqueeze(0))
    return model.detect_objects(locs, scores, min_score=min_score)
if __name__ == "__main__":
    detect(load_image("img.jpg"), 0.2)
""",
        ),
        Invalid(  # the same method called once more with gradients on, through a receiver that may hold either class (pytorch-generative-model-collections' main.py, issue 27)
            """
import torch
from torch import nn
class GAN:
    def __init__(self):
        self.G = nn.Linear(100, 784)
        self.z = torch.rand(64, 100)
    def train(self, loader):
        for epoch in range(10):
            for x in loader:
                self.step(x)
            with torch.no_grad():
                self.visualize_results(epoch)
    def visualize_results(self, epoch):
        self.G.eval()
        return self.G(self.z).cpu().numpy()
class Logger:
    def visualize_results(self, epoch):
        print(epoch)
def main(kind, loader):
    if kind == "gan":
        gan = GAN()
    else:
        gan = Logger()
    gan.train(loader)
    gan.visualize_results(10)
""",
            line=15,
            column=16,
            unsafe=True,
            fixed="""
import torch
from torch import nn
class GAN:
    def __init__(self):
        self.G = nn.Linear(100, 784)
        self.z = torch.rand(64, 100)
    def train(self, loader):
        for epoch in range(10):
            for x in loader:
                self.step(x)
            with torch.no_grad():
                self.visualize_results(epoch)
    @torch.no_grad()
    def visualize_results(self, epoch):
        self.G.eval()
        return self.G(self.z).cpu().numpy()
class Logger:
    def visualize_results(self, epoch):
        print(epoch)
def main(kind, loader):
    if kind == "gan":
        gan = GAN()
    else:
        gan = Logger()
    gan.train(loader)
    gan.visualize_results(10)
""",
        ),
        Invalid(  # `net.forward(x)` runs the model as `net(x)` does
            """
import torch
from models import create_net
def check(path, images):
    net = create_net(2)
    net.load(path)
    net.eval()
    for x in images:
        confidences, locations = net.forward(x)
        print(confidences.sum())
""",
            line=8,
            column=34,
            unsafe=True,
            fixed="""
import torch
from models import create_net
def check(path, images):
    net = create_net(2)
    net.load(path)
    net.eval()
    with torch.no_grad():
        for x in images:
            confidences, locations = net.forward(x)
            print(confidences.sum())
""",
        ),
        Invalid(  # frozen, but thawed again elsewhere in the file: not known to be frozen when it runs
            """
import torch
def evaluate(model, loader):
    model.requires_grad_(False)
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
def finetune(model):
    model.requires_grad_(True)
""",
            line=7,
            column=21,
            unsafe=True,
            fixed="""
import torch
@torch.no_grad()
def evaluate(model, loader):
    model.requires_grad_(False)
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
def finetune(model):
    model.requires_grad_(True)
""",
        ),
        Invalid(  # a model built by a factory a config holds: `.state_dict()` on it, which no tensor has (DeepRL)
            """
import torch
class Agent:
    def __init__(self, config):
        self.network = config.network_fn()
        self.target_network = config.network_fn()
        self.target_network.load_state_dict(self.network.state_dict())
    def eval_step(self, state):
        q = self.network(state)
        return q.argmax(-1).cpu().numpy()
""",
            line=8,
            column=13,
            unsafe=True,
            fixed="""
import torch
class Agent:
    def __init__(self, config):
        self.network = config.network_fn()
        self.target_network = config.network_fn()
        self.target_network.load_state_dict(self.network.state_dict())
    @torch.no_grad()
    def eval_step(self, state):
        q = self.network(state)
        return q.argmax(-1).cpu().numpy()
""",
        ),
        Invalid(  # a helper of the file handed the evaluated model runs it (GAN-Tutorial's get_sample_image, issue 27)
            """
import torch
def sample_images(G, n):
    z = torch.randn(n, 8)
    return G(z)
def show(G):
    G.eval()
    images = sample_images(G, 16)
    return images
""",
            line=7,
            column=14,
            message="after `G.eval()`",
            unsafe=True,
            fixed="""
import torch
def sample_images(G, n):
    z = torch.randn(n, 8)
    return G(z)
@torch.no_grad()
def show(G):
    G.eval()
    images = sample_images(G, 16)
    return images
""",
        ),
        Invalid(  # a test function that loads the weights it runs is an evaluation, shape check or not
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(x)
def test():
    net = Net()
    net.load_state_dict(torch.load("net.pt"))
    print(net(torch.randn(2, 4)))
""",
            line=12,
            column=11,
            unsafe=True,
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(x)
@torch.no_grad()
def test():
    net = Net()
    net.load_state_dict(torch.load("net.pt"))
    print(net(torch.randn(2, 4)))
""",
        ),
        Invalid(  # `G` is a model by evidence: it is put in eval mode and called (its class is imported)
            """
import torch
from models import Generator
def sample(G, z):
    G.eval()
    images = G(z)
    return images
""",
            line=5,
            column=14,
            message="after `G.eval()`",
            fixed="""
import torch
from models import Generator
@torch.no_grad()
def sample(G, z):
    G.eval()
    images = G(z)
    return images
""",
            unsafe=True,
        ),
        Invalid(  # a chain of module methods: `model.cuda().eval().half()` puts `model` in eval mode
            """
import torch
def sample(model, z):
    model.cuda().eval().half()
    return model(z)
""",
            line=4,
            column=12,
            message="after `model.cuda().eval()`",
            fixed="""
import torch
@torch.no_grad()
def sample(model, z):
    model.cuda().eval().half()
    return model(z)
""",
            unsafe=True,
        ),
        Invalid(  # `nn` from a star import of the project's helpers is torch's: `G` is an nn.Module
            """
import torch
from helpers import *
class Generator(nn.Module):
    def forward(self, z):
        return z
G = Generator()
G.eval()
images = G(noise)
""",
            line=8,
            column=10,
            message="after `G.eval()`",
            fixed="""
import torch
from helpers import *
class Generator(nn.Module):
    def forward(self, z):
        return z
G = Generator()
G.eval()
with torch.no_grad():
    images = G(noise)
""",
            unsafe=True,
        ),
        Invalid(  # `Variable(x, volatile=True)` does nothing since PyTorch 0.4: gradients are still on
            """
import torch
from torch.autograd import Variable
def run(model, test_loader):
    model.eval()
    for img, label in test_loader:
        img = Variable(img, volatile=True)
        out = model(img)
""",
            line=7,
            column=15,
            unsafe=True,
            fixed="""
import torch
from torch.autograd import Variable
@torch.no_grad()
def run(model, test_loader):
    model.eval()
    for img, label in test_loader:
        img = Variable(img, volatile=True)
        out = model(img)
""",
        ),
        Invalid(  # the model is built from a class passed in (`Model: nn.Module`), then run
            """
import torch
def evaluate(envs, Model: torch.nn.Module):
    model = Model(envs)
    model.eval()
    obs = envs.reset()
    for _ in range(100):
        q_values = model(torch.Tensor(obs))
        obs = envs.step(q_values.argmax(1))
""",
            line=7,
            column=20,
            unsafe=True,
            fixed="""
import torch
@torch.no_grad()
def evaluate(envs, Model: torch.nn.Module):
    model = Model(envs)
    model.eval()
    obs = envs.reset()
    for _ in range(100):
        q_values = model(torch.Tensor(obs))
        obs = envs.step(q_values.argmax(1))
""",
        ),
        Invalid(  # a model method other than forward, fed data after `.eval()` (an RL policy)
            """
import torch
def run_episodes(model, envs):
    model.eval()
    obs = envs.reset()
    for _ in range(1000):
        actions = model.get_action(torch.Tensor(obs))
        obs = envs.step(actions)
""",
            line=6,
            column=19,
            unsafe=True,
            fixed="""
import torch
@torch.no_grad()
def run_episodes(model, envs):
    model.eval()
    obs = envs.reset()
    for _ in range(1000):
        actions = model.get_action(torch.Tensor(obs))
        obs = envs.step(actions)
""",
        ),
        Invalid(  # a context manager of the project whose `__enter__` calls `model.train(False)` puts what it is handed in eval mode (pytorch_sac's `utils.eval_mode`); the agent's `act` runs its actor with gradients on
            """
import torch

class eval_mode:
    def __init__(self, *models):
        self.models = models

    def __enter__(self):
        self.prev = [m.training for m in self.models]
        for model in self.models:
            model.train(False)

    def __exit__(self, *args):
        for model, state in zip(self.models, self.prev):
            model.train(state)

def collect(agent, env, buffer, steps):
    obs = env.reset()
    for step in range(steps):
        with eval_mode(agent):
            action = agent.act(torch.as_tensor(obs))
        obs, reward, done, _ = env.step(action)
        agent.update(buffer, step)
""",
            line=20,
            column=22,
            unsafe=True,
            fixed="""
import torch

class eval_mode:
    def __init__(self, *models):
        self.models = models

    def __enter__(self):
        self.prev = [m.training for m in self.models]
        for model in self.models:
            model.train(False)

    def __exit__(self, *args):
        for model, state in zip(self.models, self.prev):
            model.train(state)

def collect(agent, env, buffer, steps):
    obs = env.reset()
    for step in range(steps):
        with eval_mode(agent):
            with torch.no_grad():
                action = agent.act(torch.as_tensor(obs))
        obs, reward, done, _ = env.step(action)
        agent.update(buffer, step)
""",
        ),
        Valid(  # the agent's method runs its actor under its own no_grad (curl's `CurlSacAgent.sample_action`): nothing builds a graph in the eval-mode block
            """
import torch
from torch import nn

class eval_mode:
    def __init__(self, *models):
        self.models = models

    def __enter__(self):
        for model in self.models:
            model.train(False)

    def __exit__(self, *args):
        for model in self.models:
            model.train(True)

class Agent:
    def __init__(self):
        self.actor = nn.Linear(4, 2)

    def train(self, training=True):
        self.actor.train(training)

    def sample_action(self, obs):
        with torch.no_grad():
            return self.actor(torch.as_tensor(obs)).numpy()

def collect(agent, env, steps):
    obs = env.reset()
    for step in range(steps):
        with eval_mode(agent):
            action = agent.sample_action(obs)
        obs, reward, done, _ = env.step(action)
"""
        ),
        Invalid(  # `model.loss(sample)` after `model.eval()`: every nn.Module of the project with a `loss` method runs its encoder there (protonets' `evaluate`)
            """
import torch
from torch import nn

class Protonet(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def loss(self, sample):
        z = self.encoder.forward(sample["xs"])
        return z.pow(2).mean(), {"acc": z.mean().item()}

def evaluate(model, data_loader, meters):
    model.eval()
    for sample in data_loader:
        _, output = model.loss(sample)
        for field, meter in meters.items():
            meter.add(output[field])
    return meters
""",
            line=16,
            column=21,
            unsafe=True,
            fixed="""
import torch
from torch import nn

class Protonet(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def loss(self, sample):
        z = self.encoder.forward(sample["xs"])
        return z.pow(2).mean(), {"acc": z.mean().item()}

@torch.no_grad()
def evaluate(model, data_loader, meters):
    model.eval()
    for sample in data_loader:
        _, output = model.loss(sample)
        for field, meter in meters.items():
            meter.add(output[field])
    return meters
""",
        ),
        Invalid(  # a loop over test data in an nn.Module's method runs the model through `self.correct(x)`, whose body runs `self.set_forward(x)` (CloserLookFewShot's MetaTemplate.test_loop; named as evaluation and handing back a number, the whole method is evaluation)
            """
import numpy as np
import torch
import torch.nn as nn

class MetaTemplate(nn.Module):
    def __init__(self, model_func):
        super().__init__()
        self.feature = model_func()

    def set_forward(self, x):
        z = self.feature.forward(x)
        return z @ z.t()

    def correct(self, x):
        scores = self.set_forward(x)
        return float((scores.data.argmax(1) == 0).sum()), len(x)

    def test_loop(self, test_loader):
        acc_all = []
        for x, _ in test_loader:
            correct, count = self.correct(x)
            acc_all.append(correct / count)
        return np.mean(acc_all)
""",
            line=21,
            column=30,
            unsafe=True,
            fixed="""
import numpy as np
import torch
import torch.nn as nn

class MetaTemplate(nn.Module):
    def __init__(self, model_func):
        super().__init__()
        self.feature = model_func()

    def set_forward(self, x):
        z = self.feature.forward(x)
        return z @ z.t()

    def correct(self, x):
        scores = self.set_forward(x)
        return float((scores.data.argmax(1) == 0).sum()), len(x)

    def test_loop(self, test_loader):
        acc_all = []
        with torch.no_grad():
            for x, _ in test_loader:
                correct, count = self.correct(x)
                acc_all.append(correct / count)
        return np.mean(acc_all)
""",
        ),
        Invalid(  # `self.feature.forward(x)` in an nn.Module runs its submodule, built by a factory the valuation cannot see (CloserLookFewShot's BaselineTrain.analysis_loop)
            """
import torch
import torch.nn as nn

class BaselineTrain(nn.Module):
    def __init__(self, model_func, num_class):
        super().__init__()
        self.feature = model_func()
        self.classifier = nn.Linear(self.feature.final_feat_dim, num_class)

    def analysis_loop(self, val_loader):
        feats = []
        for x, y in val_loader:
            feats.append(self.feature.forward(x.cuda()).data.cpu().numpy())
        return feats
""",
            line=13,
            column=26,
            unsafe=True,
            fixed="""
import torch
import torch.nn as nn

class BaselineTrain(nn.Module):
    def __init__(self, model_func, num_class):
        super().__init__()
        self.feature = model_func()
        self.classifier = nn.Linear(self.feature.final_feat_dim, num_class)

    def analysis_loop(self, val_loader):
        feats = []
        with torch.no_grad():
            for x, y in val_loader:
                feats.append(self.feature.forward(x.cuda()).data.cpu().numpy())
        return feats
""",
        ),
        Invalid(  # the model is built from a class the function is handed (`Model: nn.Module`), whatever its name (cleanrl's `ppo_eval.py`, issue 27)
            """
import torch
def evaluate(model_path, envs, Model: torch.nn.Module, device):
    agent = Model(envs).to(device)
    agent.load_state_dict(torch.load(model_path))
    agent.eval()
    obs = envs.reset()
    for _ in range(1000):
        actions, _ = agent.get_action_and_value(torch.Tensor(obs).to(device))
        obs = envs.step(actions.cpu().numpy())
""",
            line=8,
            column=22,
            unsafe=True,
            fixed="""
import torch
@torch.no_grad()
def evaluate(model_path, envs, Model: torch.nn.Module, device):
    agent = Model(envs).to(device)
    agent.load_state_dict(torch.load(model_path))
    agent.eval()
    obs = envs.reset()
    for _ in range(1000):
        actions, _ = agent.get_action_and_value(torch.Tensor(obs).to(device))
        obs = envs.step(actions.cpu().numpy())
""",
        ),
        Invalid(  # a method fed data of a model named like one, in a loop over test data (pytorch-wgan's feature extraction, issue 27)
            """
import torch
def extract(discriminator, test_loader):
    feats = []
    for images, labels in test_loader:
        outputs = discriminator.feature_extraction(images.cuda())
        feats.append(outputs.data.cpu().numpy())
    return feats
""",
            line=5,
            column=19,
            unsafe=True,
            fixed="""
import torch
def extract(discriminator, test_loader):
    feats = []
    with torch.no_grad():
        for images, labels in test_loader:
            outputs = discriminator.feature_extraction(images.cuda())
            feats.append(outputs.data.cpu().numpy())
    return feats
""",
        ),
        Invalid(  # an object built around the model (`elbo = SVI(model, ...)`) runs it when called: the validation loop after `model.eval()` (semi-supervised-pytorch, issue 27)
            """
import torch
elbo = SVI(model, likelihood=bce)
for epoch in range(10):
    model.train()
    for x in train_loader:
        loss = -elbo(x)
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    total = 0
    for x in validation:
        total += -elbo(x).item()
""",
            line=13,
            column=19,
            unsafe=True,
            message="after `model.eval()`",
            fixed="""
import torch
elbo = SVI(model, likelihood=bce)
for epoch in range(10):
    model.train()
    for x in train_loader:
        loss = -elbo(x)
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    total = 0
    with torch.no_grad():
        for x in validation:
            total += -elbo(x).item()
""",
        ),
        Invalid(  # `nn.parallel.data_parallel(netG, inputs, gpus)` runs `netG` (StackGAN's sample(), issue 27)
            """
import torch
import torch.nn as nn

class T:
    def sample(self, loader):
        netG, _ = self.load_network_stageI()
        netG.eval()
        for x in loader:
            _, fake, mu, logvar = nn.parallel.data_parallel(netG, (x, x), self.gpus)
            save(fake.data.cpu().numpy())
""",
            line=9,
            column=35,
            unsafe=True,
            message="after `netG.eval()`",
            fixed="""
import torch
import torch.nn as nn

class T:
    def sample(self, loader):
        netG, _ = self.load_network_stageI()
        netG.eval()
        with torch.no_grad():
            for x in loader:
                _, fake, mu, logvar = nn.parallel.data_parallel(netG, (x, x), self.gpus)
                save(fake.data.cpu().numpy())
""",
        ),
        Valid(  # the object called after `model.eval()` is built around another model: not model's evaluation
            """
import torch
elbo = SVI(prior, likelihood=bce)
for epoch in range(10):
    model.train()
    for x in train_loader:
        loss = criterion(model(x), x)
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    for x in validation:
        total = -elbo(x).item()
""",
        ),
        Invalid(  # the training loop ends each epoch in eval mode: the prediction after it runs in eval mode, with gradients on (mrdbourke's notebooks, issue 27)
            """
import torch
for epoch in range(5):
    model.train()
    for x, y in train_loader:
        opt.zero_grad()
        criterion(model(x), y).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        val = sum(criterion(model(x), y).item() for x, y in val_loader)
pred = model(sample)
print(pred.argmax(1))
""",
            line=11,
            column=8,
            unsafe=True,
            message="the mode the loop above leaves it in",
            fixed="""
import torch
for epoch in range(5):
    model.train()
    for x, y in train_loader:
        opt.zero_grad()
        criterion(model(x), y).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        val = sum(criterion(model(x), y).item() for x, y in val_loader)
with torch.no_grad():
    pred = model(sample)
print(pred.argmax(1))
""",
        ),
        Invalid(  # name evidence: the whole function is evaluation -> decorator
            """
import torch
def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
""",
            line=6,
            column=21,
            unsafe=True,
            message="`model(x)` runs in `evaluate`",
            fixed="""
import torch
@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
""",
        ),
        Invalid(  # a validation loader inside a training function: wrap that loop only
            """
import torch
def fit(net, train_loader, val_loader, opt):
    for x, y in train_loader:
        net(x).sum().backward()
        opt.step()
    # validation
    for x, y in val_loader:
        pred = net(x)
""",
            line=8,
            column=16,
            unsafe=True,
            message="in the loop over `val_loader`",
            fixed="""
import torch
def fit(net, train_loader, val_loader, opt):
    for x, y in train_loader:
        net(x).sum().backward()
        opt.step()
    # validation
    with torch.no_grad():
        for x, y in val_loader:
            pred = net(x)
""",
        ),
        Invalid(  # module-level script, torch imported as `th`: wrap the loop
            """
import torch as th
model = build()
model.eval()
for batch in test_loader:
    # run the model
    out = model(batch)
    print(out.argmax(1))
""",
            line=6,
            column=11,
            unsafe=True,
            message="after `model.eval()`",
            fixed="""
import torch as th
model = build()
model.eval()
with th.no_grad():
    for batch in test_loader:
        # run the model
        out = model(batch)
        print(out.argmax(1))
""",
        ),
        Invalid(  # prefer-inference-mode
            """
import torch
def predict(model, x):
    return model(x).softmax(-1)
""",
            line=3,
            column=12,
            unsafe=True,
            config={"prefer-inference-mode": True},
            fixed="""
import torch
@torch.inference_mode()
def predict(model, x):
    return model(x).softmax(-1)
""",
        ),
        Invalid(  # `self.eval()` in a module method; the statement before it runs no model
            """
import torch
from torch import nn
class Net(nn.Module):
    def score(self, x):
        self.eval()
        return self.head(self(x))
""",
            line=6,
            column=16,
            unsafe=True,
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    @torch.no_grad()
    def score(self, x):
        self.eval()
        return self.head(self(x))
""",
        ),
        Invalid(  # torch only imported through `from torch import nn`: reported, no fix
            """
from torch import nn
def evaluate(model: nn.Module, batches):
    for x in batches:
        y = model(x)
""",
            line=4,
            column=13,
            fixed=None,
        ),
        Invalid(  # a method of the class runs the model put in eval mode, in a function that training code calls but whose result is a number (Informer2020's `vali`, issue 27)
            """
import numpy as np
import torch
class Experiment:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion
    def _process_one_batch(self, x):
        return self.model(x)
    def vali(self, loader):
        self.model.eval()
        losses = []
        for x, y in loader:
            pred = self._process_one_batch(x)
            losses.append(self.criterion(pred.detach().cpu(), y).item())
        total = np.average(losses)
        self.model.train()
        return total
    def train(self, loader, opt):
        for epoch in range(10):
            self.model.train()
            for x, y in loader:
                loss = self.criterion(self._process_one_batch(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(self.vali(loader))
""",
            line=13,
            column=20,
            message="`self._process_one_batch(x)` runs after `self.model.eval()`",
            unsafe=True,
            fixed="""
import numpy as np
import torch
class Experiment:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion
    def _process_one_batch(self, x):
        return self.model(x)
    @torch.no_grad()
    def vali(self, loader):
        self.model.eval()
        losses = []
        for x, y in loader:
            pred = self._process_one_batch(x)
            losses.append(self.criterion(pred.detach().cpu(), y).item())
        total = np.average(losses)
        self.model.train()
        return total
    def train(self, loader, opt):
        for epoch in range(10):
            self.model.train()
            for x, y in loader:
                loss = self.criterion(self._process_one_batch(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(self.vali(loader))
""",
        ),
        Invalid(  # `predict` runs its model through a method of the class (Informer2020's `predict`)
            """
import torch
class Experiment:
    def __init__(self, model):
        self.model = model
    def _process_one_batch(self, x):
        return self.model(x)
    def predict(self, loader):
        return [self._process_one_batch(x).detach().cpu().numpy() for x in loader]
""",
            line=8,
            column=17,
            message="runs in `predict`",
            unsafe=True,
            fixed="""
import torch
class Experiment:
    def __init__(self, model):
        self.model = model
    def _process_one_batch(self, x):
        return self.model(x)
    @torch.no_grad()
    def predict(self, loader):
        return [self._process_one_batch(x).detach().cpu().numpy() for x in loader]
""",
        ),
        Invalid(  # the helper runs the module's global model put in eval mode, handed nothing (GAN-Tutorial's infoGAN)
            """
import torch
from models import Generator
G = Generator().cuda()
def get_sample_image():
    z = torch.randn(100, 62).cuda()
    return G(z).cpu().data.numpy()
for epoch in range(10):
    G.train()
    train_epoch(G)
    G.eval()
    images = get_sample_image()
""",
            line=11,
            column=14,
            message="`get_sample_image()` runs after `G.eval()`",
            unsafe=True,
            fixed="""
import torch
from models import Generator
G = Generator().cuda()
def get_sample_image():
    z = torch.randn(100, 62).cuda()
    return G(z).cpu().data.numpy()
for epoch in range(10):
    G.train()
    train_epoch(G)
    G.eval()
    with torch.no_grad():
        images = get_sample_image()
""",
        ),
        Invalid(  # a method of the class puts the model in eval mode (`net_mode(train=False)`), the model's encoder is run through a local alias, and training calls it (Beta-VAE's `viz_traverse`)
            """
import torch
class Solver:
    def __init__(self, net, optim):
        self.net = net
        self.optim = optim
    def net_mode(self, train):
        if not isinstance(train, bool):
            raise ValueError(train)
        if train:
            self.net.train()
        else:
            self.net.eval()
    def viz_traverse(self, x):
        self.net_mode(train=False)
        encoder = self.net.encoder
        z = encoder(x)
        print(z.mean().item())
        self.net_mode(train=True)
    def train(self, loader):
        self.net_mode(train=True)
        for x in loader:
            loss = self.net(x).sum()
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
            self.viz_traverse(x)
""",
            line=16,
            column=13,
            message="after `self.net_mode(train=False)` (which calls `self.net.eval()`)",
            unsafe=True,
            fixed="""
import torch
class Solver:
    def __init__(self, net, optim):
        self.net = net
        self.optim = optim
    def net_mode(self, train):
        if not isinstance(train, bool):
            raise ValueError(train)
        if train:
            self.net.train()
        else:
            self.net.eval()
    @torch.no_grad()
    def viz_traverse(self, x):
        self.net_mode(train=False)
        encoder = self.net.encoder
        z = encoder(x)
        print(z.mean().item())
        self.net_mode(train=True)
    def train(self, loader):
        self.net_mode(train=True)
        for x in loader:
            loss = self.net(x).sum()
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
            self.viz_traverse(x)
""",
        ),
        Invalid(  # a `forward_*` method of the model fed data runs it (tabnet's `forward_masks`)
            """
import torch
def explain(network, loader):
    network.eval()
    masks = []
    for x in loader:
        _, mask = network.forward_masks(x)
        masks.append(mask.detach().cpu().numpy())
    return masks
""",
            line=6,
            column=19,
            message="`network.forward_masks(x)` runs after `network.eval()`",
            unsafe=True,
            fixed="""
import torch
@torch.no_grad()
def explain(network, loader):
    network.eval()
    masks = []
    for x in loader:
        _, mask = network.forward_masks(x)
        masks.append(mask.detach().cpu().numpy())
    return masks
""",
        ),
        Invalid(  # a mode switch on the phase: the test phase runs the model in eval mode with gradients on (pytorch-GAT's `main_loop`, issue 27)
            """
import torch
def get_main_loop(model, data, opt, loss_fn):
    def main_loop(phase):
        if phase == "train":
            model.train()
        else:
            model.eval()
        out = model(data.x)
        loss = loss_fn(out, data.y)
        if phase == "train":
            opt.zero_grad()
            loss.backward()
            opt.step()
        return (out.argmax(1) == data.y).float().mean().item()
    return main_loop
def train(model, data, opt, loss_fn):
    main_loop = get_main_loop(model, data, opt, loss_fn)
    for epoch in range(100):
        main_loop(phase="train")
        with torch.no_grad():
            main_loop(phase="val")
    print(main_loop(phase="test"))
""",
            line=8,
            column=15,
            message="after `model.eval()` (where `phase == \"train\"` is false)",
        ),
        Invalid(  # a method that loads weights into `self.G` runs nothing: the run is `self.G(z)` (pytorch-wgan's `evaluate`)
            """
import torch
from torch import nn
class GAN:
    def __init__(self):
        self.G = nn.Linear(8, 8)
    def load_model(self, path):
        self.G.load_state_dict(torch.load(path))
    def evaluate(self, path, z):
        self.load_model(path)
        return self.G(z).cpu().numpy()
""",
            line=10,
            column=16,
            message="`self.G(z)` runs in `evaluate`",
            unsafe=True,
            fixed="""
import torch
from torch import nn
class GAN:
    def __init__(self):
        self.G = nn.Linear(8, 8)
    def load_model(self, path):
        self.G.load_state_dict(torch.load(path))
    @torch.no_grad()
    def evaluate(self, path, z):
        self.load_model(path)
        return self.G(z).cpu().numpy()
""",
        ),
        Invalid(  # a method of the model handed its data by keyword (`test_inputs=x`) runs it as a positional batch would (wavenet_vocoder's test_mixture_wavenet)
            """
import torch
from wavenet_vocoder import build_compact_model
def test_mixture(x, c):
    model = build_compact_model(out_channels=30)
    model.eval()
    y = model.incremental_forward(test_inputs=x, c=c, T=None)
    assert y.size() == x.size()
""",
            line=6,
            column=9,
            message="after `model.eval()`",
            unsafe=True,
            fixed="""
import torch
from wavenet_vocoder import build_compact_model
def test_mixture(x, c):
    model = build_compact_model(out_channels=30)
    model.eval()
    with torch.no_grad():
        y = model.incremental_forward(test_inputs=x, c=c, T=None)
    assert y.size() == x.size()
""",
        ),
        Invalid(  # `self.eval()`, then a method of the module whose body runs its layers, per generated sample (pytorch-wavenet's generate_fast)
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
class WaveNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.classes = classes
        self.start_conv = nn.Conv1d(classes, 32, 1)
        self.convs = nn.ModuleList([nn.Conv1d(32, 32, 1) for _ in range(4)])
        self.end_conv = nn.Conv1d(32, classes, 1)
    def wavenet(self, input):
        x = self.start_conv(input)
        for conv in self.convs:
            x = F.relu(conv(x))
        return self.end_conv(x)
    def forward(self, input):
        return self.wavenet(input)
    def generate(self, first, num_samples):
        self.eval()
        input = first
        generated = []
        for i in range(num_samples):
            x = self.wavenet(input).squeeze()
            sample = torch.argmax(x, 0)
            generated.append(sample.item())
            input = F.one_hot(sample, self.classes).float().view(1, -1, 1)
        self.train()
        return generated
""",
            line=23,
            column=17,
            message="`self.wavenet(input)` runs after `self.eval()`",
            unsafe=True,
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F
class WaveNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.classes = classes
        self.start_conv = nn.Conv1d(classes, 32, 1)
        self.convs = nn.ModuleList([nn.Conv1d(32, 32, 1) for _ in range(4)])
        self.end_conv = nn.Conv1d(32, classes, 1)
    def wavenet(self, input):
        x = self.start_conv(input)
        for conv in self.convs:
            x = F.relu(conv(x))
        return self.end_conv(x)
    def forward(self, input):
        return self.wavenet(input)
    @torch.no_grad()
    def generate(self, first, num_samples):
        self.eval()
        input = first
        generated = []
        for i in range(num_samples):
            x = self.wavenet(input).squeeze()
            sample = torch.argmax(x, 0)
            generated.append(sample.item())
            input = F.one_hot(sample, self.classes).float().view(1, -1, 1)
        self.train()
        return generated
""",
        ),
        Invalid(  # a phase loop over a dict's keys (the file names its phases `["train_no_dev", "dev"]`) hands each phase to a step whose switch tests a local `train = (phase == ...)`; the checkpoint under `if train and ...` is training's (wavenet_vocoder's `__train_step`)
            """
import torch
def get_loaders(make):
    loaders = {}
    for phase in ["train_no_dev", "dev"]:
        loaders[phase] = make(phase)
    return loaders
def step(phase, model, optimizer, criterion, x, y):
    train = (phase == "train_no_dev")
    if train:
        model.train()
        counter = 1
    else:
        model.eval()
        counter = 0
    y_hat = model(x)
    loss = criterion(y_hat, y)
    if train and counter > 0:
        save_checkpoint(model, optimizer)
    if train:
        loss.backward()
        optimizer.step()
    return loss.item()
def save_checkpoint(model, optimizer):
    torch.save({"model": model.state_dict()}, "ckpt.pt")
def train_loop(model, loaders, optimizer, criterion):
    for epoch in range(10):
        for phase, loader in loaders.items():
            for x, y in loader:
                step(phase, model, optimizer, criterion, x, y)
""",
            line=15,
            column=13,
            message="after `model.eval()` (where `train` is false)",
        ),
        Valid(  # the only phase loop goes over a dict keyed by "train" alone; the file's other list of phase names is argparse's `choices`, which says nothing about what runs
            """
import argparse
import torch
def step(phase, model, optimizer, criterion, x, y):
    train = (phase == "train")
    if train:
        model.train()
    else:
        model.eval()
    y_hat = model(x)
    loss = criterion(y_hat, y)
    if train:
        loss.backward()
        optimizer.step()
    return loss.item()
def main(model, train_loader, optimizer, criterion):
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["train", "test"])
    loaders = {"train": train_loader}
    for epoch in range(10):
        for phase, loader in loaders.items():
            for x, y in loader:
                step(phase, model, optimizer, criterion, x, y)
""",
        ),
        Invalid(  # a phase loop over a dict keyed by "train" and "val" hands each phase to a step whose switch compares with 'train' (the quotes differ; the strings are one)
            """
import argparse
import torch
def step(phase, model, optimizer, criterion, x, y):
    train = (phase == 'train')
    if train:
        model.train()
    else:
        model.eval()
    y_hat = model(x)
    loss = criterion(y_hat, y)
    if train:
        loss.backward()
        optimizer.step()
    return loss.item()
def main(model, train_loader, val_loader, optimizer, criterion):
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="train")
    loaders = {"train": train_loader, "val": val_loader}
    for epoch in range(10):
        for phase, loader in loaders.items():
            for x, y in loader:
                step(phase, model, optimizer, criterion, x, y)
""",
            line=9,
            column=13,
            message="after `model.eval()` (where `train` is false)",
        ),
        Invalid(  # the eval phase runs the model through a helper that replicates it and applies the replicas (torch's `data_parallel` written out: wavenet_vocoder's `data_parallel_workaround`)
            """
import torch
from torch.nn.parallel import replicate, parallel_apply
def run_replicas(model, inputs, devices):
    replicas = replicate(model, devices)
    outputs = parallel_apply(replicas, [inputs])
    return outputs[0]
def step(phase, model, optimizer, criterion, x, y, devices):
    train = phase == "train"
    if train:
        model.train()
    else:
        model.eval()
    y_hat = run_replicas(model, x, devices)
    loss = criterion(y_hat, y)
    if train:
        loss.backward()
        optimizer.step()
    return loss.item()
def train_loop(model, loaders, optimizer, criterion, devices):
    for epoch in range(10):
        for phase in ["train", "val"]:
            for x, y in loaders[phase]:
                step(phase, model, optimizer, criterion, x, y, devices)
""",
            line=13,
            column=13,
            message="`run_replicas(model, x, devices)` runs after `model.eval()`",
        ),
        Invalid(  # `.eval()` chained onto the construction puts the name bound to it in eval mode, as a separate `net.eval()` would (SRGAN's test scripts)
            """
import torch
from torch import nn
class Upscaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
    def forward(self, x):
        return self.conv(x)
def enhance(images):
    net = Upscaler().cuda().eval()
    for image in images:
        print(net(image.cuda()).mean().item())
""",
            line=12,
            column=15,
            unsafe=True,
            message="runs after `Upscaler().cuda().eval()`",
            fixed="""
import torch
from torch import nn
class Upscaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
    def forward(self, x):
        return self.conv(x)
@torch.no_grad()
def enhance(images):
    net = Upscaler().cuda().eval()
    for image in images:
        print(net(image.cuda()).mean().item())
""",
        ),
        Invalid(  # the same at module level, weights loaded after the chained `.eval()`
            """
import torch
from torch import nn
class Upscaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
    def forward(self, x):
        return self.conv(x)
model = Upscaler().eval()
model.load_state_dict(torch.load("upscaler.pt"))
image = torch.rand(1, 3, 32, 32)
out = model(image)
print(out.data)
""",
            line=12,
            column=7,
            unsafe=True,
            message="runs after `Upscaler().eval()`",
            fixed="""
import torch
from torch import nn
class Upscaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
    def forward(self, x):
        return self.conv(x)
model = Upscaler().eval()
model.load_state_dict(torch.load("upscaler.pt"))
image = torch.rand(1, 3, 32, 32)
with torch.no_grad():
    out = model(image)
print(out.data)
""",
        ),
        Invalid(  # picked out of a list and called with gradients on: the direct call under no_grad is not every call of `evaluate`
            """
import torch
def evaluate(model, x):
    return model(x).argmax(1)
def score(model, x):
    return model(x).max(1)
def run(model, x, level):
    with torch.no_grad():
        evaluate(model, x)
    pick = [evaluate, score][level]
    return pick(model, x)
""",
            line=3,
            column=12,
            unsafe=True,
            message="runs in `evaluate` (its name says it evaluates)",
            fixed="""
import torch
@torch.no_grad()
def evaluate(model, x):
    return model(x).argmax(1)
def score(model, x):
    return model(x).max(1)
def run(model, x, level):
    with torch.no_grad():
        evaluate(model, x)
    pick = [evaluate, score][level]
    return pick(model, x)
""",
        ),
        Invalid(  # the picked helper is handed back as well: its caller may run it with gradients on
            """
import torch
def infer(model, batches):
    def infer_plain(x, net):
        return net(x).clone()
    model.eval()
    infer_fn = [infer_plain][0]
    with torch.no_grad():
        out = torch.cat([infer_fn(x, model) for x in batches])
    return out, infer_fn
""",
            line=4,
            column=16,
            unsafe=True,
            message="runs in `infer_plain` (its name says it evaluates)",
            fixed="""
import torch
def infer(model, batches):
    @torch.no_grad()
    def infer_plain(x, net):
        return net(x).clone()
    model.eval()
    infer_fn = [infer_plain][0]
    with torch.no_grad():
        out = torch.cat([infer_fn(x, model) for x in batches])
    return out, infer_fn
""",
        ),
        Invalid(  # a metric net built in eval mode by a chained `.eval()` before `net.eval()`: the chained form puts only its own target in eval mode, and `net`'s region is its own
            """
import torch
from torch import nn
class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
    def forward(self, x):
        return self.conv(x)
def compare(loader, weights):
    judge_net = Denoiser().cuda().eval()
    net = Denoiser().cuda()
    net.load_state_dict(torch.load(weights))
    net.eval()
    for noisy, clean in loader:
        restored = net(noisy.cuda())
        with torch.no_grad():
            gap = judge_net(restored) - judge_net(clean.cuda())
        print(gap.abs().mean().item())
""",
            line=15,
            column=20,
            unsafe=True,
            message="runs after `net.eval()`",
            fixed="""
import torch
from torch import nn
class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
    def forward(self, x):
        return self.conv(x)
def compare(loader, weights):
    judge_net = Denoiser().cuda().eval()
    net = Denoiser().cuda()
    net.load_state_dict(torch.load(weights))
    net.eval()
    with torch.no_grad():
        for noisy, clean in loader:
            restored = net(noisy.cuda())
            with torch.no_grad():
                gap = judge_net(restored) - judge_net(clean.cuda())
            print(gap.abs().mean().item())
""",
        ),
        Invalid(  # a module-level dict of evaluators called under no_grad in its file: another file may import it and call it with gradients on
            """
import torch
def score_top1(model, batches):
    model.eval()
    return [model(x).argmax(1) for x in batches]
def score_top5(model, batches):
    return [model(x).topk(5).indices for x in batches]
SCORERS = {"top1": score_top1, "top5": score_top5}
def report(model, batches, kind):
    with torch.no_grad():
        return SCORERS[kind](model, batches)
""",
            line=4,
            column=13,
            unsafe=True,
            message="runs after `model.eval()`",
            fixed="""
import torch
@torch.no_grad()
def score_top1(model, batches):
    model.eval()
    return [model(x).argmax(1) for x in batches]
def score_top5(model, batches):
    return [model(x).topk(5).indices for x in batches]
SCORERS = {"top1": score_top1, "top5": score_top5}
def report(model, batches, kind):
    with torch.no_grad():
        return SCORERS[kind](model, batches)
""",
        ),
        Invalid(  # a second pick of the same helpers, bound in both branches of an `if` and called with gradients on: no evidence, so it blocks the no_grad pick's proof
            """
import torch
def label_plain(model, x):
    model.eval()
    return model(x).argmax(1)
def label_flipped(model, x):
    return model(x.flip(-1)).argmax(1)
def compare(model, x, flip):
    chosen = [label_plain, label_flipped][flip]
    with torch.no_grad():
        first = chosen(model, x)
    if flip:
        again = [label_plain, label_flipped][flip]
    else:
        again = label_plain
    second = again(model, x)
    return first, second
""",
            line=4,
            column=12,
            unsafe=True,
            message="runs after `model.eval()`",
            fixed="""
import torch
@torch.no_grad()
def label_plain(model, x):
    model.eval()
    return model(x).argmax(1)
def label_flipped(model, x):
    return model(x.flip(-1)).argmax(1)
def compare(model, x, flip):
    chosen = [label_plain, label_flipped][flip]
    with torch.no_grad():
        first = chosen(model, x)
    if flip:
        again = [label_plain, label_flipped][flip]
    else:
        again = label_plain
    second = again(model, x)
    return first, second
""",
        ),
        Invalid(  # a module-level script: a bound method of the evaluated model's submodule, either of two picked by a conditional expression, runs the model
            """
import torch
from torch import nn
class Coder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
    def encode(self, x):
        return self.enc(x)
class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen_a = Coder()
        self.gen_b = Coder()
pair = Pair()
pair.eval()
encode = pair.gen_a.encode if a2b else pair.gen_b.encode
for x in loader:
    codes = encode(x)
    print(codes.mean().item())
""",
            line=18,
            column=13,
            unsafe=True,
            message="after `pair.eval()`",
            fixed="""
import torch
from torch import nn
class Coder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
    def encode(self, x):
        return self.enc(x)
class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen_a = Coder()
        self.gen_b = Coder()
pair = Pair()
pair.eval()
encode = pair.gen_a.encode if a2b else pair.gen_b.encode
with torch.no_grad():
    for x in loader:
        codes = encode(x)
        print(codes.mean().item())
""",
        ),
    ]

    VALID += [
        Valid(  # the method called after eval() is decorated `@torch.no_grad()`: its whole body runs without gradients
            """
import torch
from torch import nn
class Painter(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
    def forward(self, x):
        return self.layer(x)
    @torch.no_grad()
    def sample(self, x):
        return self.layer(x)
painter = Painter()
painter.load_state_dict(torch.load("painter.pt"))
painter.eval()
for x in loader:
    torch.save(painter.sample(x), "out.pt")
"""
        ),
        Valid(  # a name bound to a method that runs no model (`parameters`, `state_dict`) is judged as its direct call: no evaluation
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
    def forward(self, x):
        return self.body(x)
net = Net()
net.load_state_dict(torch.load("net.pt"))
net.eval()
weights = net.parameters
print(sum(w.numel() for w in weights()))
snapshot = net.body.state_dict
torch.save(snapshot(), "body.pt")
"""
        ),
        Valid(  # the same in a function: `count = model.parameters` then `count()` counts, it runs nothing
            """
import torch
from torch import nn
def size_of(model):
    model.eval()
    count = model.parameters
    return sum(w.numel() for w in count())
"""
        ),
        Valid(  # one alternative of the alias is not the evaluated model's: what `encode(x)` runs is not known
            """
import torch
from torch import nn
class Coder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
    def encode(self, x):
        return self.enc(x)
class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen_a = Coder()
        self.gen_b = Coder()
pair = Pair()
pair.eval()
encode = pair.gen_a.encode if a2b else other.encode
for x in loader:
    codes = encode(x)
    print(codes.mean().item())
"""
        ),
    ]

    INVALID += [
        Invalid(  # a second model's `.eval()` in a block of the first one's region opens that model's own region
            """
import torch
def compare(teacher, student, batches, refine):
    teacher.eval()
    for x in batches:
        with torch.no_grad():
            target = teacher(x).argmax(1)
        if refine:
            student.eval()
            guess = student(x).argmax(1)
            print((guess == target).float().mean().item())
""",
            line=9,
            column=21,
            unsafe=True,
            message='after `student.eval()`',
            fixed="""
import torch
def compare(teacher, student, batches, refine):
    teacher.eval()
    for x in batches:
        with torch.no_grad():
            target = teacher(x).argmax(1)
        if refine:
            student.eval()
            with torch.no_grad():
                guess = student(x).argmax(1)
            print((guess == target).float().mean().item())
""",
        ),
        Invalid(  # one region per model: `head.eval()` after `backbone.eval()` in the same block
            """
import torch
def describe(backbone, head, x):
    backbone.eval()
    with torch.no_grad():
        features = backbone(x)
    head.eval()
    return head(features).softmax(1).tolist()
""",
            line=7,
            column=12,
            unsafe=True,
            message='after `head.eval()`',
            fixed="""
import torch
def describe(backbone, head, x):
    backbone.eval()
    with torch.no_grad():
        features = backbone(x)
    head.eval()
    with torch.no_grad():
        return head(features).softmax(1).tolist()
""",
        ),
        Invalid(  # a loop that ends by binding `net = Net(width).eval()` leaves `net` in eval mode
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(4, width)
    def forward(self, x):
        return self.fc(x)
x = torch.ones(1, 4)
for width in (4, 8):
    net = Net(width).eval()
    with torch.no_grad():
        print(net(x))
print(net(x).sum().item())
""",
            line=14,
            column=7,
            unsafe=True,
            message='the mode the loop above leaves it in',
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(4, width)
    def forward(self, x):
        return self.fc(x)
x = torch.ones(1, 4)
for width in (4, 8):
    net = Net(width).eval()
    with torch.no_grad():
        print(net(x))
with torch.no_grad():
    print(net(x).sum().item())
""",
        ),
        Invalid(  # `model.eval()` under `if use_model:`: a later `if use_model:` runs it in eval mode
            """
import torch
def show(model, batches, use_model):
    if use_model:
        model.eval()
    for x in batches:
        if use_model:
            x = model(x)
        print(x.mean().item())
""",
            line=7,
            column=17,
            unsafe=True,
            message='(under `if use_model:`)',
            fixed="""
import torch
@torch.no_grad()
def show(model, batches, use_model):
    if use_model:
        model.eval()
    for x in batches:
        if use_model:
            x = model(x)
        print(x.mean().item())
""",
        ),
        Invalid(  # a function of the file returns a model it put in eval mode: the caller's target is evaluated
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x)
def load(path):
    net = Net()
    net.load_state_dict(torch.load(path))
    net.eval()
    return net
class Runner:
    def __init__(self, path):
        self.net = load(path)
        self.net(torch.zeros(1, 4))
""",
            line=17,
            column=9,
            unsafe=True,
            message='returns a model it put in eval mode',
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x)
def load(path):
    net = Net()
    net.load_state_dict(torch.load(path))
    net.eval()
    return net
class Runner:
    @torch.no_grad()
    def __init__(self, path):
        self.net = load(path)
        self.net(torch.zeros(1, 4))
""",
        ),
        Invalid(  # the mode call chained into `Module.apply(fn)`, which returns the module
            """
import torch
def count_flops(model, shape, add_hooks):
    model.eval().apply(add_hooks)
    model(torch.rand(shape))
""",
            line=4,
            column=5,
            unsafe=True,
            message='after `model.eval()`',
            fixed="""
import torch
@torch.no_grad()
def count_flops(model, shape, add_hooks):
    model.eval().apply(add_hooks)
    model(torch.rand(shape))
""",
        ),
        Invalid(  # a method of the class returns a model it put in eval mode
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x)
class Runner:
    def __init__(self, path):
        self.net = self._load(path)
        self.net(torch.zeros(1, 4))
    def _load(self, path):
        net = Net()
        net.load_state_dict(torch.load(path))
        net.eval()
        return net
""",
            line=12,
            column=9,
            unsafe=True,
            message='returns a model it put in eval mode',
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x)
class Runner:
    @torch.no_grad()
    def __init__(self, path):
        self.net = self._load(path)
        self.net(torch.zeros(1, 4))
    def _load(self, path):
        net = Net()
        net.load_state_dict(torch.load(path))
        net.eval()
        return net
""",
        ),
        Invalid(  # the same model put in eval mode again in a nested block opens no second region
            """
import torch
def score(model, batches):
    model.eval()
    for x in batches:
        model.eval()
        print(model(x).sum().item())
    print(model(batches[0]).mean().item())
""",
            line=6,
            column=15,
            unsafe=True,
            message='after `model.eval()`',
            fixed="""
import torch
@torch.no_grad()
def score(model, batches):
    model.eval()
    for x in batches:
        model.eval()
        print(model(x).sum().item())
    print(model(batches[0]).mean().item())
""",
        ),
        Invalid(  # a trainer's epoch method switches mode on a phase string, and its class calls it with 'val' (CenterNet's run_epoch)
            """
import torch
class Trainer:
    def __init__(self, model, optimizer, gpus):
        self.model = model
        self.optimizer = optimizer
        self.gpus = gpus

    def run_epoch(self, phase, loader):
        model = self.model
        if phase == 'train':
            model.train()
        else:
            if len(self.gpus) > 1:
                model = self.model.module
            model.eval()
            torch.cuda.empty_cache()
        total = 0.0
        for x, y in loader:
            loss = model(x, y).mean()
            if phase == 'train':
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total += loss.item()
        return total

    def train(self, loader):
        return self.run_epoch('train', loader)

    def val(self, loader):
        return self.run_epoch('val', loader)
""",
            line=19,
            column=20,
        ),
        Invalid(  # a helper called after eval() with the phase 'val': its backward under `if phase in ("train",):` cannot run
            """
import torch
class Solver:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, train_loader, val_loader):
        self.model.train()
        self._pass(train_loader, 'train')
        self.model.eval()
        self._pass(val_loader, 'val')

    def _pass(self, loader, phase):
        for x in loader:
            loss = self.model(x).mean()
            if phase in ("train",):
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
""",
            line=11,
            column=9,
            unsafe=True,
            fixed="""
import torch
class Solver:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, train_loader, val_loader):
        self.model.train()
        self._pass(train_loader, 'train')
        self.model.eval()
        with torch.no_grad():
            self._pass(val_loader, 'val')

    def _pass(self, loader, phase):
        for x in loader:
            loss = self.model(x).mean()
            if phase in ("train",):
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
""",
        ),
        Invalid(  # a class calls its epoch method with 'check' only under no_grad, but with 'probe' from a method called with gradients on: every call choosing eval must be grad-off
            """
import torch
class Runner:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def epoch(self, stage, batches):
        net = self.net
        if stage == 'fit':
            net.train()
        else:
            net.eval()
        seen = 0.0
        for x, y in batches:
            err = net(x, y).sum()
            if stage == 'fit':
                self.opt.zero_grad()
                err.backward()
                self.opt.step()
            seen += err.item()
        return seen

    def fit(self, batches):
        return self.epoch('fit', batches)

    def check(self, batches):
        return self.epoch('check', batches)

    def run(self, fit_batches, check_batches):
        self.fit(fit_batches)
        with torch.no_grad():
            self.check(check_batches)

    def probe(self, batches):
        return self.epoch('probe', batches)

def main(runner, batches):
    runner.probe(batches)
""",
            line=15,
            column=19,
        ),
    ]

    VALID += [
        Valid(  # the later `if` tests another condition: the `.eval()` under `if use_model:` may not have run
            """
import torch
def show(model, batches, use_model, other):
    if use_model:
        model.eval()
    for x in batches:
        if other:
            x = model(x)
        print(x.mean().item())
"""
        ),
        Valid(  # the name of the test is rebound between the `.eval()` and the run
            """
import torch
def show(model, batches, use_model):
    if use_model:
        model.eval()
    use_model = len(batches) > 1
    for x in batches:
        if use_model:
            x = model(x)
        print(x.mean().item())
"""
        ),
        Valid(  # the rest of the block computes gradients: the guarded model's outputs may be part of the loss
            """
import torch
def fit(model, vgg, batches, perceptual):
    if perceptual:
        vgg.eval()
    for x in batches:
        loss = model(x).mean()
        if perceptual:
            loss = loss + vgg(model(x)).mean()
        loss.backward()
"""
        ),
        Valid(  # the helper may return the model before putting it in eval mode
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x)
def load(path, fine_tune):
    net = Net()
    net.load_state_dict(torch.load(path))
    if fine_tune:
        return net
    net.eval()
    return net
class Runner:
    def __init__(self, path):
        self.net = load(path, True)
        self.net(torch.zeros(1, 4))
"""
        ),
        Valid(  # a region that computes gradients is not searched for another model's `.eval()`
            """
import torch
def fit(model, critic, batches, optimizer):
    model.eval()
    for x in batches:
        critic.eval()
        loss = critic(model(x)).mean()
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # one class's `get_attention_maps` runs under its own `@torch.no_grad()`, another's does not: which one `model` reaches is not known
            """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x)
    def get_attention_maps(self, x):
        return [self.fc(x)]
class Predictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
    def forward(self, x):
        return self.encoder(x)
    @torch.no_grad()
    def get_attention_maps(self, x):
        return self.encoder.get_attention_maps(x)
def show(model, x):
    model.eval()
    print(model.get_attention_maps(x)[0].sum().item())
"""
        ),
        Valid(  # `model.train().apply(hooks)` puts the model in training mode
            """
import torch
def count_flops(model, shape, add_hooks):
    model.train().apply(add_hooks)
    model(torch.rand(shape))
"""
        ),
        Valid(  # the called `build` is the parameter, not the file's helper that returns an eval-mode model
            """
import torch
from torch import nn
class Net(nn.Module):
    def forward(self, x):
        return x
def build():
    net = Net()
    net.eval()
    return net
class Runner:
    def __init__(self, build):
        self.net = build()
        self.y = self.net(torch.ones(2))
"""
        ),
        Valid(  # a subclass of the file overrides `_make`, returning a model in training mode
            """
import torch
from torch import nn
class Net(nn.Module):
    def forward(self, x):
        return x
class Runner:
    def __init__(self):
        self.net = self._make()
        self.y = self.net(torch.ones(2))
    def _make(self):
        net = Net()
        net.eval()
        return net
class Tuner(Runner):
    def _make(self):
        return Net().train()
"""
        ),
        Valid(  # a method called on the name of the test between the guarded `.eval()` and the later `if`
            """
import torch
def show(model, batches, cfg):
    if cfg.on:
        model.eval()
    cfg.refresh()
    for x in batches:
        if cfg.on:
            x = model(x)
        print(x.mean().item())
"""
        ),
        Valid(  # the name the loop left in eval mode is bound to a fresh model after it
            """
import torch
from torch import nn
for size in (2, 3):
    net = nn.Linear(size, 2).eval()
    with torch.no_grad():
        print(net(torch.ones(size)))
net = nn.Linear(5, 2)
print(net(torch.ones(5)).sum().item())
"""
        ),
        Valid(  # the trainer's 'val' phase is chosen only by a method its class calls under no_grad
            """
import torch
class Trainer:
    def __init__(self, model, optimizer, gpus):
        self.model = model
        self.optimizer = optimizer
        self.gpus = gpus

    def run_epoch(self, phase, loader):
        model = self.model
        if phase == 'train':
            model.train()
        else:
            if len(self.gpus) > 1:
                model = self.model.module
            model.eval()
            torch.cuda.empty_cache()
        total = 0.0
        for x, y in loader:
            loss = model(x, y).mean()
            if phase == 'train':
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total += loss.item()
        return total

    def train(self, loader):
        return self.run_epoch('train', loader)

    def val(self, loader):
        return self.run_epoch('val', loader)

    def fit(self, train_loader, val_loader):
        self.train(train_loader)
        with torch.no_grad():
            self.val(val_loader)
"""
        ),
        Valid(  # the epoch method is handed on as a value: which phase it runs with is not in view
            """
import torch
class Trainer:
    def __init__(self, model, optimizer, gpus):
        self.model = model
        self.optimizer = optimizer
        self.gpus = gpus

    def run_epoch(self, phase, loader):
        model = self.model
        if phase == 'train':
            model.train()
        else:
            if len(self.gpus) > 1:
                model = self.model.module
            model.eval()
            torch.cuda.empty_cache()
        total = 0.0
        for x, y in loader:
            loss = model(x, y).mean()
            if phase == 'train':
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total += loss.item()
        return total

    def train(self, loader):
        return self.run_epoch('train', loader)

    def val(self, loader):
        return run_later(self.run_epoch, loader)
"""
        ),
        Valid(  # the helper called after eval() with a phase its `in` test trains for: the backward runs
            """
import torch
class Solver:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, train_loader, val_loader):
        self.model.train()
        self._pass(train_loader, 'train')
        self.model.eval()
        self._pass(val_loader, 'val')

    def _pass(self, loader, phase):
        for x in loader:
            loss = self.model(x).mean()
            if phase in ("train", "val"):
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
"""
        ),
        Valid(  # `0 == False` holds in Python: an integer phase is not compared with a bool literal
            """
import torch
class Solver:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, train_loader, val_loader):
        self.model.train()
        self._pass(train_loader, 'train')
        self.model.eval()
        self._pass(val_loader, 0)

    def _pass(self, loader, phase):
        for x in loader:
            loss = self.model(x).mean()
            if phase == False:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
"""
        ),
        Valid(  # the only call choosing 'check' runs in a method decorated no_grad: the grad mode at the call is off
            """
import torch
class Runner:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def epoch(self, stage, batches):
        net = self.net
        if stage == 'fit':
            net.train()
        else:
            net.eval()
        seen = 0.0
        for x, y in batches:
            err = net(x, y).sum()
            if stage == 'fit':
                self.opt.zero_grad()
                err.backward()
                self.opt.step()
            seen += err.item()
        return seen

    def fit(self, batches):
        return self.epoch('fit', batches)

    @torch.no_grad()
    def check(self, batches):
        return self.epoch('check', batches)
"""
        ),
        Valid(  # the method choosing 'check' turns gradients off by a statement before the call
            """
import torch
class Runner:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def epoch(self, stage, batches):
        net = self.net
        if stage == 'fit':
            net.train()
        else:
            net.eval()
        seen = 0.0
        for x, y in batches:
            err = net(x, y).sum()
            if stage == 'fit':
                self.opt.zero_grad()
                err.backward()
                self.opt.step()
            seen += err.item()
        return seen

    def fit(self, batches):
        return self.epoch('fit', batches)

    def check(self, batches):
        torch.set_grad_enabled(False)
        return self.epoch('check', batches)
"""
        ),
        Valid(  # a with whose manager follows the phase (no_grad when not fitting): silent
            """
import contextlib
import torch
class Runner:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def epoch(self, stage, batches):
        net = self.net
        if stage == 'fit':
            net.train()
        else:
            net.eval()
        seen = 0.0
        for x, y in batches:
            with torch.no_grad() if stage != 'fit' else contextlib.nullcontext():
                err = net(x, y).sum()
            if stage == 'fit':
                self.opt.zero_grad()
                err.backward()
                self.opt.step()
            seen += err.item()
        return seen

    def fit(self, batches):
        return self.epoch('fit', batches)

    def check(self, batches):
        return self.epoch('check', batches)
"""
        ),
        Valid(  # the manager is chosen by the phase into a name first: silent
            """
import contextlib
import torch
class Runner:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def epoch(self, stage, batches):
        net = self.net
        if stage == 'fit':
            net.train()
        else:
            net.eval()
        guard = torch.no_grad() if stage != 'fit' else contextlib.nullcontext()
        seen = 0.0
        for x, y in batches:
            with guard:
                err = net(x, y).sum()
            if stage == 'fit':
                self.opt.zero_grad()
                err.backward()
                self.opt.step()
            seen += err.item()
        return seen

    def fit(self, batches):
        return self.epoch('fit', batches)

    def check(self, batches):
        return self.epoch('check', batches)
"""
        ),
        Valid(  # an elif of the phase chain backpropagates for the phase the class passes
            """
import torch
class Runner:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def epoch(self, stage, batches):
        net = self.net
        if stage == 'fit':
            net.train()
        else:
            net.eval()
        seen = 0.0
        for x, y in batches:
            err = net(x, y).sum()
            if stage == 'probe':
                pass
            elif stage == 'check':
                self.opt.zero_grad()
                err.backward()
                self.opt.step()
            seen += err.item()
        return seen

    def fit(self, batches):
        return self.epoch('fit', batches)

    def check(self, batches):
        return self.epoch('check', batches)
"""
        ),
        Valid(  # the phase parameter is bound again in the body: the caller's constant decides nothing
            """
import torch
class Runner:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def epoch(self, stage, batches):
        net = self.net
        if self.adapting:
            stage = 'fit'
        if stage == 'fit':
            net.train()
        else:
            net.eval()
        seen = 0.0
        for x, y in batches:
            err = net(x, y).sum()
            if stage == 'fit':
                self.opt.zero_grad()
                err.backward()
                self.opt.step()
            seen += err.item()
        return seen

    def fit(self, batches):
        return self.epoch('fit', batches)

    def check(self, batches):
        return self.epoch('check', batches)
"""
        ),
        Valid(  # the phase parameter is bound again after the switch
            """
import torch
class Runner:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def epoch(self, stage, batches):
        net = self.net
        if stage == 'fit':
            net.train()
        else:
            net.eval()
        if self.adapting:
            stage = 'fit'
        seen = 0.0
        for x, y in batches:
            err = net(x, y).sum()
            if stage == 'fit':
                self.opt.zero_grad()
                err.backward()
                self.opt.step()
            seen += err.item()
        return seen

    def fit(self, batches):
        return self.epoch('fit', batches)

    def check(self, batches):
        return self.epoch('check', batches)
"""
        ),
        Valid(  # positional-only self: the second argument is the phase the helper tests, 'fit', so it backpropagates
            """
import torch
class Loop:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def run(self, batches):
        self.net.eval()
        self._step('check', 'fit', batches)

    def _step(self, /, tag, stage, batches):
        for x in batches:
            err = self.net(x).sum()
            if stage == 'fit':
                err.backward()
"""
        ),
        Valid(  # a subclass overrides the helper and backpropagates in every phase: self may be one
            """
import torch
class Loop:
    def __init__(self, net, opt):
        self.net = net
        self.opt = opt

    def run(self, fit_batches, check_batches):
        self.net.train()
        self._step(fit_batches, 'fit')
        self.net.eval()
        self._step(check_batches, 'check')

    def _step(self, batches, stage):
        for x in batches:
            err = self.net(x).sum()
            if stage == 'fit':
                self.opt.zero_grad()
                err.backward()
                self.opt.step()

class AdaptingLoop(Loop):
    def _step(self, batches, stage):
        for x in batches:
            err = self.net(x).var()
            self.opt.zero_grad()
            err.backward()
            self.opt.step()
"""
        ),
    ]

    INVALID += [
        Invalid(  # a method of a plain class that only puts the networks it holds in eval mode is `.eval()` for its caller (SCAN's `model.val_start()`); its method fed data runs them with gradients on
            """
import torch
from torch import nn
class Retrieval:
    def __init__(self):
        self.img_enc = nn.Linear(8, 4)
        self.txt_enc = nn.Linear(8, 4)
    def start_validation(self):
        '''Both encoders to evaluation mode.'''
        self.img_enc.eval()
        self.txt_enc.eval()
    def embed_pair(self, images, captions):
        return self.img_enc(images), self.txt_enc(captions)
def encode_all(model, loader):
    model.start_validation()
    found = []
    for images, captions in loader:
        img, cap = model.embed_pair(images, captions)
        found.append(img.detach().cpu().numpy())
    return found
""",
            line=17,
            column=20,
            unsafe=True,
            message='after `model.start_validation()` (which puts the models it holds in eval mode)',
            fixed="""
import torch
from torch import nn
class Retrieval:
    def __init__(self):
        self.img_enc = nn.Linear(8, 4)
        self.txt_enc = nn.Linear(8, 4)
    def start_validation(self):
        '''Both encoders to evaluation mode.'''
        self.img_enc.eval()
        self.txt_enc.eval()
    def embed_pair(self, images, captions):
        return self.img_enc(images), self.txt_enc(captions)
@torch.no_grad()
def encode_all(model, loader):
    model.start_validation()
    found = []
    for images, captions in loader:
        img, cap = model.embed_pair(images, captions)
        found.append(img.detach().cpu().numpy())
    return found
""",
        ),
        Invalid(  # a helper handed the evaluated model runs it through its methods (`model.encode(src)`), with the caller's gradients on (the Annotated Transformer's `greedy_decode(model, ...)`)
            """
import torch
def decode_greedy(model, src, steps):
    memory = model.encode(src)
    out = src
    for _ in range(steps):
        out = model.decode(memory, out)
    return out.argmax(-1)
def demo(model, src):
    model.eval()
    print(decode_greedy(model, src, 5))
""",
            line=10,
            column=11,
            unsafe=True,
            message='after `model.eval()`',
            fixed="""
import torch
def decode_greedy(model, src, steps):
    memory = model.encode(src)
    out = src
    for _ in range(steps):
        out = model.decode(memory, out)
    return out.argmax(-1)
@torch.no_grad()
def demo(model, src):
    model.eval()
    print(decode_greedy(model, src, 5))
""",
        ),
    ]

    VALID += [
        Valid(  # the wrapper method also puts a model in training mode: no evaluation region
            """
import torch
from torch import nn
class Retrieval:
    def __init__(self):
        self.img_enc = nn.Linear(8, 4)
        self.txt_enc = nn.Linear(8, 4)
    def start_validation(self):
        self.img_enc.eval()
        self.txt_enc.train()
    def embed_pair(self, images, captions):
        return self.img_enc(images), self.txt_enc(captions)
def encode_all(model, loader):
    model.start_validation()
    for images, captions in loader:
        img, cap = model.embed_pair(images, captions)
        print(img.sum().item())
"""
        ),
        Valid(  # a method of the holder that puts its models back in training mode ends the region
            """
import torch
from torch import nn
class Retrieval:
    def __init__(self):
        self.img_enc = nn.Linear(8, 4)
        self.txt_enc = nn.Linear(8, 4)
    def start_validation(self):
        self.img_enc.eval()
        self.txt_enc.eval()
    def start_training(self):
        self.img_enc.train()
        self.txt_enc.train()
    def embed_pair(self, images, captions):
        return self.img_enc(images), self.txt_enc(captions)
def encode_all(model, loader):
    model.start_validation()
    model.start_training()
    for images, captions in loader:
        img, cap = model.embed_pair(images, captions)
        print(img.sum().item())
"""
        ),
        Valid(  # another class of the project has a method so named that does something else: which one runs is not known
            """
import torch
from torch import nn
class Retrieval:
    def __init__(self):
        self.img_enc = nn.Linear(8, 4)
        self.txt_enc = nn.Linear(8, 4)
    def start_validation(self):
        self.img_enc.eval()
        self.txt_enc.eval()
    def embed_pair(self, images, captions):
        return self.img_enc(images), self.txt_enc(captions)
class Counter:
    def start_validation(self):
        self.seen = 0
def encode_all(model, loader):
    model.start_validation()
    for images, captions in loader:
        img, cap = model.embed_pair(images, captions)
        print(img.sum().item())
"""
        ),
        Valid(  # the holder's models run under no_grad
            """
import torch
from torch import nn
class Retrieval:
    def __init__(self):
        self.img_enc = nn.Linear(8, 4)
        self.txt_enc = nn.Linear(8, 4)
    def start_validation(self):
        self.img_enc.eval()
        self.txt_enc.eval()
    def embed_pair(self, images, captions):
        return self.img_enc(images), self.txt_enc(captions)
def encode_all(model, loader):
    model.start_validation()
    with torch.no_grad():
        for images, captions in loader:
            img, cap = model.embed_pair(images, captions)
            print(img.sum().item())
"""
        ),
        Valid(  # the helper backpropagates through what the model computes: gradients are needed
            """
import torch
def adapt_step(model, src, optimizer):
    loss = model.encode(src).pow(2).mean()
    loss.backward()
    optimizer.step()
def adapt(model, src, optimizer):
    model.eval()
    adapt_step(model, src, optimizer)
"""
        ),
        Valid(  # the helper is called under no_grad
            """
import torch
def decode_greedy(model, src, steps):
    memory = model.encode(src)
    out = src
    for _ in range(steps):
        out = model.decode(memory, out)
    return out.argmax(-1)
def demo(model, src):
    model.eval()
    with torch.no_grad():
        print(decode_greedy(model, src, 5))
"""
        ),
        Valid(  # the helper runs the model under its own no_grad
            """
import torch
def decode_greedy(model, src, steps):
    with torch.no_grad():
        memory = model.encode(src)
        out = src
        for _ in range(steps):
            out = model.decode(memory, out)
    return out.argmax(-1)
def demo(model, src):
    model.eval()
    print(decode_greedy(model, src, 5))
"""
        ),
        Valid(  # a method that puts only the normalisation layers in eval mode (`freeze_bn`), then a loop that trains: the region computes gradients
            """
import torch
from torch import nn
class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1d(8)
    def freeze_bn(self):
        self.bn.eval()
    def forward(self, x):
        return self.bn(self.body(x))
def fit(model, loader, optimizer):
    model.freeze_bn()
    for x, y in loader:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(  # a wrapper that evals one of the two networks its object holds (the critic), then a loop whose backward happens in a method of that object: training, no evaluation
            """
import torch
from torch import nn
class Adversarial(object):
    def __init__(self):
        self.maker = nn.Linear(4, 4)
        self.critic = nn.Linear(4, 1)
        self.maker_opt = torch.optim.SGD(self.maker.parameters(), lr=0.1)
    def hold_critic(self):
        self.critic.eval()
    def maker_update(self, loss):
        self.maker_opt.zero_grad()
        loss.backward()
        self.maker_opt.step()
def train_maker(pair, noise_batches):
    pair.hold_critic()
    for noise in noise_batches:
        sample = pair.maker(noise)
        pair.maker_update(-pair.critic(sample).mean())
"""
        ),
        Valid(  # a method that evals one part of an nn.Module (its trunk), then a loop handing the outputs to another object's method that steps: the rest of the model trains
            """
import torch
from torch import nn
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(8, 8)
        self.top = nn.Linear(8, 3)
    def lock_trunk(self):
        self.trunk.eval()
    def forward(self, x):
        return self.top(self.trunk(x))
class Stepper:
    def __init__(self, optimizer):
        self.optimizer = optimizer
    def apply(self, prediction, target):
        loss = (prediction - target).abs().mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
def finetune(model, batches, stepper):
    model.lock_trunk()
    for x, y in batches:
        prediction = model(x)
        stepper.apply(prediction, y)
"""
        ),
        Valid(  # a wrapper that evals every network its object holds, in a function that also calls a method that may backpropagate (`head.fit_step`): no evaluation region
            """
import torch
from torch import nn
class Featurizer(object):
    def __init__(self):
        self.encoder = nn.Linear(8, 8)
        self.opt = torch.optim.SGD(self.encoder.parameters(), lr=0.1)
    def settle(self):
        self.encoder.eval()
    def embed(self, obs):
        return self.encoder(obs)
class Head(object):
    def __init__(self):
        self.linear = nn.Linear(8, 2)
        self.opt = torch.optim.SGD(self.linear.parameters(), lr=0.1)
    def fit_step(self, feats, target):
        loss = (self.linear(feats) - target).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
def probe(model, head, batches):
    model.settle()
    for obs, target in batches:
        feats = model.embed(obs)
        head.fit_step(feats, target)
"""
        ),
        Valid(  # a method that trains through another method of its class (`self._switch(True)` whose body calls `part.train(on)`) ends the region
            """
import torch
from torch import nn
class Matcher(object):
    def __init__(self):
        self.left = nn.Linear(8, 4)
        self.right = nn.Linear(8, 4)
        self.opt = torch.optim.SGD(list(self.left.parameters()) + list(self.right.parameters()), lr=0.1)
    def to_eval(self):
        self.left.eval()
        self.right.eval()
    def to_train(self):
        self._switch(True)
    def _switch(self, on):
        for part in (self.left, self.right):
            part.train(on)
    def forward_pair(self, a, b):
        return self.left(a), self.right(b)
def epoch(model, train_loader):
    model.to_eval()
    model.to_train()
    sizes = []
    for a, b in train_loader:
        x, y = model.forward_pair(a, b)
        sizes.append(x.shape[0])
    return sizes
"""
        ),
        Valid(  # a wrapper called on a receiver with no model evidence (`buffer.reset()`): not `model.eval()`
            """
import torch
from torch import nn
class Actor(object):
    def __init__(self):
        self.net = nn.Linear(4, 2)
    def reset(self):
        self.net.eval()
    def act(self, obs):
        return self.net(obs)
def collect(buffer, actor, batch):
    buffer.reset()
    stored = buffer.encode(batch)
    return actor.act(stored)
"""
        ),
        Valid(  # an `async def` that evals only builds a coroutine when called: never a mode setter
            """
import torch
from torch import nn
class Service(object):
    def __init__(self):
        self.enc = nn.Linear(2, 2)
    async def quiet(self):
        self.enc.eval()
    def embed(self, x):
        return self.enc(x)
def serve(model, items):
    model.quiet()
    for x in items:
        print(model.embed(x).sum().item())
"""
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._reported: set[tuple[int, Optional[int]]] = set()

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        if ctx.grad_mode is not GradMode.ENABLED:
            return
        if type(node.func) is cst.Attribute and node.func.attr.value == "test" and self._engine_test(node):
            return
        scope = ctx.function_node or ctx.module
        # (one region per model put in eval mode around the call: the first whose model it runs and
        # that has no finding yet)
        found = next(
            ((r, u) for r in regions(ctx, scope).get(id(node), ()) for u in [self._unit(node, r)] if u not in self._reported and self._runs_in(node, r)),
            None,
        )
        if found is None:
            return
        region, unit = found
        if is_frozen_model(node.func, ctx, node) or (region.receiver and is_frozen_model(cst.parse_expression(region.receiver), ctx, node)):
            # every parameter frozen (`model.freeze()`): the run builds no graph to waste memory on, nor
            # does what the region computes from its outputs (`self.softmax(logits)`): the region is done
            self._reported.add(unit)
            return
        if ctx.project.trained_by(ctx.function_chain) is not None and not _evaluates_for_any_caller(region, ctx):
            return  # training code (here or in another file) runs it with gradients on: they are needed
        if region.kind != "mode-branch" and _returned_closure(ctx):  # (a mode switch's callers were checked)
            return  # `def make_val_step(): def step(x): ...; return step`: its callers decide grad mode
        self._reported.add(unit)
        call_text = shorten(ctx.module.code_for_node(node))
        message = (
            f"`{call_text}` runs {region.description} with gradient tracking on: autograd saves "
            "activations for a backward that never comes; run evaluation under `torch.no_grad()`"
        )
        self.report(node, message, self._fix(node, region, scope), grad_sensitive=True, grad_calls=region.callers)

    def _runs_in(self, node: cst.Call, region: Region) -> bool:
        """Does the call run what `region` evaluates?"""
        ctx = self.ctx
        if region.kind in ("eval-call", "module-eval", "mode-branch"):
            return runs_evaluated_model(node, region, ctx)
        if is_model_call(node, ctx) or runs_method_of(node, region.evaluated, ctx):
            return True
        if region.kind == "loader" and runs_model_method(node, ctx):
            return True  # `D.feature_extraction(x)` over `test_loader`
        # `predict()` running its model through `self._process_one_batch(x)`, a method whose body runs
        # `self.model`; in a loop over evaluation data too (`self.correct(x)` over `test_loader`)
        return region.kind in ("function-name", "loader") and self_helper_runs_model(node, ctx)

    def _engine_test(self, call: cst.Call) -> bool:
        """torchnet's `engine.test(network, iterator)`: an evaluation loop that runs the network with
        gradients on (frameworks.torchnet_engine_run); reported where the network is the one the
        file trains (its parameters require grad) and sets no grad mode of its own."""
        ctx = self.ctx
        run = torchnet_engine_run(call, ctx)
        if run is None or run[0] != "test" or not torchnet_test_builds_graph(call, ctx):
            return False
        call_text = shorten(ctx.module.code_for_node(call))
        message = (
            f"`{call_text}` runs torchnet's evaluation loop (the network over every batch) with gradient tracking "
            "on: torchnet's `Engine.test` does not turn it off, so autograd saves activations for a backward that "
            "never comes; call it under `torch.no_grad()`"
        )
        self.report(call, message, grad_sensitive=True)
        return True

    def _unit(self, call: cst.Call, region: Region) -> tuple[int, Optional[int]]:
        """What one finding stands for: the region, and in a Jupyter notebook's module code the cell
        too. A region opened by `G.eval()` runs on through the later cells, each of which a user runs
        and wraps in `torch.no_grad()` on its own (GAN-Tutorial's sampling cell, then its
        interpolation cell)."""
        if self.ctx.function_node is not None:
            return id(region.node), None
        cells = self.ctx.memo(("jupyter-cells", id(self.ctx.module)), lambda: jupyter_cells(self.ctx.module))
        return id(region.node), cells.get(id(call))  # type: ignore[union-attr]

    # ------------------------------------------------------------------ the fix

    def _fix(self, call: cst.Call, region: Region, scope) -> Optional[NodeFix]:
        torch_name = self._torch_name()
        if torch_name is None:
            return None
        method = "inference_mode" if self.option("prefer-inference-mode") else "no_grad"
        guard = cst.Call(func=cst.Attribute(value=cst.Name(torch_name), attr=cst.Name(method)))
        label = f"{torch_name}.{method}()"
        if isinstance(scope, cst.FunctionDef) and scope.asynchronous is None and self._whole_body(region, scope):
            decorated = scope.with_changes(decorators=[*scope.decorators, cst.Decorator(decorator=guard)])
            return self.replace(scope, decorated, f"Decorate `{scope.name.value}` with `@{label}`", safe=False)
        statement = self._statement_to_wrap(call, region)
        if statement is None or any(isinstance(n, (cst.Yield, cst.Await)) for n in code_descendants(statement)):
            return None
        wrapped = cst.With(
            items=[cst.WithItem(item=guard)],
            body=cst.IndentedBlock(body=[statement.with_changes(leading_lines=[])]),
            leading_lines=statement.leading_lines,
        )
        return self.replace(statement, wrapped, f"Wrap the loop in `with {label}:`", safe=False)

    def _torch_name(self) -> Optional[str]:
        names = [n for n, b in self.ctx.frames[0].names.items() if b.qualified == "torch"]
        names.sort(key=lambda n: n != "torch")
        for name in names:
            if self.ctx.resolve(cst.Name(name)) == "torch":
                return name
        return None

    def _whole_body(self, region: Region, scope: cst.FunctionDef) -> bool:
        if region.kind in ("function-name", "module-eval"):
            return True  # (a module-level `.eval()` covers the whole function)
        if region.kind != "eval-call" or not isinstance(scope.body, cst.IndentedBlock):
            return False
        body = list(scope.body.body)
        if region.node not in body:
            return False
        # (a loop that leaves the model in eval mode trains in its body: it is not evaluation)
        before = body[: body.index(region.node) + isinstance(region.node, (cst.For, cst.While))]
        return not any(isinstance(n, cst.Call) and _looks_like_run(n) for s in before for n in code_descendants(s))

    @staticmethod
    def _statement_to_wrap(call: cst.Call, region: Region):
        if region.kind == "loader":
            return region.loop
        if region.kind == "eval-call":
            for statement in region.block:
                if statement is not region.node and any(n is call for n in code_descendants(statement)):
                    return statement
        return None


def _evaluates_for_any_caller(region: Region, ctx) -> bool:
    """Is the function evaluation whoever calls it: it puts its model in eval mode itself (the region
    of its own `.eval()`, or the eval branch of its mode switch) and hands back nothing that can carry history (returned.py), so nothing it
    computes can reach its caller's backward (Informer2020's `vali`, called after each epoch by
    `train`).  A validation loss it returns (a meta-learning inner loop) keeps the caller's need."""
    function = ctx.function_node
    # (an `evaluate()` whose own body calls `model.eval()` has a "function-name" region that knows
    # the receivers it puts in eval mode: cleanrl's dqn_eval.evaluate, run every 100k training steps)
    own_eval = region.kind in ("eval-call", "mode-branch") or (region.kind == "function-name" and bool(region.evaluated))
    if not own_eval or function is None:
        return False
    if hands_back_no_history(function, ctx):
        return True
    # a model the function builds itself (`model = Model(envs).to(device)`, weights loaded from a
    # file), none of whose outputs it returns or stores: no caller's backward can reach its graph
    # (cleanrl's dqn_eval.evaluate, run by a training loop every 100k steps)
    receivers = {region.receiver} if region.kind != "function-name" else set(region.evaluated)
    built = ctx.model.constructed(function)
    if not receivers or not all(r in built for r in receivers):
        return False
    return returns_nothing_from(function, frozenset(receivers), ctx)


def _returned_closure(ctx) -> bool:
    """Is the code in a function nested in another function that returns it (a step function built by
    a factory)?  Where it is called, and under which grad mode, the file does not say at that point."""
    functions = [frame.node for frame in ctx.frames if frame.kind == "function"]
    return bool(functions) and factory_of(functions[-1], ctx) is not None


def _looks_like_run(call: cst.Call) -> bool:
    """Could this call run a model (anything but a plain attribute-free builtin or `.eval()`)?"""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("eval", "to", "cuda", "cpu", "train"):
        return False
    return not (isinstance(func, cst.Name) and func.value in ("print", "len", "range", "isinstance", "getattr"))


