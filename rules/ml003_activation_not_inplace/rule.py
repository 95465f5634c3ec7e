"""ML003 activation-not-inplace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Union

import libcst as cst

from memlint.analysis import GradMode
from memlint.analysis.activations import cannot_run_activation, inplace_argument, inplace_fix_safety, tensor_method_activation, with_inplace
from memlint.analysis.added_layers import AddedAfter, added_in_function, added_in_module
from memlint.analysis.attribute_owners import attribute_uses, class_nodes, path_used_other_than_called, used_other_than_called
from memlint.analysis.class_layers import final_name
from memlint.analysis.fresh_values import FreshValues, calls_run_by
from memlint.analysis.inplace_savings import Saving, inplace_saving, keeps_its_input
from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.list_helpers import helper_list_into_sequential_only
from memlint.analysis.list_tails import display_predecessors
from memlint.analysis.module_changes import elements_may_change_anywhere, module_changes
from memlint.analysis.sequence_layers import activation_class, activation_named, layer_before, layer_kind
from memlint.analysis.returned_sequentials import attribute_holding_returned
from memlint.analysis.script_globals import module_names_private
from memlint.analysis.sequential_homes import runs_elements_whole, sequential_home
from memlint.analysis.sequential_subclasses import constructor_layers
from memlint.analysis.sequences import (
    dict_given_to_sequential_only,
    groups_unpacked_into_sequential_only,
    sequential_bound_to,
    sequential_elements,
    sequential_unpacking,
    unpacked_into_sequential_only,
)
from memlint.analysis.statement_blocks import function_blocks, module_code_blocks
from memlint.analysis.tensor_values import proven_tensor
from memlint.analysis.tables import FRESH_OUTPUT_LAYERS, INPLACE_FUNCTIONS, INPLACE_MODULES, INPLACE_TWINS, OUTPUT_NOT_SAVED
from memlint.analysis.walk import code_descendants, descendants, self_attr
from memlint.diagnostics import Severity
from memlint.rule import MARIMO_STAND_IN, Harness, Invalid, Rule, Valid
from memlint.rules.ml003_activation_not_inplace.meta import META

# What each saving (analysis/inplace_savings.py, measured) reads as in a message.  Every saving but
# IN_TRAINING and FORWARD_ONLY is reported only under exact selection; a dropout where gradients may
# be on (RAISES_ON_CUDA) never.
_MESSAGES = {
    Saving.IN_TRAINING: (
        "keeps one activation of this size fewer for backward (out of place, {kind} keeps its input as well as "
        "its output): a training step's peak falls by one activation per such layer where the peak is reached "
        "at the end of forward"
    ),
    Saving.IF_KEPT_AFTER: (
        "keeps one activation of this size fewer for backward only where the layer that reads it keeps its input "
        "(a Conv, Linear or norm does; it is not known here); it saves up to one activation in a forward-only pass"
    ),
    Saving.FORWARD_ONLY: "saves up to one activation of this size in this forward-only pass (no_grad / inference_mode)",
    Saving.NOTHING_IN_TRAINING: (
        "leaves a training step's peak unchanged (measured); it saves up to one activation of this size only in a "
        "forward-only pass (no_grad / inference_mode)"
    ),
}


# The examples whose activation saves nothing a training step sees: reported when ML003 is selected by
# its exact code (`extend-select = ["ML003"]`), as in Rule.selected_by_code.
_EXACT = {"extend-select": ["ML003"]}


# A stand-in for a project module that imports torch under its conventional names and defines an
# initialiser, for the examples that star-import it (`from utils import *`).
_STAR_UTILS = """
import sys, types
utils = types.ModuleType("utils")
utils.torch, utils.nn, utils.F = torch, torch.nn, torch.nn.functional
utils.layer_init = lambda layer: layer
sys.modules["utils"] = utils
"""


def _runs(model: str, shape: str, setup: str = "") -> Harness:
    """Run `model` forward and backward on an input that requires grad: what in-place could change
    is the output, the caller's input, and the gradients."""
    then = f"""
model = {model}
x = torch.randn({shape}, requires_grad=True)
out = model(x)
out.sum().backward()
result = (out, x, x.grad, [p.grad for p in model.parameters()])
"""
    return Harness(setup="import torch\n" + setup, then=then)


# Stand-ins for what two examples take as given: an imported initialiser that returns its module,
# and `.cuda()` on a machine without a GPU.
_A2C_INIT = """
import sys, types
def _init(module, weight_init, bias_init):
    weight_init(module.weight.data)
    bias_init(module.bias.data)
    return module
sys.modules["a2c_ppo_acktr"] = types.ModuleType("a2c_ppo_acktr")
sys.modules["a2c_ppo_acktr.utils"] = types.SimpleNamespace(init=_init)
"""
# A stand-in for torchmeta's modules (subclasses of the torch classes that take `params=` in forward).
_TORCHMETA = """
import sys, types
import torch.nn as _nn
class MetaSequential(_nn.Sequential):
    def forward(self, input, params=None):
        return super().forward(input)
class MetaLinear(_nn.Linear):
    def forward(self, input, params=None):
        return super().forward(input)
sys.modules["torchmeta"] = types.ModuleType("torchmeta")
sys.modules["torchmeta.modules"] = types.SimpleNamespace(MetaSequential=MetaSequential, MetaLinear=MetaLinear)
"""
_NO_GPU = "torch.nn.Module.cuda = lambda self, device=None: self\n"


@dataclass
class _Pending:
    activation: cst.Call
    kind: str
    after: str  # the layer before it, as the message names it: "`nn.Conv2d`"
    class_name: Optional[str]
    attribute: Optional[str]  # `self.<attribute> = nn.Sequential(...)`, checked for other uses at the end
    then: Optional[str] = None  # the layer after it, where the sequence has one
    # every class the activation may be, where a local name chooses between several (`ReLU = nn.ReLU
    # if onnx_compatible else nn.ReLU6`: analysis/chosen_classes.py); () where it is `kind` alone
    kinds: tuple[str, ...] = ()


def _after_each(candidates_per_layer: Iterable[list[_Pending]]) -> Optional[_Pending]:
    """An activation that may follow one of several layers (the tails of a list, the layers an
    `add_module` may come after): the candidate where it is one after each of them (each list
    non-empty), its message naming every layer it may follow; None otherwise.  Lazy: stops at the
    first layer it is not one after."""
    found: list[_Pending] = []
    for candidates in candidates_per_layer:
        if not candidates:
            return None
        found.extend(candidates)
    if not found:
        return None
    pending = found[0]
    pending.after = " or ".join(dict.fromkeys(c.after for c in found))
    return pending


class ActivationNotInplace(Rule):
    """
    ## What it does
    Finds an activation or dropout built out of place where running it in place is provably safe.
    Out of place means `nn.ReLU()`, `nn.LeakyReLU(0.1)`, `nn.SiLU()`, `nn.Dropout(p)`, ... with no
    `inplace=` or `inplace=False`, and `F.relu(x)` and friends in `forward`; the places where in-place
    is provably safe:

    - in an `nn.Sequential(...)` (also one stored on another module's attribute, MoCo's
      `self.encoder_q.fc = nn.Sequential(nn.Linear(d, d), nn.ReLU(), self.encoder_q.fc)`, where
      every `.fc` of the file is only called, assigned, read or re-wrapped and no container of that
      name has elements replaced or run apart; or the `OrderedDict`, or a list display that is unpacked into
      `nn.Sequential(*layers)` in the same function, or a list filled by consecutive
      `layers.append(...)` statements and unpacked so, or an `OrderedDict()` filled by consecutive
      `layers["relu{}".format(i)] = ...` statements, each key's literal part set by one statement
      only, and given to `nn.Sequential(layers)`, or a `+` of displays unpacked into it
      (`nn.Sequential(*((bn,) if use_bn else ()) + (nn.Linear(a, b), nn.ReLU())))`: a part that is
      not a display may be empty, so nothing counts as following it), or a list extended in loops
      and branches (`layers += [nn.LeakyReLU(0.2), conv]`, `layers.extend([...])` or a tuple
      display, in a loop: the display's first layer
      follows whatever the list may end with there, the last layer of an earlier display on every
      path, a turn of the loop before included; not where the list may still be empty), or a list of layer groups
      each unpacked into its own `nn.Sequential(*groups[n])` and otherwise only extended or
      measured (`sequence += [[conv, nn.LeakyReLU(0.2)]]`), or consecutive `net.add_module(name, ...)`
      statements on a `net = nn.Sequential()` of the same block, also across `if` branches: after
      `if bn: net.add_module("bn", ...)` the layer before is the norm or the one added before the
      `if`; also the constructor's own `self.add_module(...)` statements in a class that is an
      `nn.Sequential` and nothing more: its one base, no method but `__init__`, no subclass in the
      file, each key added once, no container of the file with elements replaced or a part run
      apart, its name bound by its `class` statement alone (no import, assignment or star import
      may rebind it, no attribute of the class set), and each instance held as `self.block =
      Block(...)` or added under a literal key, only ever called whole (never iterated, extended,
      handed on or reached into by a child's key): deeplab-pytorch's `_ConvBnReLU`; also a library's
      subclass of `nn.Sequential` that runs its modules in order, torchmeta's `MetaSequential`, whose
      `MetaLinear`, `MetaConv2d`, `MetaBatchNorm2d` count as the torch layers they subclass) right after a layer that does not
      need its own output for backward (also `self.bn1`, bound once by the constructor to such a
      layer, no hook on it, and named in the file only there and at that one element: DGCNN's
      `nn.Sequential(conv, self.bn1, nn.LeakyReLU(0.2))`): Conv*, Linear, BatchNorm*, GroupNorm, LayerNorm,
      InstanceNorm*, Embedding, pooling; also when that layer is wrapped in a helper that returns it
      (`layer_init(nn.Conv2d(...))` defined in the file with `return layer`, a lambda over such a
      helper or over an imported one named as an initialiser, `init_(nn.Linear(...))`) or in a weight
      reparameterisation (`weight_norm`, `spectral_norm`, `parametrizations.orthogonal`) or in a
      module class, of the file or imported from another file of the project, that stores the
      module it is given and returns its call (`SpectralNorm(nn.Conv2d(...))`), or built
      by a factory of the file whose every `return` builds one such class (`conv1x1(...)`), also
      by returning a local name bound once to one and otherwise only initialised (`m =
      nn.Linear(...)`, `nn.init.xavier_uniform_(m.weight)`, `return m`), or a
      module class of the file whose `forward` returns that layer's output (`EqualConv2d`, which
      builds `nn.Conv2d(...)` in its constructor and returns `self.conv(input)`) or a fresh tensor
      (`return image + self.weight * noise`, `out = F.conv2d(...)` then `return out`, `return
      F.elu(h)`: analysis/fresh_forwards.py; also for `F.relu(self.noise(x))` and `self.relu(...)`
      below; also a subclass of such a torch layer, hooking nothing, whose `forward` returns
      `F.conv2d(...)` or `super().forward(x)` from each branch: `Conv2d_fw(nn.Conv2d)`), or a norm
      the file names otherwise: a constructor parameter named as one (`norm_layer(c)`,
      `BatchNorm(planes)`) whose every value the file shows (default, arguments) is a norm class, or
      a project class named as a torch norm (`SynchronizedBatchNorm2d`, also through an alias), or
      a module global every binding of which, also by a function through `global`, is one such
      class (`global BN; BN = nn.BatchNorm2d` in a constructor, `BN(planes)` in a block); the
      activation may be a local name chosen between classes (`ReLU = nn.ReLU if c else nn.ReLU6`)
      where every choice runs in place the same way;
    - in any function (`forward`, a helper it calls, a message function handed to a graph
      library, a metric; the layers `self.<layer>` only in the methods of an `nn.Module` class; in
      an expression, assignment, augmented assignment or `return`: `log_pi -= torch.log(F.relu(1 -
      pi.pow(2)))`), a functional activation whose input is the fresh output of such a layer
      (`F.relu(self.bn(x))`, or `x = self.conv(x)` on the previous line, also with an in-place sum
      between: `out += self.shortcut(x)`, where an `if` whose branch returns first (`if fake_relu:
      return FakeReLU.apply(out)`) is off the activation's path, or bound in every branch of an `if`/`else` just before,
      or bound further back when the activation's statement ends the name's life (`return
      F.elu(h)`, `h = F.relu(h)`, also inside `if`, `elif` and `else` branches) and the statements between read it
      only for its metadata or a `torch.isnan` test (a branch of an earlier `if C:` counts as run
      where the activation runs under the same test `C`, a parameter the function never rebinds or a
      `self.<flag>` bound only by constructors: open-reid's `if self.has_embedding: x =
      self.feat_bn(x)`, then `elif self.has_embedding: x = F.relu(x)`), or rebound on the previous line where the
      activation's line, in the function's own body, is the name's last mention: `d1 =
      torch.cat([d1, skip], 1)`, then `d2 = self.up(F.relu(d1))`, or bound by each turn of the loop
      just before, on the body's last line that mentions it, and before the loop to such a value or a
      number: `skip = 0`, `for ...: skip = s + skip`, then `F.relu(skip)`; also a `.view` / `.reshape` /
      `.flatten` of such a name: `x = self.pool(x)`, then `x = F.relu(x.view(n, -1))` (not a name
      bound outside a comprehension or lambda that runs the activation: `[head(F.relu(h)) for head
      in self.heads]` runs it once per element, each reading `h`); also an
      element, by a literal index, of what a module class of the file returns as a tuple whose
      element there is fresh in every `return`: Glow's `F.relu(self.actnorm(x)[0])` with `return
      (x - bias) / scale, logdet`; also the call of such an `nn.Sequential` class of the file whose
      constructor adds such a layer last for the construction's literal flags: `self.increase =
      _ConvBnReLU(..., False)` skips `if relu: self.add_module("relu", ...)`, so `h =
      self.increase(h)` is the norm's output; also `h = self.layer3(h)` on the line after one
      binding `h` to a fresh value, where a method of the class builds the stage as
      `nn.Sequential(*layers)` from `layers = []` and `layers.append(Block(...))` alone, each block
      such a layer or a class whose `forward` returns a fresh value (Shake-Shake's `return h + h0`),
      the stage only ever called, no hook in the file: it returns its last block's output, or with no
      block the fresh value it was given)
      or of `+`, `-`, `*` (`F.relu(a + b)`), or of an op that keeps nothing of its result for
      backward (`torch.cat`, `F.gelu`, `torch.mm`, `/`, pooling, the tensor methods `h.div(s)`,
      `x.sum(1)`, `a.mm(b)` of a name or a computed value; `nn.GELU` in a Sequential, under exact
      selection), that is not used again; `torch.relu(x)` is such an activation too (fixed to
      `torch.relu_(x)`), and so is the Tensor method `h.relu()` on such a value (`self.w_1(x).relu()`,
      fixed to `.relu_()`) where the receiver is proven a tensor (a torch layer's or function's
      output, arithmetic on one, a name bound only to such values: another object's `relu()` has no
      `relu_()`); a layer taken by index from a
      `ModuleList` whose every element is such a layer (`self.layers[i]`, called; also a list plus a
      comprehension whose element is a conditional expression of such layers: nerf's
      `[nn.Linear(d, w)] + [nn.Linear(w, w) if i not in skips else nn.Linear(w + d, w) for i in ...]`), the loop
      variable of `for l in self.layers:` (or of `zip(self.a, self.b)`) that nothing else binds in
      the function, and one the constructor
      builds in a branch (`if pos_enc: self.embed = nn.Linear(...)`, or in each: `if self.maml:
      self.C1 = Conv2d_fw(...)` / `else: self.C1 = nn.Conv2d(...)`, also beside a `self.IN = None`
      placeholder) count as such layers, and so does an entry called by key of a plain dict of layers
      (`self.convs = OrderedDict()`, each entry set by the constructor to such a layer, the dict
      otherwise only called by key or read with `.values()` / `.keys()`, no hook in the file:
      monodepth2's decoders); so does a
      layer wrapped by a name chosen between two reparameterisations (`norm_f = weight_norm if c
      else spectral_norm`) that nothing else in the file binds;
    - `self.relu = nn.ReLU()` (any in-place-capable module held by the class, or built by a base
      class of the file for its subclasses' methods, or built in a branch of the constructor whose
      branches are the attribute's only bindings: `if add_relu: self.relu = nn.ReLU()` / `else:
      self.relu = lambda x: x`, every such module of the branches; the blocks of a `try` count as
      branches; also chosen by a conditional expression whose every branch is such a module, all
      of one saving, or `nn.Identity`: YOLOP's `self.act = nn.Hardswish() if act else
      nn.Identity()`; not one module bound to two attributes, `self.a = self.b = nn.ReLU()`) when every use of
      `.relu` in the file that may be this class's (not another class's own `self.relu`, nor torch's
      `F.relu`) is a call
      of it in a method of the class on such a fresh value, or a call passing it two arguments or
      more, which raises on an activation and so never runs it (`self.criterion(outputs, labels)`
      where another branch binds a loss: STTN's hinge `AdversarialLoss`);
    - a layer bound to a name by the function's own assignment and listed before the activation
      (`conv2d = nn.Conv2d(...)`, then `layers += [conv2d, nn.ReLU()]`; also bound in each branch of
      an `if`, every binding such a layer); an activation bound to a name that the function
      mentions only there and in the sequence (ResNet's stem: `relu = nn.ReLU()`, then `trunk =
      [conv1, bn1, relu, pool1]`);
    - an activation module built for one call on such a fresh value (a GAN's hinge loss:
      `torch.nn.ReLU()(1.0 - d_out_real).mean()`);
    - the module's own code read as a function of its own (a script's training loop at module
      level: the same hinge loss there), its names the file's globals, so that a mention anywhere
      in the file (a function reading the name) counts as a use;
    - also: `net = nn.Sequential()` made before a loop and added to inside it (each turn's conv,
      norm and ReLU); a Sequential no name holds, kept in a `ModuleList` / `ModuleDict` /
      `ParameterDict` of the class whose elements the file only ever runs whole
      (`self.mlps.append(nn.Sequential(*layers))`, then `self.mlps[i]` called, or `head =
      self.heads[k]; head(x)`), even where the file replaces another container's elements; a
      list rebound to its own Sequential (`mlp = nn.Sequential(*mlp)`, then handed on), which is
      the list only up to that line; `self.weight.mm(x)` where `self.weight =
      nn.Parameter(...)` is bound once (torch's method, a new tensor); a layer attribute rebound
      elsewhere in the file only to new layers that keep nothing of their output (`model.conv1 =
      nn.Conv2d(...)`, `fuse_conv_bn_eval(...)`) or by a `setattr` whose name starts with another
      literal (`"bn" + suffix`); a call of a project helper whose every `return` is such a torch
      function (`utils.batch_norm(...)` returning `F.batch_norm(...)`, in any file of the project).

    Never reported: the first element of a Sequential (it would overwrite the caller's tensor, a
    residual input for example); an activation after an op that saves its output (Sigmoid, Tanh,
    Softmax, another activation) or after a wrapper that may return another module; an input used
    again later (skip connections, returned feature maps); a Sequential stored on `self` and then
    used in the class in a way that can expose its intermediate outputs (iterated, a layer of it
    called or hooked, passed to anything but a parent `nn.Sequential` / `nn.ModuleList`, its
    activation or a container in it passed on); handing one of its other `torch.nn` layers by
    literal index to a call (`L.log_param("fc1", self.trunk[0], step)`), calling it,
    its bookkeeping methods (`.parameters()`, `.cuda()`, `.zero_grad()`), a test against `None`
    (`if self.up_conv != None:`), reading an attribute of
    one of its layers (`self.body[0].weight.device`), re-wrapping it into a parent Sequential and
    handing it to a function of the file that only calls it (`pack_wrapper(self.att_embed, x, masks)`)
    do not, nor does running parts of it taken at literal positions (robustness's VGG calls
    `self.classifier[:4]` and `self.classifier[-2:]`, no other part read), which leaves an
    activation inside a part reported where no part starts at it; `inplace=False` with a comment next to it; an `inplace` argument that is not a literal.

    Which of those sites it reports depends on what `inplace=True` saves there (measured,
    docs/inplace-activations.md). In the default set: `LeakyReLU`, `ELU`, `CELU`, `SELU` in a
    sequence where the next layer keeps its input for backward (Conv, Linear, a norm, pooling):
    out of place they keep their input beside the output that layer keeps, so in place a training
    step keeps one activation fewer per layer (their functional forms, whose reader is not
    followed, and the other places need the exact code); any other
    activation (`ReLU`, `ReLU6`, `Hardtanh`, `SiLU`, `Hardswish`, `Mish`, `Dropout`, ...) only in
    code that runs with gradients off (`F.silu(self.fc(x))` in a `@torch.no_grad()` forward or a
    `with torch.no_grad()` block): there it saves up to one activation, while in a training step it
    leaves the peak unchanged. Selecting ML003 by its exact code (`--select ML003`,
    `extend-select = ["ML003"]`) reports every site, those with the message that a training step's
    peak does not change, except a dropout where gradients may be on: in place it keeps a full-size
    mask for backward where CUDA's fused kernel keeps a one-byte one, so on a GPU it raises the peak
    (8 Linear+Dropout blocks on an H100: 64 -> 85 MiB). `ML`, `ML0` or `ALL` keep the default set, as
    for the rules that are off by default. Each message says what the saving is.

    Accepted limits (silence when unsure): layers passed in as arguments or built by factories
    that may return more than one class (or anything but a `torch.nn` layer),
    `self.relu = nn.ReLU()` modules called outside the class's methods or on a value that is not fresh
    (they are often reused), and Sequential subclasses with methods of their own, or whose
    constructor adds layers other than by literal `self.add_module` statements, are not analysed
    (instances made and indexed in another file are not seen). A hook on a module reached
    by other attribute names (`model.head.register_forward_hook`) does not silence the file; one on
    a module it cannot name (`m` of `model.modules()`) does, unless it is a forward pre-hook that
    reads none of its inputs and returns nothing (StyleGAN's equalised learning rate: it sees no
    tensor of the forward pass). A legacy `register_backward_hook`
    silences nothing: torch puts it on the layer's own autograd node, it is handed gradients, never
    the layer's output, and in-place gives the same gradients with it (a full backward hook wraps
    the output, and in place its backward raises: that one silences). A module global that functions
    bind through `global` is read from the bindings the file shows: one rebound where the file does not
    show it (`globals()["BN"] = ...`, `setattr` on the module, `exec`, another file assigning
    `resnet.BN`) is not seen; a name some scope of the file also binds for itself (a parameter, a
    local, a comprehension target) is not resolved at all.

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
    need it for backward. Unsafe for `ELU`, `CELU` and `SELU` (in place, their backward takes the
    gradient from the output: equal to the out-of-place gradient up to the last bits) and for a
    `LeakyReLU` / `RReLU` slope that is not a literal; a negative literal slope is not reported (in
    place, its backward raises).

    ## Measured effect
    `.venv/bin/python bench/inplace_savings.py` (PyTorch 2.13.0+cpu, exact tensor-storage tracker;
    table in docs/inplace-activations.md), `Linear(1024, 4096) -> act -> Linear(4096, 1024)` on a
    batch of 256 (the activation is 4 MiB): no activation changes the training step's peak
    (70.0 MiB); under `no_grad` or `inference_mode` every one saves 3 MiB (41.0 -> 38.0 MiB), SiLU,
    Hardswish and Mish included; in a forward with gradients on, SiLU, Hardswish, Mish, ReLU6,
    Hardtanh, Hardsigmoid and Threshold save nothing (autograd keeps a copy of the input they
    overwrite). Eight `Linear(512, 512) -> act` blocks, batch 2048, training step: LeakyReLU and ELU
    80.1 -> 52.1 MiB in place (7 activations of 4 MiB), ReLU and SiLU 52.1 and 80.1 MiB either way;
    with `x + 1` (which keeps nothing of its input) after each LeakyReLU or ELU, nothing is saved.

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
    fix_safety = "mixed"  # unsafe for ELU, CELU, SELU and a slope that is not a literal

    VALID = [
        Valid(  # einsum of one operand may return a view of it ("bnc->bcn" permutes): in place would write into the tanh output autograd keeps
            """
import torch
import torch.nn.functional as F
from torch import nn
class Mix(nn.Module):
    def forward(self, x):
        h = torch.tanh(x)
        h = torch.einsum("bnc->bcn", h)
        return F.silu(h)
""",
            config=_EXACT,
        ),
        Valid(  # a view of a sigmoid's output: autograd keeps that output for the sigmoid's backward, so it is not fresh
            """
import torch
import torch.nn.functional as F
from torch import nn
class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)
    def forward(self, x):
        return F.relu(torch.sigmoid(self.proj(x)).view(-1))
""",
            config=_EXACT,
        ),
        Valid(  # an expanded view of a fresh output: its elements share memory, so in place would raise
            """
import torch.nn.functional as F
from torch import nn
class Tile(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)
    def forward(self, x):
        return F.relu(self.proj(x).unsqueeze(0).expand(3, -1, -1))
""",
            config=_EXACT,
        ),
        Valid(  # the class's `forward` keeps its product in `self.last` after adding the bias in place: the activation would overwrite what it holds
            """
import torch
import torch.nn.functional as F
from torch import nn
class Dense(nn.Module):
    def __init__(self, n, m):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(m, n))
        self.bias = nn.Parameter(torch.randn(m))
    def forward(self, x):
        x = x @ self.weight.t()
        if self.bias is not None:
            x = x.add_(self.bias)
        self.last = x
        return x
class Mapping(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Dense(4, 8)
    def forward(self, x):
        return F.silu(self.layer(x))
""",
            config=_EXACT,
        ),
        Valid(  # the class's `forward` scales its product in place by a tensor (`mul_`, not an add): not known to keep nothing of it, silent
            """
import torch
import torch.nn.functional as F
from torch import nn
class Dense(nn.Module):
    def __init__(self, n, m):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(m, n))
        self.gain = nn.Parameter(torch.randn(m))
    def forward(self, x):
        x = x @ self.weight.t()
        x = x.mul_(self.gain)
        return x
class Mapping(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Dense(4, 8)
    def forward(self, x):
        return F.silu(self.layer(x))
""",
            config=_EXACT,
        ),
        Valid(  # the `elif` test hands the value to a function that may keep it
            """
import torch
from torch import nn
def attend(a, b, mode):
    attn = torch.bmm(a, b)
    if mode == "softmax":
        attn = torch.softmax(attn, 2)
    elif keep(attn):
        attn = nn.LeakyReLU(0.1)(attn)
    return attn
""",
            config=_EXACT,
        ),
        Valid(  # the flag is a parameter the function rebinds between the two tests: the branch that activates may run where the binding one did not, on the caller's tensor (issue 27, the twenty-first part)
            """
import torch.nn.functional as F
from torch import nn
class Head(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.fc = nn.Linear(d, n)
        self.bn = nn.BatchNorm1d(n)
    def forward(self, x, embed=False):
        if embed:
            x = self.fc(x)
            x = self.bn(x)
        embed = x.shape[1] > 4
        if embed:
            x = F.relu(x)
        return x
""",
            config=_EXACT,
        ),
        Valid(  # the norm's output is kept after its binding in the branch: the activation would overwrite what `self.kept` holds
            """
import torch.nn.functional as F
from torch import nn
class Head(nn.Module):
    def __init__(self, d, n, embed=True):
        super().__init__()
        self.embed = embed
        self.fc = nn.Linear(d, n)
        self.bn = nn.BatchNorm1d(n)
    def forward(self, x):
        if self.embed:
            x = self.bn(self.fc(x))
            self.kept = x
        if self.embed:
            x = F.relu(x)
        return x
""",
            config=_EXACT,
        ),
        Valid(  # a stage of fresh blocks called on the caller's input: with no block it returns that input, which in place would overwrite
            """
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return self.conv(x) + x
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.stage = self._stage(c, n)
    def forward(self, x):
        h = self.stage(x)
        h = F.relu(h)
        return h
    def _stage(self, c, n):
        layers = []
        for _ in range(n):
            layers.append(Block(c))
        return nn.Sequential(*layers)
""",
            config=_EXACT,
        ),
        Valid(  # a stage of blocks that hand back their own Sequential's output, which ends in a sigmoid autograd keeps (review)
            """
import torch.nn.functional as F
from torch import nn
class Gate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 1), nn.Sigmoid())
    def forward(self, x):
        return self.body(x)
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3)
        self.stage = self._stage(c, n)
    def forward(self, x):
        h = self.stem(x)
        h = self.stage(h)
        h = F.leaky_relu(h, 0.2)
        return h
    def _stage(self, c, n):
        layers = []
        for _ in range(n):
            layers.append(Gate(c))
        return nn.Sequential(*layers)
""",
            config=_EXACT,
        ),
        Valid(  # a hook on the stage keeps its output: the activation would overwrite what the hook holds
            """
import torch.nn.functional as F
from torch import nn
kept = []
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return self.conv(x) + x
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.stage = self._stage(c, n)
        self.stage.register_forward_hook(lambda m, i, o: kept.append(o))
    def forward(self, x):
        h = self.stem(x)
        h = self.stage(h)
        h = F.relu(h)
        return h
    def _stage(self, c, n):
        layers = []
        for _ in range(n):
            layers.append(Block(c))
        return nn.Sequential(*layers)
""",
            config=_EXACT,
        ),
        Valid(  # an entry of the dict of layers replaced by an Identity outside the constructor: `self.convs[...](x)` may return the caller's `x` (issue 27, the twentieth part)
            """
from collections import OrderedDict
from torch import nn
class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.convs = OrderedDict()
        self.convs["squeeze"] = nn.Conv2d(c, c, 1)
        self.relu = nn.ReLU()
        self.net = nn.ModuleList(list(self.convs.values()))
    def forward(self, x):
        return self.relu(self.convs["squeeze"](x))
    def extra(self, a):
        return self.relu(a + 1)
net = Decoder(4)
net.convs["squeeze"] = nn.Identity()
""",
            config=_EXACT,
        ),
        Valid(  # the dict of layers updated with entries the caller chooses: an entry may be any callable (issue 27, the twentieth part)
            """
from collections import OrderedDict
from torch import nn
class Decoder(nn.Module):
    def __init__(self, c, extra):
        super().__init__()
        self.convs = OrderedDict()
        self.convs["squeeze"] = nn.Conv2d(c, c, 1)
        self.convs.update(extra)
        self.relu = nn.ReLU()
        self.net = nn.ModuleList(list(self.convs.values()))
    def forward(self, x):
        return self.relu(self.convs["squeeze"](x))
    def extra(self, a):
        return self.relu(a + 1)
""",
            config=_EXACT,
        ),
        Valid(  # a subclass through a module-level alias of the class (`Base = Decoder`) replaces an entry by an Identity: the file relates classes its plain-named bases do not show, so any class's `self.convs` may be this one's
            """
from collections import OrderedDict
from torch import nn
class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.convs = OrderedDict()
        self.convs["squeeze"] = nn.Conv2d(c, c, 1)
        self.relu = nn.ReLU()
        self.net = nn.ModuleList(list(self.convs.values()))
    def forward(self, x):
        return self.relu(self.convs["squeeze"](x))
    def extra(self, a):
        return self.relu(a + 1)
Base = Decoder
class Lite(Base):
    def __init__(self, c):
        super().__init__(c)
        self.convs["squeeze"] = nn.Identity()
""",
            config=_EXACT,
        ),
        Valid(  # a class built by `type(...)` mixes in a class whose method replaces an entry by an Identity: which classes share an instance is unknown
            """
from collections import OrderedDict
from torch import nn
class Patch:
    def strip(self):
        self.convs["squeeze"] = nn.Identity()
class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.convs = OrderedDict()
        self.convs["squeeze"] = nn.Conv2d(c, c, 1)
        self.relu = nn.ReLU()
        self.net = nn.ModuleList(list(self.convs.values()))
    def forward(self, x):
        return self.relu(self.convs["squeeze"](x))
    def extra(self, a):
        return self.relu(a + 1)
Both = type("Both", (Decoder, Patch), {})
""",
            config=_EXACT,
        ),
        Valid(  # a ModuleDict of layers whose entries a function may replace through `_modules`, unseen by the binding counts: an entry may be an Identity returning the caller's `x`
            """
from torch import nn
class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.convs = nn.ModuleDict()
        self.convs["squeeze"] = nn.Conv2d(c, c, 1)
        self.relu = nn.ReLU()
    def forward(self, x):
        return self.relu(self.convs["squeeze"](x))
    def extra(self, a):
        return self.relu(a + 1)
def replace(module):
    for name, child in module.named_children():
        if isinstance(child, nn.Conv2d):
            module._modules[name] = nn.Identity()
        else:
            replace(child)
""",
            config=_EXACT,
        ),
        Valid(  # the one-argument call on the caller's `outputs` may run the ReLU (what `self.kind` says of the branch is not read): it would overwrite them (issue 27, the twentieth part)
            """
from torch import nn
class Adversarial(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        if kind == "hinge":
            self.criterion = nn.ReLU()
        else:
            self.criterion = nn.MSELoss()
    def forward(self, outputs, labels=None):
        if self.kind == "hinge":
            return self.criterion(1 + outputs).mean()
        return self.criterion(outputs)
""",
            config=_EXACT,
        ),
        Valid(  # classes named like torchmeta's but of another library: what they are is not known (issue 27, the twentieth part)
            """
from collections import OrderedDict
from torch import nn
from mylib.modules import MetaLinear, MetaSequential
class Mlp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.features = MetaSequential(OrderedDict([("linear", MetaLinear(c, c)), ("relu", nn.ReLU())]))
    def forward(self, x):
        return self.features(x)
""",
            config=_EXACT,
        ),
        Valid(  # another class's `self.trunk` is the first model's own Sequential (`self.trunk = model.trunk`): its slice runs the ReLU on the caller's tensor (issue 27, e003a review)
            """
from torch import nn
class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 3))
    def forward(self, x):
        return self.trunk(x)
class Tail(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.trunk = model.trunk
    def forward(self, x):
        return self.trunk[1:](x)
""",
            config=_EXACT,
        ),
        Valid(  # `self.trunk` of another class is a constructor parameter, which may be `Stem`'s Sequential: its element run alone (issue 27, e003a review)
            """
from torch import nn
class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 3))
    def forward(self, x):
        return self.trunk(x)
class Tail(nn.Module):
    def __init__(self, trunk):
        super().__init__()
        self.trunk = trunk
    def forward(self, x):
        h = self.trunk[0](x)
        return self.trunk[1](h), h
""",
            config=_EXACT,
        ),
        Valid(  # another class holding `Stem`'s Sequential replaces its first element, which then hands the ReLU the caller's input (issue 27, e003a review)
            """
from torch import nn
class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 3))
    def forward(self, x):
        return self.trunk(x)
class Cut(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.trunk = model.trunk
        self.trunk[0] = nn.Identity()
""",
            config=_EXACT,
        ),
        Valid(  # a mixin beside `Stem` in a subclass's bases slices `self.trunk`: on that instance it is `Stem`'s Sequential (issue 27, e003a review)
            """
from torch import nn
class Peek:
    def rest(self, x):
        return self.trunk[1:](x)
class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 3))
    def forward(self, x):
        return self.trunk(x)
class Both(Stem, Peek):
    def forward(self, x):
        return self.rest(x)
""",
            config=_EXACT,
        ),
        Valid(  # a mixin beside `Stem` removes the Sequential's first element (issue 27, e003a review)
            """
from torch import nn
class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 3))
    def forward(self, x):
        return self.trunk(x)
class Trim:
    def trim(self):
        del self.trunk[0]
class Both(Stem, Trim):
    pass
""",
            config=_EXACT,
        ),
        Valid(  # the subclass names its base through an alias (`Base = Stem`): the relation is not seen, so its slice counts for `Stem` (issue 27, e003a review)
            """
from torch import nn
class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 3))
    def forward(self, x):
        return self.trunk(x)
Base = Stem
class Peek(Base):
    def forward(self, x):
        return self.trunk[1:](x)
""",
            config=_EXACT,
        ),
        Valid(  # a class built by `type(...)` from `Stem` and a class that slices `self.trunk` (issue 27, e003a review)
            """
from torch import nn
class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 3))
    def forward(self, x):
        return self.trunk(x)
class Peek(nn.Module):
    def forward(self, x):
        return self.trunk[1:](x)
Mixed = type("Mixed", (Peek, Stem), {})
""",
            config=_EXACT,
        ),
        Valid(  # an imported second base may rebind the inherited `self.norm` (its constructor runs after the base's) (issue 27, e003a review)
            """
from torch import nn
from elsewhere import Plain
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.BatchNorm1d(c)
        self.act = nn.ReLU()
        self.out = nn.Linear(c, c)
    def forward(self, x):
        return self.out(self.act(self.norm(x)))
class Reduced(Block, Plain):
    def __init__(self, c):
        Block.__init__(self, c)
        Plain.__init__(self)
    def forward(self, x):
        return self.act(self.norm(x))
""",
            config=_EXACT,
        ),
        Valid(  # a file mixin earlier in the MRO defines `norm` as a method giving its input back (issue 27, e003a review)
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.BatchNorm1d(c)
        self.act = nn.ReLU()
        self.out = nn.Linear(c, c)
    def forward(self, x):
        return self.out(self.act(self.norm(x)))
class Skip:
    def norm(self, x):
        return x
class Reduced(Skip, Block):
    def __init__(self, c):
        Block.__init__(self, c)
    def forward(self, x):
        return self.act(self.norm(x))
""",
            config=_EXACT,
        ),
        Valid(  # the subclass swaps the inherited norm through `_modules`, which binds no `self.norm` (issue 27, e003a review)
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.BatchNorm1d(c)
        self.act = nn.ReLU()
        self.out = nn.Linear(c, c)
    def forward(self, x):
        return self.out(self.act(self.norm(x)))
class Reduced(Block):
    def __init__(self, c):
        Block.__init__(self, c)
        self._modules["norm"] = nn.Identity()
    def forward(self, x):
        return self.act(self.norm(x))
""",
            config=_EXACT,
        ),
        Valid(  # the subclass swaps the inherited norm through `__setattr__` (issue 27, e003a review)
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.BatchNorm1d(c)
        self.act = nn.ReLU()
        self.out = nn.Linear(c, c)
    def forward(self, x):
        return self.out(self.act(self.norm(x)))
class Reduced(Block):
    def __init__(self, c):
        Block.__init__(self, c)
        nn.Module.__setattr__(self, "norm", nn.Identity())
    def forward(self, x):
        return self.act(self.norm(x))
""",
            config=_EXACT,
        ),
        Valid(  # a caller hands `norm_layer=nn.Identity` through the `**kwargs` chain: the ReLU would overwrite the block's input
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c, norm_layer=nn.BatchNorm2d, **kwargs):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), norm_layer(c), nn.ReLU())
    def forward(self, x):
        return self.body(x) + x
class Net(nn.Module):
    def __init__(self, c, **kwargs):
        super().__init__()
        self.a = Block(c, **kwargs)
        self.b = Block(c, **kwargs)
    def forward(self, x):
        return self.b(self.a(x))
def build(c, pretrained=False, **kwargs):
    if kwargs.get("verbose"):
        print(kwargs["verbose"])
    return Net(c, **kwargs)
def build_small(**kwargs):
    return build(4, **kwargs)
net = build(4, norm_layer=nn.Identity)
""",
            config=_EXACT,
        ),
        Valid(  # a function of the chain stores its own key into the dictionary it forwards: what it holds is not followed
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c, norm_layer=nn.BatchNorm2d, **kwargs):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), norm_layer(c), nn.ReLU())
    def forward(self, x):
        return self.body(x) + x
class Net(nn.Module):
    def __init__(self, c, **kwargs):
        super().__init__()
        self.a = Block(c, **kwargs)
        self.b = Block(c, **kwargs)
    def forward(self, x):
        return self.b(self.a(x))
def build(c, pretrained=False, **kwargs):
    kwargs["norm_layer"] = kwargs.pop("norm", nn.Identity)
    return Net(c, **kwargs)
def build_small(**kwargs):
    return build(4, **kwargs)
""",
            config=_EXACT,
        ),
        Valid(  # `self.norm = None` and a norm in a branch, but another method rebinds it to `nn.Identity()`, which returns the caller's input
            """
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c, use_in):
        super().__init__()
        self.norm = None
        if use_in:
            self.norm = nn.InstanceNorm2d(c, affine=True)
    def strip(self):
        self.norm = nn.Identity()
    def forward(self, x):
        return F.relu(self.norm(x))
""",
            config=_EXACT,
        ),
        Valid(  # `F` is also a parameter of a helper: its `F.relu(x)` may run the block's module on a value read again
            """
import torch.nn.functional as F
from torch import nn
class ConvBnRelu(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.bn = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()
    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return self.relu(x)
def probe(F, x):
    y = F.relu(x)
    return x, y
""",
            config=_EXACT,
        ),
        Valid(  # the instance is iterated, each layer run alone on what the loop keeps: the ReLU would overwrite the norm's kept output
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = ConvBn(c)
    def forward(self, x):
        kept = []
        for layer in self.block:
            x = layer(x)
            kept.append(x)
        return kept
""",
            config=_EXACT,
        ),
        Valid(  # the helper's Sequential lands in `self.fc`, a part of which runs apart: `[2:]` starts at the ReLU, on the caller's tensor
            """
from torch import nn
class Net(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.fc = self._head(dims, 8)
    def _head(self, dims, width):
        if dims is None:
            return None
        layers = []
        for dim in dims:
            layers.append(nn.Linear(width, dim))
            layers.append(nn.BatchNorm1d(dim))
            layers.append(nn.ReLU())
            width = dim
        return nn.Sequential(*layers)
    def forward(self, x):
        if self.fc is not None:
            x = self.fc[2:](x)
        return x
def load(model, path, torch):
    state = OrderedDict()
    for k, v in torch.load(path).items():
        state[k] = v
    model.load_state_dict(state)
""",
            config=_EXACT,
        ),
        Valid(  # the helper's Sequential is stored in two attributes: which one a part runs of is not followed
            """
from torch import nn
class Net(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.fc = self._head(dims, 8)
        self.aux = self._head(dims, 8)
    def _head(self, dims, width):
        if dims is None:
            return None
        layers = []
        for dim in dims:
            layers.append(nn.Linear(width, dim))
            layers.append(nn.BatchNorm1d(dim))
            layers.append(nn.ReLU())
            width = dim
        return nn.Sequential(*layers)
    def forward(self, x):
        if self.fc is not None:
            x = self.fc(x)
        return x
def load(model, path, torch):
    state = OrderedDict()
    for k, v in torch.load(path).items():
        state[k] = v
    model.load_state_dict(state)
""",
            config=_EXACT,
        ),
        Valid(  # the subclass rebinds the inherited norm to `nn.Identity()`: its call returns the caller's tensor
            """
from torch import nn
class Branch(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return self.conv2(self.relu1(self.bn(self.conv(x))))
class Reduction(Branch):
    def __init__(self, c):
        Branch.__init__(self, c)
        self.bn = nn.Identity()
    def forward(self, x):
        return self.relu1(self.bn(x))
""",
            config=_EXACT,
        ),
        Valid(  # two bases build `self.bn`; the second's constructor, run after the first's, replaces the norm by `nn.Identity()`
            """
from torch import nn
class Branch(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        self.relu1 = nn.ReLU()
class Plain:
    def __init__(self):
        self.bn = nn.Identity()
class Reduction(Branch, Plain):
    def __init__(self, c):
        Branch.__init__(self, c)
        Plain.__init__(self)
    def forward(self, x):
        return self.relu1(self.bn(x))
""",
            config=_EXACT,
        ),
        Valid(  # a method of the subclass shadows the inherited norm: `self.bn(x)` returns the caller's tensor
            """
from torch import nn
class Branch(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return self.conv2(self.relu1(self.bn(self.conv(x))))
class Reduction(Branch):
    def bn(self, x):
        return x
    def forward(self, x):
        return self.relu1(self.bn(x))
""",
            config=_EXACT,
        ),
        Valid(  # the child the cell names a layer on is built by a function of the file: it may be any module, `Net` too
            """
import torch
from torch import nn
class Cell(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pre = make(c)
        self.pre.add_module("relu", nn.ReLU())
        self.pre.add_module("conv", nn.Conv2d(c, c, 1))
        self.left = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        h = self.pre(x)
        return torch.cat([h, self.left(h)], 1)
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cell = Cell(c)
        self.relu = nn.ReLU()
        self.head = nn.Conv2d(2 * c, 2, 1)
    def forward(self, x):
        y = self.cell(x)
        y = self.relu(y)
        return self.head(y)
def make(c):
    return nn.Sequential()
""",
            config=_EXACT,
        ),
        Valid(  # the child is an instance of `Net`, whose `relu` it rebinds
            """
import torch
from torch import nn
class Cell(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pre = nn.Sequential()
        self.pre.add_module("relu", nn.ReLU())
        self.pre.add_module("conv", nn.Conv2d(c, c, 1))
        self.left = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        h = self.pre(x)
        return torch.cat([h, self.left(h)], 1)
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cell = Cell(c)
        self.relu = nn.ReLU()
        self.head = nn.Conv2d(2 * c, 2, 1)
    def forward(self, x):
        y = self.cell(x)
        y = self.relu(y)
        return self.head(y)
class Wrap(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.inner = Net(c)
        self.inner.add_module("relu", nn.Identity())
""",
            config=_EXACT,
        ),
        Valid(  # a subclass runs the Sequential's first layer alone, on the caller's tensor: the ReLU after it would overwrite nothing of the caller's, but the part `[1:]` starts at the ReLU (issue 27: parts read in a related class count)
            """
from torch import nn
class Basic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=False), nn.Conv2d(8, 2, 3, padding=1))
    def forward(self, x):
        return self.body(x)
class Probe(Basic):
    def forward(self, x):
        return self.body[1:](x)
""",
            config=_EXACT,
        ),
        Valid(  # parts read on another object (`net.body[1:]`) may be of any class's `body`
            """
from torch import nn
class Basic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=False), nn.Conv2d(8, 2, 3, padding=1))
    def forward(self, x):
        return self.body(x)
def probe(net, x):
    return net.body[1:](x)
""",
            config=_EXACT,
        ),
        Valid(  # a base class's method changes the elements of `self.body`, which on a subclass's instance is the subclass's Sequential
            """
from torch import nn
class Base(nn.Module):
    def simplify(self):
        self.body[0] = nn.Identity()
class Basic(Base):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=False), nn.Conv2d(8, 2, 3, padding=1))
    def forward(self, x):
        return self.body(x)
""",
            config=_EXACT,
        ),
        Valid(  # the instance's children are run one by one by name (a U-Net keeping the norm's output as a skip)
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = ConvBn(c)
    def forward(self, x):
        skips = []
        for name, layer in self.block.named_children():
            x = layer(x)
            if name == "bn":
                skips.append(x)
        return x, skips
""",
            config=_EXACT,
        ),
        Valid(  # children of the instance are reached by their keys and run alone: `h` is returned beside the ReLU's output
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = ConvBn(c)
    def forward(self, x):
        h = self.block.bn(self.block.conv(x))
        return h, self.block.relu(h)
""",
            config=_EXACT,
        ),
        Valid(  # the instance built without its ReLU is extended afterwards by a Sigmoid, which keeps its output: its call no longer returns the norm's
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tail = ConvBn(c, False)
        self.tail.add_module("gate", nn.Sigmoid())
    def forward(self, x):
        return F.relu(self.tail(x))
""",
            config=_EXACT,
        ),
        Valid(  # the same, extended by `append`
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tail = ConvBn(c, False)
        self.tail.append(nn.Sigmoid())
    def forward(self, x):
        return F.relu(self.tail(x))
""",
            config=_EXACT,
        ),
        Valid(  # the same, extended by `setattr`
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tail = ConvBn(c, False)
        setattr(self.tail, "gate", nn.Sigmoid())
    def forward(self, x):
        return F.relu(self.tail(x))
""",
            config=_EXACT,
        ),
        Valid(  # the class name is rebound at module level to another class: which one `ConvBn(c, False)` builds is not the class shown
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
class Other(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("tanh", nn.Tanh())
if __debug__:
    ConvBn = Other
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tail = ConvBn(c, False)
    def forward(self, x):
        return F.relu(self.tail(x))
""",
            config=_EXACT,
        ),
        Valid(  # an import that may replace the class (a faster build when one is there)
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
try:
    from .fast import ConvBn
except ImportError:
    pass
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tail = ConvBn(c, False)
    def forward(self, x):
        return F.relu(self.tail(x))
""",
            config=_EXACT,
        ),
        Valid(  # a star import after the class may rebind its name
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
from .overrides import *
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tail = ConvBn(c, False)
    def forward(self, x):
        return F.relu(self.tail(x))
""",
            config=_EXACT,
        ),
        Valid(  # a `forward` patched onto the class keeps the norm's output: the ReLU must not overwrite it
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
def _forward(self, x):
    h = self.bn(self.conv(x))
    self.kept = h
    return self.relu(h)
ConvBn.forward = _forward
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = ConvBn(c)
    def forward(self, x):
        return self.block(x)
""",
            config=_EXACT,
        ),
        Valid(  # a hook through `self._modules["bn"]` sees the norm's output, which the LeakyReLU after it would overwrite
            """
from torch import nn
kept = {}
def keep(module, inputs, output):
    kept["bn"] = output
class Edge(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        self.body = nn.Sequential(nn.Conv2d(c, c, 1), self.bn, nn.LeakyReLU(0.2), nn.Conv2d(c, c, 1))
        self._modules["bn"].register_forward_hook(keep)
    def forward(self, x):
        return self.body(x)
""",
        ),
        Valid(  # built with `relu=True` (the default): the class adds a Tanh last, which keeps its output for backward
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.Tanh())
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tail = ConvBn(c)
    def forward(self, x):
        return F.relu(self.tail(x))
""",
            config=_EXACT,
        ),
        Valid(  # whether the Tanh is added is not a literal at the construction: what the class adds last is not known
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.Tanh())
class Block(nn.Module):
    def __init__(self, c, last):
        super().__init__()
        self.tail = ConvBn(c, last)
    def forward(self, x):
        return F.relu(self.tail(x))
""",
            config=_EXACT,
        ),
        Valid(  # the constructor also binds `self.head`, which nn.Module adds after the norm: the class's last layer is the Tanh
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        self.head = nn.Tanh()
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tail = ConvBn(c)
    def forward(self, x):
        return F.relu(self.tail(x))
""",
            config=_EXACT,
        ),
        Valid(  # `self.skip` is an `nn.Identity`, whose output is the caller's tensor: the ReLU after it would overwrite it
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.skip = nn.Identity()
        self.body = nn.Sequential(self.skip, nn.LeakyReLU(0.2), nn.Conv2d(c, c, 1))
    def forward(self, x):
        return self.body(x)
""",
        ),
        Valid(  # `self.bn` is read again outside the Sequential (its weight returned): the class keeps it for more than that place
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        self.body = nn.Sequential(nn.Conv2d(c, c, 1), self.bn, nn.LeakyReLU(0.2), nn.Conv2d(c, c, 1))
    def forward(self, x):
        return self.body(x), self.bn.weight
""",
        ),
        Valid(  # `self.bn` is bound again by another method: which module the Sequential holds is the one built first, but the rule does not follow that
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        self.body = nn.Sequential(nn.Conv2d(c, c, 1), self.bn, nn.LeakyReLU(0.2), nn.Conv2d(c, c, 1))
    def fuse(self):
        self.bn = nn.Identity()
    def forward(self, x):
        return self.body(x)
""",
        ),
        Valid(  # a Sequential subclass with a `forward` of its own, which reads the norm's output again after the ReLU
            """
from torch import nn
class ConvBnReLU(nn.Sequential):
    def __init__(self, c):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        self.add_module("relu", nn.ReLU())
    def forward(self, x):
        h = self.bn(self.conv(x))
        return h + self.relu(h)
""",
            config=_EXACT,
        ),
        Valid(  # a subclass of the Sequential subclass may run its layers its own way
            """
from torch import nn
class ConvBnReLU(nn.Sequential):
    def __init__(self, c):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        self.add_module("relu", nn.ReLU())
class Probe(ConvBnReLU):
    def forward(self, x):
        h = self.bn(self.conv(x))
        return h, self.relu(h)
""",
            config=_EXACT,
        ),
        Valid(  # one layer of an instance runs alone (`self.block[2](h)`): the ReLU there would overwrite the caller's `h`
            """
from torch import nn
class ConvBnReLU(nn.Sequential):
    def __init__(self, c):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        self.add_module("relu", nn.ReLU())
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = ConvBnReLU(c)
    def forward(self, x):
        h = x * 2
        return self.block[2](h) + h
""",
            config=_EXACT,
        ),
        Valid(  # the key "bn" is added twice: the second replaces the norm where it stood, before the ReLU
            """
from torch import nn
class ConvBnReLU(nn.Sequential):
    def __init__(self, c, plain):
        super().__init__()
        self.add_module("bn", nn.BatchNorm2d(c))
        self.add_module("relu", nn.ReLU())
        if plain:
            self.add_module("bn", nn.Identity())
""",
            config=_EXACT,
        ),
        Valid(  # `Norm` is a parameter of `stage`: the caller passes `nn.Tanh`, not the global `Norm` a setup function binds to a norm class
            """
from torch import nn
def stage(width, Norm):
    return nn.Sequential(nn.Conv2d(width, width, 1), Norm(width), nn.ReLU())
head = stage(8, nn.Tanh)
def configure():
    global Norm
    Norm = nn.BatchNorm2d
""",
            config=_EXACT,
        ),
        Valid(  # a comprehension's own `Norm` (each of two activations) hides the global `Norm` a setup function binds
            """
from torch import nn
def configure():
    global Norm
    Norm = nn.BatchNorm2d
class Tower(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.stages = nn.ModuleList([nn.Sequential(nn.Conv2d(width, width, 1), Norm(width), nn.ReLU()) for Norm in (nn.Tanh, nn.Sigmoid)])
    def forward(self, x):
        for stage in self.stages:
            x = stage(x)
        return x
""",
            config=_EXACT,
        ),
        Valid(  # the constructor's parameter `Linear` (an `nn.Identity` by default, which returns the caller's tensor) hides the file's factory `Linear`
            """
from torch import nn
import torch.nn.functional as F
def Linear(i, o):
    m = nn.Linear(i, o)
    nn.init.zeros_(m.bias)
    return m
class Head(nn.Module):
    def __init__(self, width, Linear=nn.Identity):
        super().__init__()
        self.proj = Linear(width, width)
    def forward(self, x):
        return F.relu(self.proj(x))
""",
            config=_EXACT,
        ),
        Valid(  # a helper's parameter `Linear` hides the file's factory `Linear` in a Sequential
            """
from torch import nn
def Linear(i, o):
    m = nn.Linear(i, o)
    nn.init.zeros_(m.bias)
    return m
def block(width, Linear):
    return nn.Sequential(Linear(width, width), nn.ReLU())
net = block(4, lambda i, o: nn.Identity())
""",
            config=_EXACT,
        ),
        Valid(  # the global `Norm` is rebound to `nn.Identity` by another function: `self.norm(x)` may be the caller's `x`
            """
from torch import nn
import torch.nn.functional as F
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = Norm(c)
    def forward(self, x):
        return F.relu(self.norm(x))
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        global Norm
        Norm = nn.BatchNorm2d
        self.body = Block(c)
def without_norms():
    global Norm
    Norm = nn.Identity
""",
            config=_EXACT,
        ),
        Valid(  # a factory returning different layers by branch (`nn.Identity()`, which returns the caller's tensor, or a Linear)
            """
from torch import nn
import torch.nn.functional as F
def Proj(i, o):
    if i == o:
        return nn.Identity()
    m = nn.Linear(i, o)
    nn.init.zeros_(m.bias)
    return m
class Head(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = Proj(d, d)
    def forward(self, x):
        return F.relu(self.proj(x))
""",
            config=_EXACT,
        ),
        Valid(  # a factory that hooks the layer it returns: the hook keeps the output the activation would overwrite
            """
from torch import nn
import torch.nn.functional as F
seen = []
def Linear(i, o):
    m = nn.Linear(i, o)
    m.register_forward_hook(lambda module, args, out: seen.append(out))
    return m
class Head(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = Linear(d, d)
    def forward(self, x):
        return F.relu(self.fc(x))
""",
            config=_EXACT,
        ),
        Valid(  # the factory's layer output is read twice: in place would change the `+ h`
            """
from torch import nn
import torch.nn.functional as F
def Linear(i, o):
    m = nn.Linear(i, o)
    nn.init.xavier_uniform_(m.weight)
    return m
class Head(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = Linear(d, d)
    def forward(self, x):
        h = self.fc(x)
        return F.relu(h) + h
""",
            config=_EXACT,
        ),
        Valid(  # the Sequential on a submodule's attribute is iterated elsewhere in the file, layer by layer, with an early exit: the ReLU may run on what the caller keeps
            """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
    def forward(self, x):
        return self.fc(x)
class Contrast(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        width = self.encoder.fc.weight.shape[1]
        self.encoder.fc = nn.Sequential(nn.Linear(width, width), nn.ReLU(), self.encoder.fc)
        self.register_buffer("steps", torch.zeros(1))
    def forward(self, x):
        self.steps[0] = x.shape[0]
        return self.encoder(x)
    def hidden(self, x):
        for layer in self.encoder.fc:
            x = layer(x)
            if x.shape[1] == 8:
                return x
""",
            config=_EXACT,
        ),
        Valid(  # a part starts at the activation: it would overwrite the first part's output, which is returned too
            """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    def forward(self, x):
        h = self.head[:1](x)
        return h, self.head[1:](h)
""",
            config=_EXACT,
        ),
        Valid(  # a part with a step puts layers side by side that are not so in the whole
            """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.Linear(8, 8))
    def forward(self, x):
        return self.head[:2](x) + self.head[::2](x)
""",
            config=_EXACT,
        ),
        Valid(  # element 0 of the tuple is also kept by the class (`self.last = y`): in place would change what it keeps
            """
import torch
from torch import nn
import torch.nn.functional as F
class Norm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1, c, 1, 1))
    def forward(self, x):
        y = x / self.scale
        self.last = y
        return y, self.scale.sum()
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.norm = Norm(c)
    def forward(self, x):
        return F.relu(self.norm(self.conv(x))[0])
""",
            config=_EXACT,
        ),
        Valid(  # element 0 is the caller's own input on one return: not fresh in every one
            """
import torch
from torch import nn
import torch.nn.functional as F
class Norm(nn.Module):
    def __init__(self, c, skip):
        super().__init__()
        self.skip = skip
        self.scale = nn.Parameter(torch.ones(1, c, 1, 1))
    def forward(self, x):
        if self.skip:
            return x, 0
        return x / self.scale, 1
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = Norm(c, True)
    def forward(self, x):
        return F.relu(self.norm(x)[0])
""",
            config=_EXACT,
        ),
        Valid(  # the `if` before the activation does not always return: its branch keeps the sum on the activation's path
            """
from torch import nn
import torch.nn.functional as F
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
    def forward(self, x, keep=False):
        out = self.bn(self.conv(x))
        out += x
        if keep:
            self.kept = out
        return F.relu(out)
""",
            config=_EXACT,
        ),
        Valid(  # a function handed to `model.apply` replaces element 0 of every Sequential it meets: those kept in the ModuleList too, so the ReLU may come first (review of issue 27's ML003 change)
            """
import torch
from torch import nn
class Towers(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.towers = nn.ModuleList()
        for _ in range(n):
            self.towers.append(nn.Sequential(nn.BatchNorm1d(c), nn.ReLU(), nn.Linear(c, c)))
    def forward(self, x):
        return [tower(x) for tower in self.towers]
def skip_norms(module):
    if isinstance(module, nn.Sequential):
        module[0] = nn.Identity()
def make(c, n):
    net = Towers(c, n)
    net.apply(skip_norms)
    return net
""",
            config=_EXACT,
        ),
        Valid(  # a loop over `net.modules()` deletes the first layer of each Sequential, those in the ModuleList included: the ReLU may then run on the caller's tensor
            """
import torch
from torch import nn
class Towers(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.towers = nn.ModuleList([nn.Sequential(nn.Linear(c, c), nn.ReLU(), nn.Linear(c, c)) for _ in range(n)])
    def forward(self, x):
        return [self.towers[i](x) for i in range(len(self.towers))]
def prune(net):
    for sub in net.modules():
        if isinstance(sub, nn.Sequential):
            del sub[0]
""",
            config=_EXACT,
        ),
        Valid(  # `getattr(self, "body")[1:]` runs a part that starts at the ReLU, on the output of another part the caller keeps: a literal getattr is a use of `self.body`
            """
from torch import nn
class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.Linear(8, 2))
    def forward(self, x):
        h = self.body[:3](x)
        first = getattr(self, "body")[:1](x)
        return h, first, getattr(self, "body")[1:](first)
""",
            config=_EXACT,
        ),
        Valid(  # `getattr(self, which)` may be the ModuleList: a part of its element that starts at the ReLU runs on a tensor returned to the caller
            """
import torch
from torch import nn
class Towers(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.towers = nn.ModuleList()
        for _ in range(n):
            self.towers.append(nn.Sequential(nn.Linear(c, c), nn.ReLU(), nn.Linear(c, c)))
        self.stem = nn.Sequential(nn.Linear(c, c))
        self.stem[0] = nn.Linear(c, c)
    def forward(self, x, which="towers"):
        chosen = getattr(self, which)
        h = chosen[0][0](x)
        return h, chosen[0][1:](h)
""",
            config=_EXACT,
        ),
        Valid(  # the ModuleList's elements do not only run whole: one layer of an element runs apart, its output read again
            """
import torch
from torch import nn
class Heads(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(n):
            layers = [nn.Linear(c, c)]
            layers += [nn.SiLU(), nn.Linear(c, c)]
            self.heads.append(nn.Sequential(*layers))
    def forward(self, x):
        out = torch.zeros(len(self.heads), x.shape[0], x.shape[1])
        for i in range(len(self.heads)):
            out[i] = self.heads[i](x)
        h = self.heads[0][0](x)
        return out, h, self.heads[0][1](h)
""",
            config=_EXACT,
        ),
        Valid(  # an element taken by key is handed on, not only called: what is done with it is not known
            """
import torch
from torch import nn
class Heads(nn.Module):
    def __init__(self, c, names):
        super().__init__()
        self.heads = nn.ModuleDict({n: nn.Sequential(nn.Linear(c, c), nn.ReLU(), nn.Linear(c, c)) for n in names})
    def forward(self, x, probe):
        out = torch.zeros(2, x.shape[0], x.shape[1])
        for i, n in enumerate(["a", "b"]):
            head = self.heads[n]
            out[i] = probe(head, x)
        return out
""",
            config=_EXACT,
        ),
        Valid(  # the helper's list is also handed elsewhere (`layers = deconv([], ...)` names no list the caller turns into a Sequential): which layer the activation follows there is not known
            """
from torch import nn
def deconv(layers, c_in, c_out):
    layers.append(nn.Conv2d(c_in, c_out, 3, padding=1))
    layers.append(nn.ReLU())
    return layers
class Gen(nn.Module):
    def __init__(self, c):
        super().__init__()
        layers = deconv([], 3, c)
        self.model = nn.Sequential(*layers)
        self.head = deconv
""",
            config=_EXACT,
        ),
        Valid(  # the helper iterates the module it is handed: each layer's output is exposed to it
            """
from torch import nn
def run_layers(module, x):
    outs = []
    for layer in module:
        x = layer(x)
        outs.append(x)
    return outs
class Embed(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.att_embed = nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, b))
    def forward(self, x):
        return run_layers(self.att_embed, x)
""",
            config=_EXACT,
        ),
        Valid(  # a group is read as well as unpacked: its layers may be used elsewhere
            """
from torch import nn
class Disc(nn.Module):
    def __init__(self, c):
        super().__init__()
        sequence = [[nn.Conv2d(3, c, 3, padding=1), nn.LeakyReLU(0.2, False)]]
        sequence += [[nn.Conv2d(c, c, 3, padding=1)]]
        self.first = sequence[0][0]
        for n in range(len(sequence)):
            self.add_module("model" + str(n), nn.Sequential(*sequence[n]))
""",
            config=_EXACT,
        ),
        Valid(  # the ReLU comes right after a part of the `+` that may be empty: it may be first, on the caller's tensor
            """
from torch import nn
def head(a, b, pre):
    return nn.Sequential(*(((nn.Linear(a, b),) if pre else ()) + (nn.ReLU(), nn.Linear(b, b))))
""",
            config=_EXACT,
        ),
        Valid(  # a key set again: an OrderedDict keeps it where it was first set, so the order is not the statements'
            """
from collections import OrderedDict
from torch import nn
layers = OrderedDict()
layers["act"] = nn.Tanh()
layers["fc"] = nn.Linear(4, 4)
layers["act"] = nn.ReLU()
net = nn.Sequential(layers)
""",
            config=_EXACT,
        ),
        Valid(  # the dict is read as well: its layers may be used elsewhere
            """
from collections import OrderedDict
from torch import nn
layers = OrderedDict()
layers["fc"] = nn.Linear(4, 4)
layers["relu"] = nn.ReLU()
net = nn.Sequential(layers)
probe = layers["fc"]
""",
            config=_EXACT,
        ),
        Valid(  # the class keeps what its forward returns: an in-place activation after it would change the kept tensor
            """
import torch
import torch.nn.functional as F
from torch import nn
class Down(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(c, c, 3, 3))
        self.kept = []
    def forward(self, input):
        out = F.conv2d(input, self.weight, stride=2, padding=1)
        self.kept.append(out)
        return out
block = nn.Sequential(nn.Conv2d(4, 4, 1), Down(4), nn.LeakyReLU(0.2), nn.Conv2d(4, 4, 1))
""",
            config=_EXACT,
        ),
        Valid(  # the class's forward returns its input on one path: the caller's tensor
            """
import torch
from torch import nn
class Maybe(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(1, c, 1, 1))
    def forward(self, x, noise=None):
        if noise is None:
            return x
        return x + self.weight * noise
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.noise = Maybe(c)
        self.lrelu = nn.LeakyReLU(0.2)
    def forward(self, x):
        return self.lrelu(self.noise(x))
""",
            config=_EXACT,
        ),
        Valid(  # the pre-hook keeps its input: it may be on the activation, whose input in place would change (issue 27)
            """
from torch import nn
kept = []
def keep(module, args):
    kept.append(args[0])
class EqualConv2d(nn.Module):
    def __init__(self, *args):
        super().__init__()
        conv = nn.Conv2d(*args)
        self.conv = conv
    def forward(self, input):
        return self.conv(input)
block = nn.Sequential(EqualConv2d(4, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(4, 4, 1))
for layer in block:
    layer.register_forward_pre_hook(keep)
""",
            config=_EXACT,
        ),
        Valid(  # the class's forward returns its layer's output only on one path: the other may return a kept tensor
            """
from torch import nn
class Maybe(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
    def forward(self, x):
        if x.shape[1] == 1:
            return x
        return self.conv(x)
block = nn.Sequential(nn.Conv2d(4, 4, 1), Maybe(4), nn.LeakyReLU(0.2), nn.Conv2d(4, 4, 1))
""",
            config=_EXACT,
        ),
        Valid(  # a full backward hook wraps the layer's output: changed in place, backward raises (issue 27)
            """
import torch.nn.functional as F
from torch import nn
class Gaze(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 1, 1)
        self.conv.register_full_backward_hook(lambda module, grad_in, grad_out: tuple(None if g is None else g / 4 for g in grad_in))
    def forward(self, x):
        y = F.relu(self.conv(x))
        return x * y
""",
            config=_EXACT,
            harness=_runs("Gaze()", "2, 4, 6, 6"),
        ),
        Valid(  # a None test beside an iteration of the Sequential: the iteration exposes its layers' outputs (issue 27)
            """
from torch import nn
class Head(nn.Module):
    def __init__(self, up):
        super().__init__()
        if up:
            self.up_conv = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1), nn.ReLU())
        else:
            self.up_conv = None
        self.kept = []
    def forward(self, x):
        if self.up_conv is not None:
            for layer in self.up_conv:
                x = layer(x)
                self.kept.append(x)
        return x
""",
            config=_EXACT,
            harness=_runs("Head(True)", "2, 4, 6, 6"),
        ),
        Valid(  # `.relu()` on a Linear output read again, on a parameter (the caller's tensor), and another object's `relu()`
            """
from torch import nn
class Gate:
    def relu(self):
        return self
class FeedForward(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up = nn.Linear(d, d)
        self.gate = Gate()
    def forward(self, x):
        h = self.up(x)
        return h.relu() + h + x.relu()
    def other(self):
        return self.gate.relu()
""",
            config=_EXACT,
            harness=_runs("FeedForward(4)", "2, 4"),
        ),
        Valid(  # activation attributes chosen by conditional expressions: one branch keeps its output (Sigmoid), one is no layer (None), two activations of different savings (LeakyReLU, ReLU); and a chosen ReLU called on a value read again
            """
from torch import nn
class Heads(nn.Module):
    def __init__(self, c, gate=True, leaky=True):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.a = nn.ReLU() if gate else nn.Sigmoid()
        self.b = nn.ReLU() if gate else None
        self.c = nn.LeakyReLU(0.1) if leaky else nn.ReLU()
        self.d = nn.ReLU() if gate else nn.Identity()
    def forward(self, x):
        h = self.conv(x)
        return self.a(self.conv(x)) + self.b(self.conv(x)) + self.c(self.conv(x)) + self.d(h) + h
""",
            config=_EXACT,
            harness=_runs("Heads(4)", "2, 4, 6, 6"),
        ),
        Valid(  # a ModuleList whose concatenated parts hold a Sigmoid: its output is kept for backward
            """
import torch.nn.functional as F
from torch import nn
class Field(nn.Module):
    def __init__(self, d, depth):
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(d, d)] + [nn.Linear(d, d) if i else nn.Sigmoid() for i in range(depth)])
    def forward(self, x):
        for i in range(len(self.linears)):
            x = F.relu(self.linears[i](x))
        return x
""",
            config=_EXACT,
            harness=_runs("Field(4, 2)", "2, 4"),
        ),
        Valid(  # `.relu()` of an object that is no tensor (a scalar class of its own with `+`, `*`, `sum` and `relu`, as micrograd's `Value`): it has no `relu_()`, so only a receiver proven a tensor is reported
            """
from torch import nn
class Scalar:
    def __init__(self, v):
        self.v = v
    def __add__(self, other):
        return Scalar(self.v + other.v)
    def __mul__(self, other):
        return Scalar(self.v * other.v)
    def sum(self, dim):
        return self
    def relu(self):
        return Scalar(max(0.0, self.v))
def neuron(w, x, b):
    return (w * x + b).relu()
def norm(s):
    return s.sum(1).relu()
""",
            config=_EXACT,
            harness=Harness(setup="import torch\n", then="result = (neuron(Scalar(2.0), Scalar(3.0), Scalar(-1.0)).v, norm(Scalar(-1.0)).v)\n"),
        ),
        Valid(  # an activation inside a comprehension or a lambda on a name bound outside it: it runs once per element or call, each reading the same tensor (in place, the first run would overwrite what the next reads and its own backward needs)
            """
import torch
import torch.nn.functional as F
from torch import nn
class Heads(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.heads = nn.ModuleList([nn.Linear(d, 1) for _ in range(3)])
    def forward(self, x):
        h = self.fc(x)
        outs = [head(h.relu()) for head in self.heads]
        g = self.fc(x)
        outs += [head(F.relu(g)) for head in self.heads]
        k = self.fc(x)
        act = lambda: torch.relu(k)
        return torch.cat(outs + [act(), act()], 1)
""",
            config=_EXACT,
            harness=_runs("Heads(4)", "2, 4"),
        ),
        Valid(  # one activation module bound to two attributes (`self.a = self.b = ...`, or a local name bound to both): the calls through the other attribute run it too, on a value read again
            """
from torch import nn
class Pair(nn.Module):
    def __init__(self, c, act=True):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.a = self.b = nn.ReLU() if act else nn.Identity()
        self.e = self.f = nn.ReLU()
        shared = nn.ReLU()
        self.c = shared
        self.d = shared
    def forward(self, x):
        h = self.conv(x)
        y = self.a(self.conv(x)) + self.e(self.conv(x)) + self.c(self.conv(x))
        return y + self.b(h) + self.f(h) + self.d(h) + h
""",
            config=_EXACT,
            harness=_runs("Pair(4)", "2, 4, 6, 6"),
        ),
        Valid(  # an activation module built in a constructor branch, called on a value read again (issue 27)
            """
from torch import nn
class Head(nn.Module):
    def __init__(self, add_relu):
        super().__init__()
        self.project = nn.Linear(4, 4)
        if add_relu:
            self.relu = nn.ReLU()
        else:
            self.relu = lambda x: x
    def forward(self, x):
        h = self.project(x)
        return self.relu(h) + h
""",
            config=_EXACT,
            harness=_runs("Head(True)", "2, 4"),
        ),
        Valid(  # the activation module's attribute is bound again outside the constructor: which module runs is not known (issue 27)
            """
from torch import nn
class Head(nn.Module):
    def __init__(self, add_relu):
        super().__init__()
        self.project = nn.Linear(4, 4)
        if add_relu:
            self.relu = nn.ReLU()
        else:
            self.relu = lambda x: x
    def share(self, other):
        self.relu = other.relu
    def forward(self, x):
        return self.relu(self.project(x))
""",
            config=_EXACT,
        ),
        Valid(  # a base class's activation module, called by one subclass on the caller's tensor
            """
import torch
from torch import nn
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.leaky = nn.LeakyReLU(0.2)
class Scores(Layer):
    def forward(self, a, b):
        return self.leaky(self.fc(a) + b)
class Raw(Layer):
    def forward(self, x):
        return self.leaky(x) + x
""",
            config=_EXACT,
        ),
        Valid(  # the loop variable is also bound to something else in the function: not known to be a layer of the list
            """
import torch.nn.functional as F
from torch import nn
class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv1d(4, 4, 3, padding=1), nn.Conv1d(4, 4, 3, padding=1)])
    def forward(self, x, extra=None):
        for l in self.convs:
            x = l(x)
            x = F.leaky_relu(x, 0.1)
        if extra is not None:
            l = extra
            x = l(x)
            x = F.leaky_relu(x, 0.1)
        return x
""",
            config=_EXACT,
        ),
        Valid(  # a name chosen between a reparameterisation and something else: the layer is not known
            """
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import weight_norm
def keep(m):
    return nn.Sequential(m, nn.Sigmoid())
class Stack(nn.Module):
    def __init__(self, normed):
        super().__init__()
        norm_f = weight_norm if normed else keep
        self.convs = nn.ModuleList([norm_f(nn.Conv1d(4, 4, 3, padding=1)), norm_f(nn.Conv1d(4, 4, 3, padding=1))])
    def forward(self, x):
        for l in self.convs:
            x = l(x)
            x = F.leaky_relu(x, 0.1)
        return x
""",
            config=_EXACT,
        ),
        Valid(  # bound further back, but a statement between keeps a reference to the value
            """
import torch
import torch.nn.functional as F
from torch import nn
class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Parameter(torch.randn(8, 8))
        self.kept = None
    def forward(self, h):
        h_prime = torch.mm(h, self.W)
        self.kept = h_prime
        if self.training:
            return F.relu(h_prime)
        return h_prime
""",
            config=_EXACT,
        ),
        Valid(  # bound further back, and read again after the activation (`y + h_prime`)
            """
import torch
import torch.nn.functional as F
from torch import nn
class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Parameter(torch.randn(8, 8))
    def forward(self, h):
        h_prime = torch.mm(h, self.W)
        assert h_prime.dim() == 2
        y = F.relu(h_prime)
        return y + h_prime
""",
            config=_EXACT,
        ),
        Valid(  # a method of an attribute (`self.meter.mean()`) may return a tensor that object keeps
            """
import torch
import torch.nn.functional as F
from torch import nn
class Meter:
    def __init__(self):
        self.value = torch.zeros(4)
    def mean(self):
        return self.value
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.meter = Meter()
    def forward(self, x):
        h = self.meter.mean()
        return F.relu(h) + x
""",
            config=_EXACT,
        ),
        Valid(  # bound before a loop: in place, the second iteration would overwrite what the first kept for backward
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        h = self.fc(x)
        for _ in range(2):
            if self.training:
                h = F.relu(h)
        return h
""",
            config=_EXACT,
        ),
        Valid(  # a plain function whose parameter is called `nn`: whatever the caller passes, not torch.nn
            """
def build(nn):
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
""",
            config=_EXACT,
        ),
        Valid(  # cells of an `app` that is not marimo's: their parameters are whatever that framework passes
            """
import notebooks

app = notebooks.App()


@app.cell
def _():
    import torch.nn as nn
    return (nn,)


@app.cell
def _(nn):
    mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    return (mlp,)
""",
            config=_EXACT,
        ),
        Valid(  # one element of the ModuleList may be the identity: its output is the caller's tensor
            """
import torch.nn.functional as F
from torch import nn
class Stack(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = nn.ModuleList()
        for a, b in zip(dims, dims[1:]):
            self.layers.append(nn.Linear(a, b) if a != b else nn.Identity())
    def forward(self, x):
        for i in range(len(self.layers)):
            x = F.relu(self.layers[i](x))
        return x
""",
            config=_EXACT,
        ),
        Valid(  # another object's list of the same name gets a module of the file's own: not known
            """
import torch.nn.functional as F
from torch import nn
class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
    def forward(self, x):
        for i in range(2):
            x = F.relu(self.layers[i](x))
        return x
def widen(model, block):
    model.layers.append(block)
""",
            config=_EXACT,
        ),
        Valid(  # the Sequential the list is unpacked into has its first layer replaced: the ReLU would come first
            """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Linear(4, 4), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)
    def forward(self, x):
        return self.mlp(x)
model = Net()
model.mlp[0] = nn.Identity()
""",
            config=_EXACT,
        ),
        Valid(  # the layer may not have been added (no `else`): the ReLU may come first and overwrite the caller's tensor
            """
from torch import nn
def block(conv):
    net = nn.Sequential()
    if conv:
        net.add_module("conv", nn.Conv2d(3, 3, 3))
    net.add_module("relu", nn.ReLU())
    return net
""",
            config=_EXACT,
        ),
        Valid(  # one branch adds a Sigmoid, which keeps its output for backward
            """
from torch import nn
def block(conv):
    net = nn.Sequential()
    net.add_module("conv", nn.Conv2d(3, 3, 3))
    if conv:
        net.add_module("bn", nn.BatchNorm2d(3))
    else:
        net.add_module("gate", nn.Sigmoid())
    net.add_module("relu", nn.ReLU())
    return net
""",
            config=_EXACT,
        ),
        Valid(  # a factory that may return the identity: the ReLU might overwrite the caller's tensor
            """
from torch import nn
def project(in_channels, out_channels):
    if in_channels == out_channels:
        return nn.Identity()
    return nn.Conv2d(in_channels, out_channels, kernel_size=1)
body = nn.Sequential(project(3, 8), nn.ReLU(), nn.Conv2d(8, 4, 1))
""",
            config=_EXACT,
        ),
        Valid(  # a subclass's `self.dropout` is the base class's module, here called on the caller's tensor
            """
from torch import nn
class Encoding(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.dropout = nn.Dropout(0.5)
    def forward(self, x):
        return self.dropout(self.fc(x))
class Noisy(Encoding):
    def noisy(self, x):
        return self.dropout(x) + x
""",
            config=_EXACT,
        ),
        Valid(  # one branch of the `if` binds the caller's tensor: in place would overwrite it
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.project = True
    def forward(self, x):
        if self.project:
            h = self.fc(x)
        else:
            h = x
        return F.relu(h)
""",
            config=_EXACT,
        ),
        Valid(  # the name is read again after the activation (`h` beside `y`): not dead
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)
        self.first = True
    def forward(self, x):
        if self.first:
            h = self.fc(x)
        else:
            h = self.fc2(x)
        y = F.relu(h)
        return y + h
""",
            config=_EXACT,
        ),
        Valid(  # the branch ends in another statement than the binding (`kept = h` keeps the fresh value)
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.kept = None
    def forward(self, x, keep):
        h = self.fc(x)
        if keep:
            h = self.fc(x)
            self.kept = h
        return F.relu(h)
""",
            config=_EXACT,
        ),
        Valid(  # a layer wrapped by a helper not named as an initialiser: what `self.conv1` holds is not known
            """
from utils import *
class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = wrap(nn.Conv2d(4, 4, kernel_size=3, padding=1))
    def forward(self, x):
        return F.relu(self.conv1(x))
""",
            config=_EXACT,
        ),
        Valid(  # a helper from a star import, not named as an initialiser: what it returns is not known
            """
from utils import *
class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(wrap(nn.Conv2d(4, 4, 3)), nn.ReLU())
""",
            config=_EXACT,
        ),
        Valid(  # `F` comes through a star import but the file binds it itself, to something not torch's
            """
from .utils import *
from .ops import functional as F
class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 32, kernel_size=3)
    def forward(self, x):
        return F.relu(self.conv1(x))
"""
        ),
        Valid(  # the model is handed to captum, whose DeepLift hooks every nonlinearity (issue 27)
            """
from captum.attr import DeepLift
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.relu = nn.ReLU()
    def forward(self, x):
        return self.relu(self.fc(x))
net = Net()
dl = DeepLift(net)
"""
        ),
        Valid(  # a name bound to a layer in a branch and to something else in another: not one layer
            """
from torch import nn
def make_layers(cfg, fused):
    layers = []
    for v in cfg:
        if fused:
            block = nn.Conv2d(3, v, 3)
        else:
            block = nn.Sigmoid()
        layers += [block, nn.ReLU()]
    return nn.Sequential(*layers)
"""
        ),
        Valid(  # `self.relu` is also called on the caller's tensor: in place, it would overwrite it (issue 27)
            """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.relu = nn.ReLU()
    def forward(self, x):
        h = self.relu(self.fc(x))
        return self.relu(x) + h
"""
        ),
        Valid(  # the module is used outside the class too (`model.relu`): not every call is seen
            """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.relu = nn.ReLU()
    def forward(self, x):
        return self.relu(self.fc(x))
model = Net()
features = model.relu(inputs)
"""
        ),
        Valid(  # the sum is read again after the activation (a skip connection)
            """
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        s = self.fc(x) + x
        y = F.relu(s)
        return y + s
"""
        ),
        Valid(  # `**` keeps its result for backward (a tensor exponent): not a fresh value to overwrite
            """
import torch.nn.functional as F
from torch import nn
class Pow(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return F.relu(self.fc(x) ** self.p)
"""
        ),
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
        Valid(  # a wrapper that returns another module: its Sigmoid keeps its output for backward
            """
from torch import nn
def gated(layer):
    return nn.Sequential(layer, nn.Sigmoid())
head = nn.Sequential(gated(nn.Linear(8, 8)), nn.ReLU())
"""
        ),
        Valid(  # one of the Sequential's layers is hooked: the hook sees the output the ReLU would overwrite
            """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())
        self.body[0].register_forward_hook(self.keep)
    def forward(self, x):
        return self.body(x)
"""
        ),
        Valid(  # layers appended to a list that is not unpacked into a Sequential
            """
from torch import nn
def blocks():
    layers = []
    layers.append(nn.Linear(4, 4))
    layers.append(nn.ReLU())
    return nn.ModuleList(layers)
"""
        ),
        Valid(  # add_module on a module that is not a Sequential: the order says nothing about the forward
            """
from torch import nn
block = Block()
block.add_module("conv", nn.Conv2d(3, 8, 3))
block.add_module("relu", nn.ReLU())
"""
        ),
        Valid(  # the layer is replaced in a branch: `self.fc(x)` may return the caller's `x` (issue 25)
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self, identity=False):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        if identity:
            self.fc = nn.Identity()
    def forward(self, x):
        return F.relu(self.fc(x))
""",
            harness=_runs("Net(identity=True)", "2, 4"),
        ),
        Valid(  # replaced from outside the class, as feature extraction does
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        h = self.fc(x)
        return F.relu(h)
def features():
    model = Net()
    model.fc = nn.Dropout(0.0)
    return model
""",
            harness=_runs("features()", "2, 4"),
        ),
        Valid(  # replaced in a subclass, whose instances run the parent's forward
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return F.relu(self.fc(x))
class Features(Net):
    def __init__(self):
        super().__init__()
        self.fc = nn.Identity()
""",
            harness=_runs("Features()", "2, 4"),
        ),
        Valid(  # a forward hook keeps the layer's output, which an in-place activation would change (issue 25)
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.kept = []
        self.fc.register_forward_hook(lambda module, args, output: self.kept.append(output))
    def forward(self, x):
        return F.relu(self.fc(x))
""",
            harness=Harness(
                setup="import torch",
                then="model = Net()\nout = model(torch.randn(2, 4))\nresult = (out, model.kept)",
            ),
        ),
        Valid(  # a layer of the Sequential is replaced: the activation comes first and would overwrite the input
            """
from torch import nn
features = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
features[0] = nn.Identity()
""",
            harness=_runs("features", "2, 4"),
        ),
        Valid(  # the default set: an in-place ReLU leaves a training step's peak unchanged (reported under exact selection)
            """
from torch import nn
features = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU())
"""
        ),
        Valid(  # the default set: a forward that runs with gradients on (reported under exact selection)
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        return F.silu(self.fc(x))
"""
        ),
        Valid(  # a negative slope: in place, LeakyReLU's backward raises ("not supported")
            """
from torch import nn
mlp = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(-0.2), nn.Linear(16, 4))
"""
        ),
        Valid(  # a hook on modules met in a loop: the layer may be among them (issue 27)
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)
    def forward(self, x):
        return self.head(F.relu(self.fc(x)))
model = Net()
kept = []
for module in model.modules():
    module.register_forward_hook(lambda m, args, output: kept.append(output))
"""
        ),
        Valid(  # the hooked attribute is another name of the layer (`self.head = self.fc`)
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.head = self.fc
    def forward(self, x):
        return F.relu(self.fc(x))
model = Net()
model.head.register_forward_hook(lambda m, args, output: print(output))
"""
        ),
        Valid(  # an element of a nested Sequential replaced: the ReLU may come first
            """
from torch import nn
features = nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.ReLU()), nn.Linear(4, 2))
features[0][0] = nn.Identity()
"""
        ),
        Valid(  # `inplace=False` with a comment saying why, on the line before
            """
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn1 = nn.BatchNorm1d(4)
        # out of place: a forward hook reads the pre-activation
        self.relu1 = nn.LeakyReLU(negative_slope=0.1, inplace=False)
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(self.relu1(self.bn1(x)))
""",
            config=_EXACT,
        ),
        Valid(  # `nn.Sigmoid` keeps its output for backward: the dropout after it may not overwrite it
            """
from torch import nn
mlp = nn.Sequential(nn.Linear(8, 16), nn.Sigmoid(), nn.Dropout(0.1), nn.Linear(16, 8))
""",
            config=_EXACT,
        ),
        Valid(  # `torch.pow` with a tensor exponent keeps its result; `torch.sigmoid` keeps its output
            """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def forward(self, x):
        h = torch.pow(x, x)
        h = F.relu(h)
        g = torch.sigmoid(x)
        return h + torch.relu(g)
""",
            config=_EXACT,
        ),
        Valid(  # the input of `torch.relu` is read again; `from torch import relu`-free; dropout's result may be its input
            """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(8, 8)
    def forward(self, x):
        h = self.l1(x)
        y = torch.relu(h)
        d = F.dropout(x, 0.5, training=self.training)
        return y + h + F.relu(d)
""",
            config=_EXACT,
        ),
        Valid(  # exact selection: a call of the class in the file passes something that is not a norm for `norm_layer`
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, c, 3), norm_layer(c), nn.ReLU(), nn.Conv2d(c, c, 3))
    def forward(self, x):
        return self.body(x)
plain = Block(4, norm_layer=lambda c: Gate(c))
""",
            config=_EXACT,
        ),
        Valid(  # exact selection: a subclass's constructor may pass its own `norm_layer` through `super().__init__`
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, c, 3), norm_layer(c), nn.ReLU(), nn.Conv2d(c, c, 3))
    def forward(self, x):
        return self.body(x)
class Plain(Block):
    def __init__(self, c):
        super().__init__(c, norm_layer=lambda c: nn.Identity())
""",
            config=_EXACT,
        ),
        Valid(  # exact selection: a generic `norm_layer` the file passes no value for may be a caller's norm-and-activation layer
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c, norm_layer):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, c, 3), norm_layer(c), nn.ReLU(), nn.Conv2d(c, c, 3))
    def forward(self, x):
        return self.body(x)
""",
            config=_EXACT,
        ),
        Valid(  # exact selection: a constructor parameter not named as a norm may build anything
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c, layer):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, c, 3), layer(c), nn.ReLU(), nn.Conv2d(c, c, 3))
    def forward(self, x):
        return self.body(x)
""",
            config=_EXACT,
        ),
        Valid(  # exact selection: `x` is read again after the activation (`x + y`): its statement does not end the name
            """
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        y = self.relu(x)
        return x + y
""",
            config=_EXACT,
        ),
        Valid(  # exact selection: one of the classes the name may hold has no in-place form
            """
from torch import nn
def separable(c, smooth=False):
    Act = nn.Sigmoid if smooth else nn.ReLU
    return nn.Sequential(nn.Conv2d(c, c, 3, groups=c), nn.BatchNorm2d(c), Act(), nn.Conv2d(c, c, 1))
""",
            config=_EXACT,
        ),
        Valid(  # the augmented assignment reads the name the activation would overwrite
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
    def forward(self, x):
        x = self.conv(x)
        x += F.relu(x)
        return x
""",
            config=_EXACT,
        ),
        Valid(  # the activation itself handed on: whoever receives it may run it on a value read again
            """
from torch import nn
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    def forward(self, obs):
        return self.trunk(obs)
    def act(self, use):
        return use(self.trunk[1])
""",
            config=_EXACT,
        ),
        Valid(  # one branch binds something that returns its input: the activation would overwrite the caller's
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c, project):
        super().__init__()
        if project:
            self.shortcut = nn.Conv2d(c, c, 1)
        else:
            self.shortcut = lambda x: x
        self.relu = nn.ReLU()
    def forward(self, x):
        return self.relu(self.shortcut(x))
""",
            config=_EXACT,
        ),
        Valid(  # the layer's subclass hooks itself: the hook may keep the output the activation would overwrite
            """
from torch import nn
class Conv(nn.Conv2d):
    def __init__(self, c):
        super().__init__(c, c, 1)
        self.kept = []
        self.register_forward_hook(lambda m, i, o: self.kept.append(o))
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = Conv(c)
        self.relu = nn.ReLU()
    def forward(self, x):
        return self.relu(self.conv(x))
""",
            config=_EXACT,
        ),
        Valid(  # one ReLU module named and put into two Sequentials: it is not decided at one place
            """
from torch import nn
class Twice(nn.Module):
    def __init__(self):
        super().__init__()
        act = nn.ReLU()
        self.a = nn.Sequential(nn.Linear(3, 3), act)
        self.b = nn.Sequential(nn.Linear(3, 3), act)
""",
            config=_EXACT,
        ),
        Valid(  # the name may hold a layer that returns its input in one branch
            """
from torch import nn
def stem(c, normed):
    if normed:
        norm = nn.BatchNorm2d(c)
    else:
        norm = nn.Identity()
    relu = nn.ReLU()
    return nn.Sequential(nn.Conv2d(c, c, 1), nn.Dropout(0.1), norm, relu)
""",
            config=_EXACT,
        ),
        Valid(  # a torch layer's subclass that overrides more than `forward` may keep its output on the
            # way (here `_conv_forward` stashes it): in place would change what `self.last` holds
            """
from torch import nn
class Conv(nn.Conv2d):
    def forward(self, x):
        return super().forward(x)
    def _conv_forward(self, x, weight, bias):
        self.last = super()._conv_forward(x, weight, bias)
        return self.last
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = Conv(c, c, 1)
        self.relu = nn.ReLU()
    def forward(self, x):
        return self.relu(self.conv(x))
""",
            config=_EXACT,
        ),
        Valid(  # ... or rebinds its own `forward` to a method that keeps the output
            """
from torch import nn
class Conv(nn.Conv2d):
    def __init__(self, c_in, c_out, k):
        super().__init__(c_in, c_out, k)
        self.forward = self.keep
    def forward(self, x):
        return super().forward(x)
    def keep(self, x):
        self.last = super().forward(x)
        return self.last
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = Conv(c, c, 1)
        self.relu = nn.ReLU()
    def forward(self, x):
        return self.relu(self.conv(x))
""",
            config=_EXACT,
        ),
        Valid(  # the list is empty before the loop: on the first turn the LeakyReLU is the Sequential's first layer, on the caller's tensor
            """
from torch import nn
class Gen(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        layers = []
        for _ in range(n):
            layers += [nn.LeakyReLU(0.2), nn.Conv1d(c, c, 1)]
        self.model = nn.Sequential(*layers)
    def forward(self, x):
        return self.model(x)
""",
            config=_EXACT,
        ),
        Valid(  # the list is a parameter: a caller may pass `[]` (with `flag` false the LeakyReLU is the Sequential's first layer, on the caller's tensor)
            """
from torch import nn
def build(layers, c, flag):
    conv = nn.Conv1d(c, c, 1)
    if flag:
        layers += [conv]
    layers += [nn.LeakyReLU(0.2), nn.Conv1d(c, c, 1)]
    return nn.Sequential(*layers)
""",
            config=_EXACT,
        ),
        Valid(  # a parameter extended in a loop: what it ends with before the first turn is the caller's
            """
from torch import nn
def build(c, n, layers):
    for _ in range(n):
        layers += [nn.LeakyReLU(0.2), nn.Conv1d(c, c, 1)]
    return nn.Sequential(*layers)
""",
            config=_EXACT,
        ),
        Valid(  # on one path the list ends with a Tanh, which keeps its output for backward: the LeakyReLU may follow it
            """
from torch import nn
class Gen(nn.Module):
    def __init__(self, c, bounded):
        super().__init__()
        layers = [nn.Conv1d(4, c, 1)]
        if bounded:
            layers += [nn.Tanh()]
        layers += [nn.LeakyReLU(0.2), nn.Conv1d(c, c, 1)]
        self.model = nn.Sequential(*layers)
    def forward(self, x):
        return self.model(x)
""",
            config=_EXACT,
        ),
        Valid(  # a turn may end early (`continue`) after `kept.append(skip)` kept the value the loop leaves: in place would change the kept tensor
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv1d(c, c, 1) for _ in range(n)])
        self.first = nn.Conv1d(c, c, 1)
    def forward(self, x, flags):
        kept = []
        skip = self.first(x)
        for conv, flag in zip(self.convs, flags):
            kept.append(skip)
            if flag:
                continue
            skip = conv(x) + skip
        return F.relu(skip), kept
""",
            config=_EXACT,
        ),
        Valid(  # the body hands the value it bound on to a list after binding it: the list holds what the activation would overwrite
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv1d(c, c, 1) for _ in range(n)])
    def forward(self, x):
        kept = []
        skip = 0
        for conv in self.convs:
            skip = conv(x) + skip
            kept.append(skip)
        out = F.relu(skip)
        return out, kept
""",
            config=_EXACT,
        ),
        Valid(  # with no turn of the loop the name still holds the caller's tensor
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv1d(c, c, 1) for _ in range(n)])
    def forward(self, x):
        skip = x
        for conv in self.convs:
            skip = conv(x) + skip
        return F.relu(skip)
""",
            config=_EXACT,
        ),
        Valid(  # a module-level name read again by a function of the file: in place would change what it sees
            """
import torch
d = torch.randn(6, requires_grad=True)
margin = 1.0 - d
loss = torch.nn.ReLU()(margin).mean()
def report():
    return margin.min()
""",
            config=_EXACT,
        ),
        Valid(  # the name is bound again in the loop to a module whose forward returns the conv's output beside the ReLU's
            """
from torch import nn
class Taps(nn.Module):
    def forward(self, x):
        a = self.conv(x)
        return self.relu(a), a
class Gen(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        main = nn.Sequential()
        for i in range(n):
            main = Taps()
            main.add_module("conv", nn.Conv2d(c, c, 3, padding=1))
            main.add_module("relu", nn.ReLU())
        self.main = main
    def forward(self, x):
        return self.main(x)
""",
            config=_EXACT,
        ),
        Valid(  # another object's `conv1` may be replaced by an identity: then the activation would overwrite the caller's tensor
            """
import torch.nn.functional as F
from torch import nn
def strip(model):
    model.conv1 = nn.Identity()
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3)
    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        return x
""",
            config=_EXACT,
        ),
        Valid(  # a name built from "conv" may be `conv1`, and the value is no layer of a fresh output
            """
import torch.nn.functional as F
from torch import nn
def strip(model, i):
    setattr(model, "conv" + str(i), nn.Identity())
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3)
    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        return x
""",
            config=_EXACT,
        ),
        Valid(  # `self.weight` is no tensor: its `mm` may keep what it returns
            """
import torch
import torch.nn.functional as F
from torch import nn
class Keep:
    def mm(self, x):
        self.last = x * 2
        return self.last
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = Keep()
    def forward(self, x):
        return F.relu(self.weight.mm(x))
""",
            config=_EXACT,
        ),
        Valid(  # the name is bound again after the Sequential, to a list of its layers the caller may run one by one
            """
from torch import nn
def head(c, n):
    mlp = []
    for _ in range(n):
        mlp.append(nn.Conv2d(c, c, 3, padding=1))
        mlp.append(nn.ReLU())
    mlp = nn.Sequential(*mlp)
    mlp = list(mlp.children())
    return mlp
""",
            config=_EXACT,
        ),
        Valid(  # the name is bound again at the end of each turn: the next turn adds to the other container
            """
from torch import nn
class Outputs(nn.Sequential):
    def forward(self, x):
        return [x := layer(x) for layer in self]
def stages(c, n):
    built = []
    stage = nn.Sequential()
    for i in range(n):
        stage.add_module(f"conv{i}", nn.Conv2d(c, c, 1))
        stage.add_module(f"act{i}", nn.ReLU())
        built.append(stage)
        stage = Outputs()
    return built
""",
            config=_EXACT,
        ),
        Valid(  # bound again in a branch inside the loop: later turns may add to another container
            """
from torch import nn
class Outputs(nn.Sequential):
    def forward(self, x):
        return [x := layer(x) for layer in self]
def stack(c, n):
    net = nn.Sequential()
    for i in range(n):
        if i == n // 2:
            net = Outputs()
        net.add_module(f"conv{i}", nn.Conv2d(c, c, 1))
        net.add_module(f"act{i}", nn.ReLU())
    return net
""",
            config=_EXACT,
        ),
        Valid(  # bound again in a branch before the layers are added: it may be another container
            """
from torch import nn
class Outputs(nn.Sequential):
    def forward(self, x):
        return [x := layer(x) for layer in self]
def pair(c, keep):
    net = nn.Sequential()
    if keep:
        net = Outputs()
    net.add_module("conv", nn.Conv2d(c, c, 1))
    net.add_module("act", nn.ReLU())
    return net
""",
            config=_EXACT,
        ),
        Valid(  # bound again by a walrus in the loop's test
            """
from torch import nn
class Outputs(nn.Sequential):
    def forward(self, x):
        return [x := layer(x) for layer in self]
def grow(c, n):
    net = nn.Sequential()
    while (net := Outputs()) is not None and n:
        net.add_module(f"conv{n}", nn.Conv2d(c, c, 1))
        net.add_module(f"act{n}", nn.ReLU())
        n -= 1
    return net
""",
            config=_EXACT,
        ),
        Valid(  # the same key every turn: the next turn's conv replaces this one in place, after which the
            # activation added here follows the activation of the turn before, whose output it would overwrite
            """
from torch import nn
def tower(c, n):
    net = nn.Sequential()
    for i in range(n):
        net.add_module("conv", nn.Conv2d(c, c, 1))
        net.add_module(f"act{i}", nn.ReLU())
    return net
""",
            config=_EXACT,
        ),
        Valid(  # the file reads its module-level names by reflection: `probs` may not be the last reader
            """
import torch
import torch.nn.functional as F
a = torch.randn(2, 3)
b = torch.randn(3, 3)
logits = a @ b
probs = F.relu(logits)
print(globals()["logits"].sum())
""",
            config=_EXACT,
        ),
        Valid(  # a slice of the Sequential starts at the activation: in place, it would overwrite its caller's input
            """
from torch import nn
def head(c, n):
    mlp = []
    for _ in range(n):
        mlp.append(nn.Conv2d(c, c, 1))
        mlp.append(nn.ReLU())
    mlp = nn.Sequential(*mlp)
    return mlp, mlp[1:]
""",
            config=_EXACT,
        ),
        Valid(  # the same with the list and the Sequential under different names, one layer run alone
            """
from torch import nn
def head(c, n, x):
    layers = []
    for _ in range(n):
        layers.append(nn.Conv2d(c, c, 1))
        layers.append(nn.ReLU())
    net = nn.Sequential(*layers)
    return net, net[1](x)
""",
            config=_EXACT,
        ),
        Valid(  # the f-string's escape spells `conv`: its source text is no literal prefix of the name it binds
            """
import torch.nn.functional as F
from torch import nn
def replace(model, i):
    setattr(model, f"\\x63onv{i}", nn.Identity())
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 1)
    def forward(self, x):
        x = self.conv1(x)
        return F.relu(x)
""",
            config=_EXACT,
        ),
        Valid(  # `**options` may hand `torch.cat` an `out=` buffer, which the caller keeps
            """
import torch
import torch.nn.functional as F
def join(a, b, **options):
    return F.relu(torch.cat([a, b], **options))
""",
            config=_EXACT,
        ),
        Valid(  # `norm_layer` through forwarded `**kwargs`: a caller in another file may pass `norm_layer=nn.Identity`, which the file does not see (the forwarded-keyword fact was unsound across files)
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c, norm_layer=nn.BatchNorm2d, **kwargs):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), norm_layer(c), nn.ReLU())
    def forward(self, x):
        return self.body(x) + x
class Net(nn.Module):
    def __init__(self, c, **kwargs):
        super().__init__()
        self.a = Block(c, **kwargs)
    def forward(self, x):
        return self.a(x)
def build(**kwargs):
    return Net(4, **kwargs)
""",
            config=_EXACT,
        ),
        Valid(  # `self.__dict__["norm"] = ...` may replace the `None` placeholder with a layer that keeps its input: the placeholder fact is unknown
            """
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c, use_in):
        super().__init__()
        self.norm = None
        if use_in:
            self.norm = nn.InstanceNorm2d(c)
        else:
            self.__dict__["norm"] = lambda t: t
    def forward(self, x):
        return F.relu(self.norm(x))
""",
            config=_EXACT,
        ),
        Valid(  # `vars(self)[...]` may replace the `None` placeholder with a layer that keeps its input: the placeholder fact is unknown
            """
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c, use_in):
        super().__init__()
        self.norm = None
        if use_in:
            self.norm = nn.InstanceNorm2d(c)
        else:
            vars(self)["norm"] = nn.Identity()
    def forward(self, x):
        return F.relu(self.norm(x))
""",
            config=_EXACT,
        ),
        Valid(  # `setattr` with a computed name may replace the `None` placeholder with a layer that keeps its input: the placeholder fact is unknown
            """
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c, use_in):
        super().__init__()
        self.norm = None
        if use_in:
            self.norm = nn.InstanceNorm2d(c)
        else:
            setattr(self, "no" + "rm", nn.Identity())
    def forward(self, x):
        return F.relu(self.norm(x))
""",
            config=_EXACT,
        ),
        Valid(  # a function's own `import ... as F` may make `F.relu` the class's `.relu`: counted as a use
            """
import torch.nn.functional as F
from torch import nn
class ConvBnAct(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.bn = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()
    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))
def probe(x):
    import blocks as F
    return x, F.relu(x)
""",
            config=_EXACT,
        ),
        Valid(  # a star import after `import torch.nn.functional as F` may rebind `F`: `F.relu` counted as a use
            """
import torch.nn.functional as F
from helpers import *
from torch import nn
class ConvBnAct(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.bn = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()
    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))
def probe(x):
    return F.relu(x) + x
""",
            config=_EXACT,
        ),
        Valid(  # `globals()["F"] = ...` may rebind `F` to an instance: `F.relu` counted as a use
            """
import torch.nn.functional as F
from torch import nn
class ConvBnAct(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.bn = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()
    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))
globals()["F"] = ConvBnAct(4)
def probe(x):
    return F.relu(x) + x
""",
            config=_EXACT,
        ),
        Valid(  # a hook on one of the listed layers, reached by the name it was registered under, sees the output the ReLU would overwrite
            """
import torch.nn.functional as F
from torch import nn
kept = []
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.fcs = []
        for k in range(n):
            fc = nn.Linear(c, c)
            self.add_module("fc{}".format(k + 1), fc)
            self.fcs.append(fc)
        self.fc1.register_forward_hook(lambda m, i, o: kept.append(o))
    def forward(self, x):
        for layer in self.fcs:
            x = F.relu(layer(x))
        return x
""",
            config=_EXACT,
        ),
        Valid(  # the layers are registered under names built from any text: one of them may be `fcs` itself
            """
import torch.nn.functional as F
from torch import nn
class Head(nn.Module):
    def __init__(self, c, tags):
        super().__init__()
        self.fcs = []
        for tag in tags:
            fc = nn.Linear(c, c)
            self.add_module("fc" + tag, fc)
            self.fcs.append(fc)
    def forward(self, x):
        for layer in self.fcs:
            x = F.relu(layer(x))
        return x
""",
            config=_EXACT,
        ),
        Valid(  # the loop's body binds the name again before the call: which layer it holds there is not the list's
            """
import torch.nn.functional as F
from torch import nn
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.fcs = nn.ModuleList([nn.Linear(c, c) for _ in range(n)])
        self.norms = nn.ModuleList([nn.LayerNorm(c) for _ in range(n)])
    def forward(self, x, wrap):
        for layer in self.norms:
            x = layer(x)
        for layer in self.fcs:
            layer = wrap(layer)
            x = F.relu(layer(x))
        return x
""",
            config=_EXACT,
        ),
        Valid(  # every child is reached without its name and a part of it run: the norm's output is returned beside the ReLU's
            """
from torch import nn
class Branch(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.Conv2d(c, c, 1), nn.GroupNorm(2, c), nn.ReLU())
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.branch = Branch(c)
    def forward(self, x):
        outs = [self.branch(x)]
        for child in self.children():
            outs.append(child[:2](x))
        return outs
""",
            config=_EXACT,
        ),
        Valid(  # the class's `forward` runs its norm alone and keeps that output: the ReLU would overwrite it
            """
import torch
from torch import nn
class Pool(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.Conv2d(c, c, 1), nn.GroupNorm(2, c), nn.ReLU())
    def forward(self, x):
        h = self[1](self[0](x))
        return torch.cat([super().forward(x), h], 1)
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pool = Pool(c)
    def forward(self, x):
        return self.pool(x)
""",
            config=_EXACT,
        ),
        Valid(  # `getattr(self, name)` with a name a method builds from any text: it may be the container of the instances, run apart
            """
from torch import nn
class Branch(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.Conv2d(c, c, 1), nn.GroupNorm(2, c), nn.ReLU())
class Net(nn.Module):
    def __init__(self, c, n, tag):
        super().__init__()
        self.tag = tag
        branches = []
        for _ in range(n):
            branches.append(Branch(c))
        self.branches = nn.ModuleList(branches)
    def _name(self):
        return "branch{}".format(self.tag)
    def forward(self, x):
        name = self._name()
        return getattr(self, name)[0][:2](x)
""",
            config=_EXACT,
        ),
        Valid(  # the constructor puts a Sigmoid into the list before the ReLU: the ReLU follows it, and the Sigmoid keeps its output
            """
from torch import nn
class Branch(nn.Sequential):
    def __init__(self, c):
        modules = [nn.Conv2d(c, c, 3, padding=1), nn.GroupNorm(2, c), nn.ReLU()]
        modules.insert(2, nn.Sigmoid())
        super().__init__(*modules)
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.branch = Branch(c)
    def forward(self, x):
        return self.branch(x)
""",
            config=_EXACT,
        ),
        Valid(  # the instances' container runs each instance's layers one by one, keeping every output: the ReLU would overwrite the norm's
            """
from torch import nn
class Branch(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.Conv2d(c, c, 3, padding=1), nn.GroupNorm(2, c), nn.ReLU())
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        branches = []
        for _ in range(n):
            branches.append(Branch(c))
        self.branches = nn.ModuleList(branches)
    def forward(self, x):
        kept = []
        for branch in self.branches:
            for layer in branch:
                x = layer(x)
                kept.append(x)
        return kept
""",
            config=_EXACT,
        ),
        Valid(  # the list of instances is kept as well as handed to the container: what else reaches an instance is not followed
            """
from torch import nn
class Branch(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.Conv2d(c, c, 3, padding=1), nn.GroupNorm(2, c), nn.ReLU())
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        branches = []
        for _ in range(n):
            branches.append(Branch(c))
        self.branches = nn.ModuleList(branches)
        self.first = branches[0][:2]
    def forward(self, x):
        return [branch(x) for branch in self.branches], self.first(x)
""",
            config=_EXACT,
        ),
        Valid(  # the statement between the appends extends the list itself: the ReLU follows the Sigmoid, which keeps its output
            """
from torch import nn
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        subnet = []
        for _ in range(n):
            subnet.append(nn.Conv2d(c, c, 3, padding=1))
            subnet += [nn.Sigmoid()]
            subnet.append(nn.ReLU())
        self.subnet = nn.Sequential(*subnet)
    def forward(self, x):
        return self.subnet(x)
""",
            config=_EXACT,
        ),
        Valid(  # a call between the appends may reach the container through another name: what it ends with there is not known
            """
from torch import nn
def widen(width):
    return width * 2
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        body = nn.Sequential()
        for i in range(n):
            body.add_module(f"conv{i}", nn.Conv2d(c, c, 3, padding=1))
            c = widen(c)
            body.add_module(f"relu{i}", nn.ReLU())
        self.body = body
    def forward(self, x):
        return self.body(x)
""",
            config=_EXACT,
        ),
        Valid(  # an augmented assignment between the appends extends the list through another name: the ReLU follows the Sigmoid, which keeps its output
            """
from torch import nn
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        layers = []
        same = layers
        gate = nn.Sigmoid()
        for _ in range(n):
            layers.append(nn.Conv2d(c, c, 1))
            same += [gate]
            layers.append(nn.ReLU())
        self.layers = nn.Sequential(*layers)
    def forward(self, x):
        return self.layers(x)
""",
            config=_EXACT,
        ),
        Valid(  # the comprehension appends its own `fc`, not the one the constructor named: what the list holds there is not known
            """
import torch.nn.functional as F
from torch import nn
class Head(nn.Module):
    def __init__(self, c, more):
        super().__init__()
        self.fcs = []
        fc = nn.Linear(c, c)
        self.add_module("fc0", fc)
        self.fcs.append(fc)
        [self.fcs.append(fc) for fc in more]
    def forward(self, x):
        for fc in self.fcs:
            x = F.relu(fc(x))
        return x
""",
            config=_EXACT,
        ),
        Valid(  # the name handed to `getattr` is the nested function's parameter, not the one the method built: which attribute it reads is not known
            """
from torch import nn
class Stage(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.Conv2d(c, c, 1), nn.GroupNorm(2, c), nn.ReLU())
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        stages = []
        for _ in range(n):
            stages.append(Stage(c))
        self.stages = nn.ModuleList(stages)
    def _label(self, i):
        return "stage{}".format(i + 1)
    def forward(self, x, which="stages"):
        label = self._label(0)
        def pick(label):
            return getattr(self, label)[0][2](x)
        return x, pick(which)
""",
            config=_EXACT,
        ),
        Valid(  # the class's `forward` reaches the ReLU through `super()` and runs it on the block's input: in place it would overwrite what the conv keeps for its backward
            """
from torch import nn
class Block(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.Conv2d(c, c, 1), nn.BatchNorm2d(c), nn.ReLU())
    def forward(self, x):
        return super().forward(x) + super().__getitem__(2)(x)
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = Block(c)
    def forward(self, x):
        return self.block(x)
""",
            config=_EXACT,
        ),
    ]

    INVALID = [
        Invalid(  # a view of a Linear's fresh output, bound on the line before: nothing else holds the output, the view keeps nothing (DrQA's attention; issue 27, the twenty-second part)
            """
import torch.nn.functional as F
from torch import nn
class Match(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)
    def forward(self, x):
        h = self.proj(x.view(-1, x.size(2))).view(x.size())
        h = F.relu(h)
        return h
""",
            line=9,
            column=13,
            config=_EXACT,
            message="on the fresh output of `self.proj`, reshaped by `.view`",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Match(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 6)
    def forward(self, x):
        h = self.proj(x.view(-1, x.size(2))).view(x.size())
        h = F.relu(h, inplace=True)
        return h
""",
            harness=_runs("Match()", "2, 3, 6"),
        ),
        Invalid(  # einsum of two operands is a product, a new tensor its backward never reads (it keeps the operands)
            """
import torch
import torch.nn.functional as F
from torch import nn
class Attend(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.randn(3, 4))
    def forward(self, x):
        return F.leaky_relu(torch.einsum("bnc,hc->bnh", x, self.a), 0.2)
""",
            line=9,
            column=16,
            config=_EXACT,
            message="on the fresh result of `torch.einsum`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Attend(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.randn(3, 4))
    def forward(self, x):
        return F.leaky_relu(torch.einsum("bnc,hc->bnh", x, self.a), 0.2, inplace=True)
""",
            harness=_runs("Attend()", "2, 5, 4"),
        ),
        Invalid(  # `torch.addcmul`'s result is a new tensor its backward never reads (it keeps the two factors): an activation may overwrite it (edm's UNet block; issue 27, the twenty-second part)
            """
import torch
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.GroupNorm(2, 4)
        self.scale = nn.Parameter(torch.randn(4, 1, 1))
        self.shift = nn.Parameter(torch.randn(4, 1, 1))
    def forward(self, x):
        return F.silu(torch.addcmul(self.shift, self.norm(x), self.scale + 1))
""",
            line=11,
            column=16,
            config=_EXACT,
            message="on the fresh result of `torch.addcmul`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.GroupNorm(2, 4)
        self.scale = nn.Parameter(torch.randn(4, 1, 1))
        self.shift = nn.Parameter(torch.randn(4, 1, 1))
    def forward(self, x):
        return F.silu(torch.addcmul(self.shift, self.norm(x), self.scale + 1), inplace=True)
""",
            harness=_runs("Block()", "2, 4, 3, 3"),
        ),
        Invalid(  # a class of the file whose `forward` returns a matrix product it adds its bias to in place (`add_` keeps nothing of it): its output is as fresh as `nn.Linear`'s (edm's `Linear`; issue 27, the twenty-second part)
            """
import torch
import torch.nn.functional as F
from torch import nn
class Dense(nn.Module):
    def __init__(self, n, m, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(m, n))
        self.bias = nn.Parameter(torch.randn(m)) if bias else None
    def forward(self, x):
        x = x @ self.weight.to(x.dtype).t()
        if self.bias is not None:
            x = x.add_(self.bias.to(x.dtype))
        return x
class Mapping(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Dense(4, 8)
    def forward(self, x):
        return F.silu(self.layer(x))
""",
            line=19,
            column=16,
            config=_EXACT,
            message="on the fresh output of `self.layer`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Dense(nn.Module):
    def __init__(self, n, m, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(m, n))
        self.bias = nn.Parameter(torch.randn(m)) if bias else None
    def forward(self, x):
        x = x @ self.weight.to(x.dtype).t()
        if self.bias is not None:
            x = x.add_(self.bias.to(x.dtype))
        return x
class Mapping(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = Dense(4, 8)
    def forward(self, x):
        return F.silu(self.layer(x), inplace=True)
""",
            harness=_runs("Mapping()", "3, 4"),
        ),
        Invalid(  # bound before an `if` / `elif` chain whose tests do not read it, activated in an `elif` branch that ends its life: the branches before it did not run (SCAN's attention; issue 27, the twenty-first part)
            """
import torch
from torch import nn
def attend(a, b, mode):
    attn = torch.bmm(a, b)
    if mode == "softmax":
        attn = torch.softmax(attn, 2)
    elif mode == "clipped":
        attn = nn.LeakyReLU(0.1)(attn)
    return attn
""",
            line=8,
            column=16,
            config=_EXACT,
            message="on the fresh result of `torch.bmm`",
            fixed="""
import torch
from torch import nn
def attend(a, b, mode):
    attn = torch.bmm(a, b)
    if mode == "softmax":
        attn = torch.softmax(attn, 2)
    elif mode == "clipped":
        attn = nn.LeakyReLU(0.1, inplace=True)(attn)
    return attn
""",
            harness=Harness(setup="import torch\n", then="\na = torch.randn(2, 3, 4, requires_grad=True)\nb = torch.randn(2, 4, 5, requires_grad=True)\nout = attend(a, b, 'clipped')\nout.sum().backward()\nresult = (out, a, b, a.grad, b.grad)\n"),
        ),
        Invalid(  # bound under `if self.embed:`, activated under `elif self.embed:`: the flag is set only by the constructor, so the branch that bound the norm's output ran (open-reid's heads; issue 27, the twenty-first part)
            """
import torch.nn.functional as F
from torch import nn
class Head(nn.Module):
    def __init__(self, d, n, embed=True, norm=False):
        super().__init__()
        self.embed = embed
        self.norm = norm
        if self.embed:
            self.fc = nn.Linear(d, n)
            self.bn = nn.BatchNorm1d(n)
    def forward(self, x):
        x = x.flatten(1)
        if self.embed:
            x = self.fc(x)
            x = self.bn(x)
        if self.norm:
            x = F.normalize(x)
        elif self.embed:
            x = F.relu(x)
        return x
""",
            line=19,
            column=17,
            config=_EXACT,
            message="on the fresh output of `self.bn`",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Head(nn.Module):
    def __init__(self, d, n, embed=True, norm=False):
        super().__init__()
        self.embed = embed
        self.norm = norm
        if self.embed:
            self.fc = nn.Linear(d, n)
            self.bn = nn.BatchNorm1d(n)
    def forward(self, x):
        x = x.flatten(1)
        if self.embed:
            x = self.fc(x)
            x = self.bn(x)
        if self.norm:
            x = F.normalize(x)
        elif self.embed:
            x = F.relu(x, inplace=True)
        return x
""",
            harness=_runs("Head(8, 6)", "4, 8"),
        ),
        Invalid(  # a stage a helper method fills with blocks whose `forward` returns a fresh sum: its output is the last block's, or, with no block, the stem's fresh output (fast-autoaugment's Shake-Shake; issue 27, the twenty-first part)
            """
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return self.conv(x) + x
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.stage = self._stage(c, n)
    def forward(self, x):
        h = self.stem(x)
        h = self.stage(h)
        h = F.relu(h)
        return h
    def _stage(self, c, n):
        layers = []
        for _ in range(n):
            layers.append(Block(c))
        return nn.Sequential(*layers)
""",
            line=17,
            column=13,
            config=_EXACT,
            message="on the fresh output of `self.stage`",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return self.conv(x) + x
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.stage = self._stage(c, n)
    def forward(self, x):
        h = self.stem(x)
        h = self.stage(h)
        h = F.relu(h, inplace=True)
        return h
    def _stage(self, c, n):
        layers = []
        for _ in range(n):
            layers.append(Block(c))
        return nn.Sequential(*layers)
""",
            harness=_runs("Net(4, 2)", "2, 3, 8, 8"),
        ),
        Invalid(  # the same stage built empty: it returns the stem's output, which nothing else holds
            """
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return self.conv(x) + x
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.stage = self._stage(c, n)
    def forward(self, x):
        h = self.stem(x)
        h = self.stage(h)
        h = F.relu(h)
        return h
    def _stage(self, c, n):
        layers = []
        for _ in range(n):
            layers.append(Block(c))
        return nn.Sequential(*layers)
""",
            line=17,
            column=13,
            config=_EXACT,
            message="on the fresh output of `self.stage`",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return self.conv(x) + x
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.stage = self._stage(c, n)
    def forward(self, x):
        h = self.stem(x)
        h = self.stage(h)
        h = F.relu(h, inplace=True)
        return h
    def _stage(self, c, n):
        layers = []
        for _ in range(n):
            layers.append(Block(c))
        return nn.Sequential(*layers)
""",
            harness=_runs("Net(4, 0)", "2, 3, 8, 8"),
        ),
        Invalid(  # layers kept in a plain OrderedDict the constructor fills with convolutions and nothing else changes: an entry's call is a fresh conv output (monodepth2's PoseDecoder; issue 27, the twentieth part)
            """
from collections import OrderedDict
import torch
from torch import nn
class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.convs = OrderedDict()
        self.convs["squeeze"] = nn.Conv2d(c, 4, 1)
        self.convs[("out", 0)] = nn.Conv2d(8, 4, 3, padding=1)
        self.relu = nn.ReLU()
        self.net = nn.ModuleList(list(self.convs.values()))
    def forward(self, a, b):
        h = torch.cat([self.relu(self.convs["squeeze"](f)) for f in (a, b)], 1)
        h = self.convs[("out", 0)](h)
        return self.relu(h)
""",
            line=10,
            column=21,
            config=_EXACT,
            message="`self.relu = nn.ReLU(...)` is only called on fresh values",
            fixed="""
from collections import OrderedDict
import torch
from torch import nn
class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.convs = OrderedDict()
        self.convs["squeeze"] = nn.Conv2d(c, 4, 1)
        self.convs[("out", 0)] = nn.Conv2d(8, 4, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)
        self.net = nn.ModuleList(list(self.convs.values()))
    def forward(self, a, b):
        h = torch.cat([self.relu(self.convs["squeeze"](f)) for f in (a, b)], 1)
        h = self.convs[("out", 0)](h)
        return self.relu(h)
""",
            harness=_runs("Decoder(4)", "2, 4, 8, 8").__class__(setup="import torch\n", then="\nmodel = Decoder(4)\na = torch.randn(2, 4, 8, 8, requires_grad=True)\nb = torch.randn(2, 4, 8, 8, requires_grad=True)\nout = model(a, b)\nout.sum().backward()\nresult = (out, a, b, a.grad, b.grad, [p.grad for p in model.parameters()])\n"),
        ),
        Invalid(  # a hinge loss binds the ReLU in one branch, a loss in another: the two-argument call raises on a ReLU, so only the call on the fresh sum runs it (STTN's AdversarialLoss; issue 27, the twentieth part)
            """
from torch import nn
class Adversarial(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        if kind == "hinge":
            self.criterion = nn.ReLU()
        else:
            self.criterion = nn.MSELoss()
    def forward(self, outputs, labels=None):
        if self.kind == "hinge":
            return self.criterion(1 + outputs).mean()
        return self.criterion(outputs, labels)
""",
            line=7,
            column=30,
            config=_EXACT,
            message="`self.criterion = nn.ReLU(...)` is only called on fresh values",
            fixed="""
from torch import nn
class Adversarial(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        if kind == "hinge":
            self.criterion = nn.ReLU(inplace=True)
        else:
            self.criterion = nn.MSELoss()
    def forward(self, outputs, labels=None):
        if self.kind == "hinge":
            return self.criterion(1 + outputs).mean()
        return self.criterion(outputs, labels)
""",
            harness=_runs("Adversarial('hinge')", "2, 3"),
        ),
        Invalid(  # torchmeta's MetaSequential and MetaLinear subclass nn.Sequential and nn.Linear: the Sequential facts hold of them (pytorch-maml; issue 27, the twentieth part)
            """
from collections import OrderedDict
from torch import nn
from torchmeta.modules import MetaLinear, MetaSequential
class Mlp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.features = MetaSequential(OrderedDict([("linear", MetaLinear(c, c)), ("relu", nn.ReLU())]))
    def forward(self, x, params=None):
        return self.features(x, params=params)
""",
            line=7,
            column=92,
            config=_EXACT,
            message="`nn.ReLU` after `nn.Linear`",
            fixed="""
from collections import OrderedDict
from torch import nn
from torchmeta.modules import MetaLinear, MetaSequential
class Mlp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.features = MetaSequential(OrderedDict([("linear", MetaLinear(c, c)), ("relu", nn.ReLU(inplace=True))]))
    def forward(self, x, params=None):
        return self.features(x, params=params)
""",
            harness=_runs("Mlp(4)", "2, 4", setup=_TORCHMETA),
        ),
        Invalid(  # the Tensor-method form `h.relu()` on a fresh Linear output: reported where `torch.relu(h)` would be, fixed to `.relu_()` (the annotated transformer's feed-forward; issue 27, the twenty-first part)
            """
from torch import nn
class FeedForward(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.up = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, d)
    def forward(self, x):
        return self.down(self.up(x).relu())
""",
            line=8,
            column=26,
            config=_EXACT,
            message="`.relu()` on the fresh output of `self.up` can run in place: `.relu_()`",
            fixed="""
from torch import nn
class FeedForward(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.up = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, d)
    def forward(self, x):
        return self.down(self.up(x).relu_())
""",
            harness=_runs("FeedForward(4, 8)", "2, 4"),
        ),
        Invalid(  # default set: `h.relu()` in a forward-only pass, on a name the line before binds to a fresh conv output
            """
import torch
from torch import nn
class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
    @torch.no_grad()
    def forward(self, x):
        h = self.conv(x)
        h = h.relu()
        return h.mean()
""",
            line=10,
            column=13,
            message="saves up to one activation of this size in this forward-only pass",
            fixed="""
import torch
from torch import nn
class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
    @torch.no_grad()
    def forward(self, x):
        h = self.conv(x)
        h = h.relu_()
        return h.mean()
""",
            harness=Harness(
                setup="import torch\n",
                then="model = Probe()\nx = torch.randn(2, 3, 6, 6)\nresult = (model(x), x)\n",
            ),
        ),
        Invalid(  # an activation attribute chosen by a conditional expression, one branch `nn.Identity`, inside a `try` whose handler falls back to `nn.Identity` (YOLOP's Conv; issue 27, the twenty-first part)
            """
from torch import nn
class Conv(nn.Module):
    def __init__(self, c, act=True):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c)
        try:
            self.act = nn.Hardswish() if act else nn.Identity()
        except AttributeError:
            self.act = nn.Identity()
    def forward(self, x):
        return self.act(self.bn(self.conv(x)))
    def fused(self, x):
        return self.act(self.conv(x))
""",
            line=8,
            column=24,
            config=_EXACT,
            message="`self.act = nn.Hardswish(...)` is only called on fresh values",
            fixed="""
from torch import nn
class Conv(nn.Module):
    def __init__(self, c, act=True):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c)
        try:
            self.act = nn.Hardswish(inplace=True) if act else nn.Identity()
        except AttributeError:
            self.act = nn.Identity()
    def forward(self, x):
        return self.act(self.bn(self.conv(x)))
    def fused(self, x):
        return self.act(self.conv(x))
""",
            harness=_runs("Conv(4)", "2, 4, 6, 6"),
        ),
        Invalid(  # a ModuleList built from a list plus a comprehension whose element is a conditional expression of two Linears: every element a Linear (nerf's pts_linears; issue 27, the twenty-first part)
            """
import torch.nn.functional as F
from torch import nn
class Field(nn.Module):
    def __init__(self, d, w, depth, skips):
        super().__init__()
        self.skips = skips
        self.linears = nn.ModuleList([nn.Linear(d, w)] + [nn.Linear(w, w) if i not in skips else nn.Linear(w + d, w) for i in range(depth - 1)])
    def forward(self, x):
        h = x
        for i in range(len(self.linears)):
            h = self.linears[i](h)
            h = F.relu(h)
        return h
""",
            line=12,
            column=17,
            config=_EXACT,
            message="`F.relu` on the fresh output of a layer of `self.linears`",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Field(nn.Module):
    def __init__(self, d, w, depth, skips):
        super().__init__()
        self.skips = skips
        self.linears = nn.ModuleList([nn.Linear(d, w)] + [nn.Linear(w, w) if i not in skips else nn.Linear(w + d, w) for i in range(depth - 1)])
    def forward(self, x):
        h = x
        for i in range(len(self.linears)):
            h = self.linears[i](h)
            h = F.relu(h, inplace=True)
        return h
""",
            harness=_runs("Field(4, 4, 3, [])", "2, 4"),
        ),
        Invalid(  # `self.norm = None`, then a norm in a branch: wherever `self.norm(out)` runs it is the norm, so either binding of `out` is fresh (deep-person-reid's OSBlock; issue 27, the nineteenth part)
            """
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c, use_in):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.norm = None
        if use_in:
            self.norm = nn.InstanceNorm2d(c, affine=True)
    def forward(self, x):
        out = self.conv(x) + x
        if self.norm is not None:
            out = self.norm(out)
        return F.relu(out)
""",
            line=14,
            column=16,
            config=_EXACT,
            message="the fresh output of `self.norm` or a fresh sum",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c, use_in):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.norm = None
        if use_in:
            self.norm = nn.InstanceNorm2d(c, affine=True)
    def forward(self, x):
        out = self.conv(x) + x
        if self.norm is not None:
            out = self.norm(out)
        return F.relu(out, inplace=True)
""",
            harness=_runs("Block(4, True)", "2, 4, 8, 8"),
        ),
        Invalid(  # `F.relu` in another class is torch's function, not a `.relu` module of an instance: `self.relu` is still only called on the norm's output (deep-person-reid's OSNet-AIN; issue 27, the nineteenth part)
            """
import torch.nn.functional as F
from torch import nn
class ConvBnRelu(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.bn = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()
    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return self.relu(x)
class Residual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = ConvBnRelu(c)
    def forward(self, x):
        h = self.body(x)
        return F.relu(h) + h
""",
            line=8,
            column=21,
            config=_EXACT,
            message="`self.relu = nn.ReLU(...)` is only called on fresh values",
            fixed="""
import torch.nn.functional as F
from torch import nn
class ConvBnRelu(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.bn = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return self.relu(x)
class Residual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = ConvBnRelu(c)
    def forward(self, x):
        h = self.body(x)
        return F.relu(h) + h
""",
            harness=_runs("Residual(4)", "2, 4, 8, 8"),
        ),
        Invalid(  # `self.tail` is a class that is an `nn.Sequential` and nothing more, built with `relu=False`: its constructor adds the norm last, so its call returns the norm's fresh output (deeplab-pytorch's bottleneck; issue 27, the eighteenth part)
            """
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.Tanh())
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tail = ConvBn(c, False)
    def forward(self, x):
        h = self.tail(x)
        h += x
        return F.relu(h)
""",
            line=17,
            column=16,
            config=_EXACT,
            message="the fresh output of `self.tail`",
            fixed="""
from torch import nn
import torch.nn.functional as F
class ConvBn(nn.Sequential):
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.Tanh())
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tail = ConvBn(c, False)
    def forward(self, x):
        h = self.tail(x)
        h += x
        return F.relu(h, inplace=True)
""",
            harness=_runs("Block(4)", "2, 4, 8, 8"),
        ),
        Invalid(  # `self.bn` is bound once in the constructor and listed once in its Sequential, named nowhere else: its output there is the Sequential's own (DGCNN's `self.bn1`; issue 27, the eighteenth part)
            """
from torch import nn
class Edge(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        self.body = nn.Sequential(nn.Conv2d(c, c, 1), self.bn, nn.LeakyReLU(0.2), nn.Conv2d(c, c, 1))
    def forward(self, x):
        return self.body(x)
""",
            line=6,
            column=64,
            message="after `self.bn` (an `nn.BatchNorm2d`)",
            fixed="""
from torch import nn
class Edge(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bn = nn.BatchNorm2d(c)
        self.body = nn.Sequential(nn.Conv2d(c, c, 1), self.bn, nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(c, c, 1))
    def forward(self, x):
        return self.body(x)
""",
            harness=_runs("Edge(4)", "2, 4, 8, 8"),
        ),
        Invalid(  # a class that is an `nn.Sequential` and nothing more adds its layers by `self.add_module`: the ReLU follows the norm (deeplab-pytorch's `_ConvBnReLU`; issue 27, the eighteenth part)
            """
from torch import nn
class ConvBnReLU(nn.Sequential):
    \"\"\"Conv, norm and an optional ReLU.\"\"\"
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = ConvBnReLU(c)
    def forward(self, x):
        return self.block(x)
""",
            line=9,
            column=37,
            config=_EXACT,
            message="`nn.ReLU` after `nn.BatchNorm2d`",
            fixed="""
from torch import nn
class ConvBnReLU(nn.Sequential):
    \"\"\"Conv, norm and an optional ReLU.\"\"\"
    def __init__(self, c, relu=True):
        super().__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU(inplace=True))
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = ConvBnReLU(c)
    def forward(self, x):
        return self.block(x)
""",
            harness=_runs("Net(4)", "2, 4, 8, 8"),
        ),
        Invalid(  # `Norm` is a module global bound only by `global Norm; Norm = nn.BatchNorm2d` in a constructor: every binding the same class, so `Norm(c)` is that norm and its output is fresh (imbalanced-semi-self's `BN`; issue 27, the seventeenth part)
            """
from torch import nn
import torch.nn.functional as F
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = Norm(c)
    def forward(self, x):
        return F.relu(self.norm(x))
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        global Norm
        Norm = nn.BatchNorm2d
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), Block(c))
    def forward(self, x):
        return self.body(x)
""",
            line=8,
            column=16,
            config=_EXACT,
            message="the fresh output of `self.norm`",
            fixed="""
from torch import nn
import torch.nn.functional as F
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = Norm(c)
    def forward(self, x):
        return F.relu(self.norm(x), inplace=True)
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        global Norm
        Norm = nn.BatchNorm2d
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), Block(c))
    def forward(self, x):
        return self.body(x)
""",
            harness=_runs("Net(4)", "2, 4, 8, 8"),
        ),
        Invalid(  # a factory of the file returning its local `nn.Linear` once it has initialised its weights (fairseq's `Linear`): `self.fc1(x)` is that layer's fresh output (issue 27, the seventeenth part)
            """
from torch import nn
import torch.nn.functional as F
def Linear(i, o, bias=True):
    m = nn.Linear(i, o, bias)
    nn.init.xavier_uniform_(m.weight)
    if bias:
        nn.init.zeros_(m.bias)
    return m
class Ffn(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = Linear(d, 4 * d)
        self.fc2 = Linear(4 * d, d)
    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))
""",
            line=15,
            column=25,
            config=_EXACT,
            message="the fresh output of `self.fc1`",
            fixed="""
from torch import nn
import torch.nn.functional as F
def Linear(i, o, bias=True):
    m = nn.Linear(i, o, bias)
    nn.init.xavier_uniform_(m.weight)
    if bias:
        nn.init.zeros_(m.bias)
    return m
class Ffn(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = Linear(d, 4 * d)
        self.fc2 = Linear(4 * d, d)
    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x), inplace=True))
""",
            harness=_runs("Ffn(8)", "2, 8"),
        ),
        Invalid(  # a Sequential stored on a submodule's attribute (MoCo's projection head `self.encoder.fc = nn.Sequential(...)`) runs its layers in order: the ReLU follows a Linear whose output only it reads; `.fc` is otherwise only read and assigned (issue 27, the seventeenth part)
            """
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
    def forward(self, x):
        return self.fc(x)
class Contrast(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        width = self.encoder.fc.weight.shape[1]
        self.encoder.fc = nn.Sequential(nn.Linear(width, width), nn.ReLU(), self.encoder.fc)
        self.register_buffer("steps", torch.zeros(1))
    def forward(self, x):
        self.steps[0] = x.shape[0]
        return self.encoder(x)
""",
            line=14,
            column=66,
            config=_EXACT,
            message="`nn.ReLU` after `nn.Linear`",
            fixed="""
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
    def forward(self, x):
        return self.fc(x)
class Contrast(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        width = self.encoder.fc.weight.shape[1]
        self.encoder.fc = nn.Sequential(nn.Linear(width, width), nn.ReLU(inplace=True), self.encoder.fc)
        self.register_buffer("steps", torch.zeros(1))
    def forward(self, x):
        self.steps[0] = x.shape[0]
        return self.encoder(x)
""",
            harness=_runs("Contrast()", "2, 8"),
        ),
        Invalid(  # a Sequential run only by parts at literal positions: inside `[:3]` the Linear's output is read only by the ReLU; no part starts at it (robustness's VGG classifier, `[:4]` and `[-2:]`; issue 27, the sixteenth part)
            """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    def forward(self, x):
        h = self.head[:3](x)
        return self.head[-2:](h * 2)
""",
            line=5,
            column=52,
            config=_EXACT,
            fixed="""
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=True), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    def forward(self, x):
        h = self.head[:3](x)
        return self.head[-2:](h * 2)
""",
            harness=_runs("Net()", "2, 8"),
        ),
        Invalid(  # a method appends Linear, BatchNorm1d, ReLU per turn and returns `nn.Sequential(*layers)`, which its one caller stores in `self.fc`, only called whole (deep-person-reid's `_construct_fc_layer`; issue 27, the nineteenth part)
            """
from collections import OrderedDict
from torch import nn
class Net(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.fc = self._head(dims, 8)
    def _head(self, dims, width):
        if dims is None:
            return None
        layers = []
        for dim in dims:
            layers.append(nn.Linear(width, dim))
            layers.append(nn.BatchNorm1d(dim))
            layers.append(nn.ReLU())
            width = dim
        return nn.Sequential(*layers)
    def forward(self, x):
        if self.fc is not None:
            x = self.fc(x)
        return x
def load(model, path, torch):
    state = OrderedDict()
    for k, v in torch.load(path).items():
        state[k] = v
    model.load_state_dict(state)
""",
            line=14,
            column=27,
            config=_EXACT,
            fixed="""
from collections import OrderedDict
from torch import nn
class Net(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.fc = self._head(dims, 8)
    def _head(self, dims, width):
        if dims is None:
            return None
        layers = []
        for dim in dims:
            layers.append(nn.Linear(width, dim))
            layers.append(nn.BatchNorm1d(dim))
            layers.append(nn.ReLU(inplace=True))
            width = dim
        return nn.Sequential(*layers)
    def forward(self, x):
        if self.fc is not None:
            x = self.fc(x)
        return x
def load(model, path, torch):
    state = OrderedDict()
    for k, v in torch.load(path).items():
        state[k] = v
    model.load_state_dict(state)
""",
            harness=_runs("Net([6, 4])", "3, 8"),
        ),
        Invalid(  # a subclass runs the base constructor directly (`Branch.__init__(self, c)`) and calls the inherited `self.relu1` on the inherited norm's fresh output (nasnet's `BranchSeparablesReduction`; issue 27, the nineteenth part)
            """
from torch import nn
class Branch(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return self.conv2(self.relu1(self.bn(self.conv(x))))
class Reduction(Branch):
    def __init__(self, c):
        Branch.__init__(self, c)
        self.pad = nn.ZeroPad2d((1, 0, 1, 0))
    def forward(self, x):
        x = self.conv(self.pad(x))
        x = self.bn(x)
        x = self.relu1(x)
        return self.conv2(x)
""",
            line=7,
            column=22,
            config=_EXACT,
            fixed="""
from torch import nn
class Branch(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return self.conv2(self.relu1(self.bn(self.conv(x))))
class Reduction(Branch):
    def __init__(self, c):
        Branch.__init__(self, c)
        self.pad = nn.ZeroPad2d((1, 0, 1, 0))
    def forward(self, x):
        x = self.conv(self.pad(x))
        x = self.bn(x)
        x = self.relu1(x)
        return self.conv2(x)
""",
            harness=_runs("Reduction(4)", "2, 4, 6, 6"),
        ),
        Invalid(  # `self.pre.add_module("relu", ...)` names a layer of a Sequential the cell built itself, not `Net.relu`; the cell's forward returns a fresh `torch.cat` (nasnet's NASNetAMobile; issue 27, the nineteenth part)
            """
import torch
from torch import nn
class Cell(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pre = nn.Sequential()
        self.pre.add_module("relu", nn.ReLU())
        self.pre.add_module("conv", nn.Conv2d(c, c, 1))
        self.left = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        h = self.pre(x)
        return torch.cat([h, self.left(h)], 1)
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cell = Cell(c)
        self.relu = nn.ReLU()
        self.head = nn.Conv2d(2 * c, 2, 1)
    def forward(self, x):
        y = self.cell(x)
        y = self.relu(y)
        return self.head(y)
""",
            line=17,
            column=21,
            config=_EXACT,
            fixed="""
import torch
from torch import nn
class Cell(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pre = nn.Sequential()
        self.pre.add_module("relu", nn.ReLU())
        self.pre.add_module("conv", nn.Conv2d(c, c, 1))
        self.left = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        h = self.pre(x)
        return torch.cat([h, self.left(h)], 1)
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cell = Cell(c)
        self.relu = nn.ReLU(inplace=True)
        self.head = nn.Conv2d(2 * c, 2, 1)
    def forward(self, x):
        y = self.cell(x)
        y = self.relu(y)
        return self.head(y)
""",
            harness=_runs("Net(4)", "2, 4, 6, 6"),
        ),
        Invalid(  # `feats[name][-1] = feats[name][-1].cpu()` gives an element back itself where it is a module: no container's layers change (KAIR's RVRT; issue 27, the nineteenth part)
            """
from torch import nn
class Basic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=False), nn.Conv2d(8, 2, 3, padding=1))
    def forward(self, x):
        return self.body(x)
def offload(feats, name):
    feats[name][-1] = feats[name][-1].cpu()
    return feats
""",
            line=5,
            column=66,
            config=_EXACT,
            fixed="""
from torch import nn
class Basic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(8, 2, 3, padding=1))
    def forward(self, x):
        return self.body(x)
def offload(feats, name):
    feats[name][-1] = feats[name][-1].cpu()
    return feats
""",
            harness=_runs("Basic()", "2, 8, 6, 6"),
        ),
        Invalid(  # another class's container of the same name is indexed (`self.body[0](x)` on a ModuleList), not this class's Sequential, which runs only whole (KAIR's SpyNet and BasicModule; issue 27, the nineteenth part)
            """
from torch import nn
class Basic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=False), nn.Conv2d(8, 2, 3, padding=1))
    def forward(self, x):
        return self.body(x)
class Pyramid(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.ModuleList([Basic() for _ in range(3)])
    def forward(self, x):
        return self.body[0](x) + self.body[2](x)
""",
            line=5,
            column=66,
            config=_EXACT,
            fixed="""
from torch import nn
class Basic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(8, 2, 3, padding=1))
    def forward(self, x):
        return self.body(x)
class Pyramid(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.ModuleList([Basic() for _ in range(3)])
    def forward(self, x):
        return self.body[0](x) + self.body[2](x)
""",
            harness=_runs("Pyramid()", "2, 8, 6, 6"),
        ),
        Invalid(  # element 0 of what a class of the file returns as a tuple, a fresh quotient nothing else reads (Glow's `Actnorm`: `return z, logdet`; issue 27, the sixteenth part)
            """
import torch
from torch import nn
import torch.nn.functional as F
class Norm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.scale = nn.Parameter(torch.full((1, c, 1, 1), 2.0))
        self.shift = nn.Parameter(torch.zeros(1, c, 1, 1))
    def forward(self, x):
        y = (x - self.shift) / self.scale
        logdet = self.scale.abs().log().sum() * x.shape[2]
        return y, logdet
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.norm = Norm(c)
    def forward(self, x):
        return F.relu(self.norm(self.conv(x))[0])
""",
            line=19,
            column=16,
            config=_EXACT,
            message="element 0 of the fresh output of `self.norm`",
            fixed="""
import torch
from torch import nn
import torch.nn.functional as F
class Norm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.scale = nn.Parameter(torch.full((1, c, 1, 1), 2.0))
        self.shift = nn.Parameter(torch.zeros(1, c, 1, 1))
    def forward(self, x):
        y = (x - self.shift) / self.scale
        logdet = self.scale.abs().log().sum() * x.shape[2]
        return y, logdet
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.norm = Norm(c)
    def forward(self, x):
        return F.relu(self.norm(self.conv(x))[0], inplace=True)
""",
            harness=_runs("Block(4)", "2, 4, 6, 6"),
        ),
        Invalid(  # an `if` whose branch returns first is not on the activation's path: the sum is read there only on a path that never reaches the relu (robustness's `fake_relu` branch; issue 27, the sixteenth part)
            """
from torch import nn
import torch.nn.functional as F
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
    def forward(self, x, raw=False):
        out = self.bn(self.conv(x))
        out += x
        if raw:
            return out * 2
        return F.relu(out)
""",
            line=13,
            column=16,
            config=_EXACT,
            fixed="""
from torch import nn
import torch.nn.functional as F
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
    def forward(self, x, raw=False):
        out = self.bn(self.conv(x))
        out += x
        if raw:
            return out * 2
        return F.relu(out, inplace=True)
""",
            harness=_runs("Block(4)", "2, 4, 6, 6"),
        ),
        Invalid(  # a Sequential no name holds, appended to a ModuleList whose elements only ever run whole, in a file that changes another container's elements (motion-diffusion-model's per-joint MLPs; issue 27, the sixteenth part)
            """
import torch
from torch import nn
class Heads(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(n):
            layers = [nn.Linear(c, c)]
            layers += [nn.SiLU(), nn.Linear(c, c)]
            self.heads.append(nn.Sequential(*layers))
    def forward(self, x):
        out = torch.zeros(len(self.heads), x.shape[0], x.shape[1])
        for i in range(len(self.heads)):
            out[i] = self.heads[i](x)
        return out
""",
            line=9,
            column=24,
            config=_EXACT,
            fixed="""
import torch
from torch import nn
class Heads(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(n):
            layers = [nn.Linear(c, c)]
            layers += [nn.SiLU(inplace=True), nn.Linear(c, c)]
            self.heads.append(nn.Sequential(*layers))
    def forward(self, x):
        out = torch.zeros(len(self.heads), x.shape[0], x.shape[1])
        for i in range(len(self.heads)):
            out[i] = self.heads[i](x)
        return out
""",
            harness=_runs("Heads(4, 2)", "3, 4"),
        ),
        Invalid(  # a Sequential built as a value of the dict given to a ModuleDict, each element taken by key into a name that is only called (motion-diffusion-model keeps them in a ParameterDict; issue 27, the sixteenth part)
            """
import torch
from torch import nn
class Heads(nn.Module):
    def __init__(self, c, names):
        super().__init__()
        self.heads = nn.ModuleDict({n: nn.Sequential(nn.Linear(c, c), nn.ReLU(), nn.Linear(c, c)) for n in names})
    def forward(self, x):
        out = torch.zeros(2, x.shape[0], x.shape[1])
        for i, n in enumerate(["a", "b"]):
            head = self.heads[n]
            out[i] = head(x)
        return out
""",
            line=6,
            column=71,
            config=_EXACT,
            fixed="""
import torch
from torch import nn
class Heads(nn.Module):
    def __init__(self, c, names):
        super().__init__()
        self.heads = nn.ModuleDict({n: nn.Sequential(nn.Linear(c, c), nn.ReLU(inplace=True), nn.Linear(c, c)) for n in names})
    def forward(self, x):
        out = torch.zeros(2, x.shape[0], x.shape[1])
        for i, n in enumerate(["a", "b"]):
            head = self.heads[n]
            out[i] = head(x)
        return out
""",
            harness=_runs("Heads(4, ['a', 'b'])", "3, 4"),
        ),
        Invalid(  # a torch-layer subclass of the file with only an `__init__` runs the layer's own `forward`: a fresh output (the screen counts it as fresh_forwards does)
            """
from torch import nn
class Conv(nn.Conv2d):
    def __init__(self, c_in, c_out):
        super().__init__(c_in, c_out, 3, padding=1)
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = Conv(c, c)
        self.relu = nn.ReLU()
    def forward(self, x):
        return self.relu(self.conv(x))
""",
            line=9,
            column=21,
            config=_EXACT,
            fixed="""
from torch import nn
class Conv(nn.Conv2d):
    def __init__(self, c_in, c_out):
        super().__init__(c_in, c_out, 3, padding=1)
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = Conv(c, c)
        self.relu = nn.ReLU(inplace=True)
    def forward(self, x):
        return self.relu(self.conv(x))
""",
            harness=_runs("Block(4)", "2, 4, 6, 6"),
        ),
        Invalid(  # a helper of the file appends the conv and the activation to the list it is handed and returns it; every caller binds it back and unpacks it into a Sequential (nashory/pggan-pytorch's `deconv`, issue 27)
            """
from torch import nn
def deconv(layers, c_in, c_out):
    layers.append(nn.Conv2d(c_in, c_out, 3, padding=1))
    layers.append(nn.ReLU())
    return layers
class Gen(nn.Module):
    def __init__(self, c):
        super().__init__()
        layers = []
        layers = deconv(layers, 3, c)
        layers = deconv(layers, c, c)
        self.model = nn.Sequential(*layers)
    def forward(self, x):
        return self.model(x)
""",
            line=4,
            column=19,
            config=_EXACT,
            fixed="""
from torch import nn
def deconv(layers, c_in, c_out):
    layers.append(nn.Conv2d(c_in, c_out, 3, padding=1))
    layers.append(nn.ReLU(inplace=True))
    return layers
class Gen(nn.Module):
    def __init__(self, c):
        super().__init__()
        layers = []
        layers = deconv(layers, 3, c)
        layers = deconv(layers, c, c)
        self.model = nn.Sequential(*layers)
    def forward(self, x):
        return self.model(x)
""",
            harness=_runs("Gen(4)", "2, 3, 6, 6"),
        ),
        Invalid(  # the Sequential is handed to a helper of the file that only calls it: as good as calling it (issue 27)
            """
from torch import nn
def run_masked(module, x, mask):
    if mask is not None:
        return module(x * mask)
    return module(x)
class Embed(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.att_embed = nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, b))
    def forward(self, x, mask=None):
        return run_masked(self.att_embed, x, mask)
""",
            line=9,
            column=57,
            config=_EXACT,
            fixed="""
from torch import nn
def run_masked(module, x, mask):
    if mask is not None:
        return module(x * mask)
    return module(x)
class Embed(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.att_embed = nn.Sequential(nn.Linear(a, b), nn.ReLU(inplace=True), nn.Linear(b, b))
    def forward(self, x, mask=None):
        return run_masked(self.att_embed, x, mask)
""",
            harness=_runs("Embed(4, 8)", "3, 4"),
        ),
        Invalid(  # a list of layer groups, each unpacked into its own Sequential: within a group the layers follow one another (issue 27)
            """
from torch import nn
class Disc(nn.Module):
    def __init__(self, c, n_layers):
        super().__init__()
        sequence = [[nn.Conv2d(3, c, 3, padding=1), nn.LeakyReLU(0.2, False)]]
        for n in range(1, n_layers):
            sequence += [[nn.Conv2d(c, c, 3, padding=1), nn.Tanh()]]
        for n in range(len(sequence)):
            self.add_module("model" + str(n), nn.Sequential(*sequence[n]))
    def forward(self, x):
        results = [x]
        for submodel in self.children():
            results.append(submodel(results[-1]))
        return sum(r.sum() for r in results[1:])
""",
            line=5,
            column=53,
            config=_EXACT,
            fixed="""
from torch import nn
class Disc(nn.Module):
    def __init__(self, c, n_layers):
        super().__init__()
        sequence = [[nn.Conv2d(3, c, 3, padding=1), nn.LeakyReLU(0.2, True)]]
        for n in range(1, n_layers):
            sequence += [[nn.Conv2d(c, c, 3, padding=1), nn.Tanh()]]
        for n in range(len(sequence)):
            self.add_module("model" + str(n), nn.Sequential(*sequence[n]))
    def forward(self, x):
        results = [x]
        for submodel in self.children():
            results.append(submodel(results[-1]))
        return sum(r.sum() for r in results[1:])
""",
            harness=_runs("Disc(4, 3)", "2, 3, 6, 6"),
        ),
        Invalid(  # a Sequential unpacked from a `+` of tuple displays: the ReLU follows the Linear in its own display (issue 27)
            """
from torch import nn
def embed(a, b, use_bn):
    return nn.Sequential(*(((nn.BatchNorm1d(a),) if use_bn else ()) + (nn.Linear(a, b), nn.ReLU(), nn.Dropout(0.5)) + ((nn.BatchNorm1d(b),) if use_bn == 2 else ())))
""",
            line=3,
            column=89,
            config=_EXACT,
            fixed="""
from torch import nn
def embed(a, b, use_bn):
    return nn.Sequential(*(((nn.BatchNorm1d(a),) if use_bn else ()) + (nn.Linear(a, b), nn.ReLU(inplace=True), nn.Dropout(0.5)) + ((nn.BatchNorm1d(b),) if use_bn == 2 else ())))
""",
            harness=_runs("embed(4, 8, 2).eval()", "3, 4"),
        ),
        Invalid(  # an OrderedDict filled key by key and given to nn.Sequential (issue 27)
            """
from collections import OrderedDict
from torch import nn
def mlp(dims):
    layers = OrderedDict()
    for i, (a, b) in enumerate(zip(dims, dims[1:])):
        layers["fc{}".format(i + 1)] = nn.Linear(a, b)
        layers["relu{}".format(i + 1)] = nn.ReLU()
    layers["out"] = nn.Linear(dims[-1], 2)
    return nn.Sequential(layers)
""",
            line=7,
            column=42,
            config=_EXACT,
            fixed="""
from collections import OrderedDict
from torch import nn
def mlp(dims):
    layers = OrderedDict()
    for i, (a, b) in enumerate(zip(dims, dims[1:])):
        layers["fc{}".format(i + 1)] = nn.Linear(a, b)
        layers["relu{}".format(i + 1)] = nn.ReLU(inplace=True)
    layers["out"] = nn.Linear(dims[-1], 2)
    return nn.Sequential(layers)
""",
            harness=_runs("mlp([4, 8, 8])", "2, 4"),
        ),
        Invalid(  # a class of the file whose forward returns a fresh sum: its output is as fresh as a conv's (issue 27)
            """
import torch
from torch import nn
class NoiseInjection(nn.Module):
    def __init__(self, channel):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(1, channel, 1, 1))
    def forward(self, image, noise):
        return image + self.weight * noise
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.noise = NoiseInjection(c)
        self.lrelu = nn.LeakyReLU(0.2)
    def forward(self, x, noise):
        out = self.conv(x)
        out = self.noise(out, noise)
        out = self.lrelu(out)
        return out
""",
            line=14,
            column=22,
            fixed="""
import torch
from torch import nn
class NoiseInjection(nn.Module):
    def __init__(self, channel):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(1, channel, 1, 1))
    def forward(self, image, noise):
        return image + self.weight * noise
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.noise = NoiseInjection(c)
        self.lrelu = nn.LeakyReLU(0.2, inplace=True)
    def forward(self, x, noise):
        out = self.conv(x)
        out = self.noise(out, noise)
        out = self.lrelu(out)
        return out
""",
            config=_EXACT,
            harness=Harness(
                setup="import torch\n",
                then="""
model = Block(4)
x = torch.randn(2, 4, 6, 6, requires_grad=True)
n = torch.randn(2, 1, 6, 6)
out = model(x, n)
out.sum().backward()
result = (out, x, x.grad, n, [p.grad for p in model.parameters()])
""",
            ),
        ),
        Invalid(  # a class whose forward returns the name bound just before to a fresh `F.conv2d` result (issue 27)
            """
import torch
import torch.nn.functional as F
from torch import nn
class Down(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(c, c, 3, 3))
    def forward(self, input):
        weight = self.weight * 0.5
        out = F.conv2d(input, weight, stride=2, padding=1)
        assert not torch.isnan(out).any()
        return out
block = nn.Sequential(nn.Conv2d(4, 4, 1), Down(4), nn.LeakyReLU(0.2), nn.Conv2d(4, 4, 1))
""",
            line=13,
            column=52,
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Down(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(c, c, 3, 3))
    def forward(self, input):
        weight = self.weight * 0.5
        out = F.conv2d(input, weight, stride=2, padding=1)
        assert not torch.isnan(out).any()
        return out
block = nn.Sequential(nn.Conv2d(4, 4, 1), Down(4), nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(4, 4, 1))
""",
            harness=_runs("block", "2, 4, 8, 8"),
        ),
        Invalid(  # a forward pre-hook that reads no input (StyleGAN's equalised lr) and a class returning its own conv's output (issue 27)
            """
from torch import nn
class EqualLR:
    def __init__(self, name):
        self.name = name
    def compute_weight(self, module):
        weight = getattr(module, self.name + "_orig")
        return weight * (2 / weight.data[0].numel()) ** 0.5
    @staticmethod
    def apply(module, name):
        fn = EqualLR(name)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_orig", nn.Parameter(weight.data))
        module.register_forward_pre_hook(fn)
        return fn
    def __call__(self, module, input):
        weight = self.compute_weight(module)
        setattr(module, self.name, weight)
def equal_lr(module, name="weight"):
    EqualLR.apply(module, name)
    return module
class EqualConv2d(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        conv = nn.Conv2d(*args, **kwargs)
        conv.bias.data.zero_()
        self.conv = equal_lr(conv)
    def forward(self, input):
        return self.conv(input)
block = nn.Sequential(EqualConv2d(4, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(4, 4, 1))
""",
            line=30,
            column=56,
            fixed="""
from torch import nn
class EqualLR:
    def __init__(self, name):
        self.name = name
    def compute_weight(self, module):
        weight = getattr(module, self.name + "_orig")
        return weight * (2 / weight.data[0].numel()) ** 0.5
    @staticmethod
    def apply(module, name):
        fn = EqualLR(name)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_orig", nn.Parameter(weight.data))
        module.register_forward_pre_hook(fn)
        return fn
    def __call__(self, module, input):
        weight = self.compute_weight(module)
        setattr(module, self.name, weight)
def equal_lr(module, name="weight"):
    EqualLR.apply(module, name)
    return module
class EqualConv2d(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        conv = nn.Conv2d(*args, **kwargs)
        conv.bias.data.zero_()
        self.conv = equal_lr(conv)
    def forward(self, input):
        return self.conv(input)
block = nn.Sequential(EqualConv2d(4, 4, 3, padding=1), nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(4, 4, 1))
""",
            harness=_runs("block", "2, 4, 6, 6"),
        ),
        Invalid(  # a legacy backward hook sits on the conv's own autograd node: it never sees the output (issue 27)
            """
import torch.nn.functional as F
from torch import nn
class Gaze(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 1, 1)
        self.conv.register_backward_hook(lambda module, grad_in, grad_out: tuple(None if g is None else g / 4 for g in grad_in))
    def forward(self, x):
        y = F.relu(self.conv(x))
        return x * y
""",
            line=9,
            column=13,
            config=_EXACT,
            fixed="""
import torch.nn.functional as F
from torch import nn
class Gaze(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 1, 1)
        self.conv.register_backward_hook(lambda module, grad_in, grad_out: tuple(None if g is None else g / 4 for g in grad_in))
    def forward(self, x):
        y = F.relu(self.conv(x), inplace=True)
        return x * y
""",
            harness=_runs("Gaze()", "2, 4, 6, 6"),
        ),
        Invalid(  # `self.up_conv != None` reads whether it is set and runs none of its layers (issue 27)
            """
from torch import nn
class Head(nn.Module):
    def __init__(self, up):
        super().__init__()
        if up:
            self.up_conv = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU())
        else:
            self.up_conv = None
        self.final = nn.Conv2d(4, 2, 1)
    def forward(self, x):
        if self.up_conv != None:
            x = self.up_conv(x)
        return self.final(x)
""",
            line=6,
            column=102,
            config=_EXACT,
            fixed="""
from torch import nn
class Head(nn.Module):
    def __init__(self, up):
        super().__init__()
        if up:
            self.up_conv = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(inplace=True))
        else:
            self.up_conv = None
        self.final = nn.Conv2d(4, 2, 1)
    def forward(self, x):
        if self.up_conv != None:
            x = self.up_conv(x)
        return self.final(x)
""",
            harness=_runs("Head(True)", "2, 4, 6, 6"),
        ),
        Invalid(  # an activation module built in a branch of the constructor, the other branch an identity (issue 27)
            """
from torch import nn
class LM(nn.Module):
    def __init__(self, add_relu):
        super().__init__()
        self.project = nn.Linear(4, 4)
        if add_relu:
            self.relu = nn.ReLU()
        else:
            self.relu = lambda x: x
        self.drop = nn.Dropout(p=0.5)
    def forward(self, out):
        return self.drop(self.relu(self.project(out)))
""",
            line=7,
            column=25,
            config=_EXACT,
            fixed="""
from torch import nn
class LM(nn.Module):
    def __init__(self, add_relu):
        super().__init__()
        self.project = nn.Linear(4, 4)
        if add_relu:
            self.relu = nn.ReLU(inplace=True)
        else:
            self.relu = lambda x: x
        self.drop = nn.Dropout(p=0.5)
    def forward(self, out):
        return self.drop(self.relu(self.project(out)))
""",
            harness=_runs("LM(True).eval()", "2, 4"),
        ),
        Invalid(  # a function of the file, no module: a fresh quotient rebound by the activation
            """
import torch
import torch.nn.functional as F
def contrast(a, b, c2=1e-4):
    cs_map = (2 * a * b + c2) / (a * a + b * b + c2)
    cs_map = F.relu(cs_map)
    return cs_map.mean()
""",
            line=5,
            column=14,
            config=_EXACT,
            message="a fresh quotient",
            fixed="""
import torch
import torch.nn.functional as F
def contrast(a, b, c2=1e-4):
    cs_map = (2 * a * b + c2) / (a * a + b * b + c2)
    cs_map = F.relu(cs_map, inplace=True)
    return cs_map.mean()
""",
            harness=Harness(
                setup="import torch",
                then="a = torch.randn(4, 4, requires_grad=True)\nb = torch.randn(4, 4)\nout = contrast(a, b)\nout.backward()\nresult = (out, a.grad)",
            ),
        ),
        Invalid(  # built by a base class of the file, called by its subclasses' forward on fresh sums
            """
import torch
from torch import nn
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.leaky = nn.LeakyReLU(0.2)
class Scores(Layer):
    def forward(self, a, b):
        return self.leaky(self.fc(a) + b)
class Pairs(Layer):
    def forward(self, a, b):
        return self.leaky(self.fc(a) + self.fc(b))
""",
            line=7,
            column=22,
            config=_EXACT,
            message="only called on fresh values",
            fixed="""
import torch
from torch import nn
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.leaky = nn.LeakyReLU(0.2, inplace=True)
class Scores(Layer):
    def forward(self, a, b):
        return self.leaky(self.fc(a) + b)
class Pairs(Layer):
    def forward(self, a, b):
        return self.leaky(self.fc(a) + self.fc(b))
""",
            harness=Harness(
                setup="import torch",
                then="s, p = Scores(), Pairs()\na = torch.randn(3, 4, requires_grad=True)\nb = torch.randn(3, 4, requires_grad=True)\nout = s(a, b) + p(a, b)\nout.sum().backward()\nresult = (out, a.grad, b.grad)",
            ),
        ),
        Invalid(  # a loop variable over a ModuleList of weight-normed convolutions (chosen by a conditional alias)
            """
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import weight_norm, spectral_norm
class Discriminator(nn.Module):
    def __init__(self, use_spectral_norm=False):
        super().__init__()
        norm_f = weight_norm if use_spectral_norm == False else spectral_norm
        self.convs = nn.ModuleList([norm_f(nn.Conv1d(1, 4, 3, padding=1)), norm_f(nn.Conv1d(4, 4, 3, padding=1))])
        self.post = nn.Conv1d(4, 1, 3, padding=1)
    def forward(self, x):
        fmap = []
        for l in self.convs:
            x = l(x)
            x = F.leaky_relu(x, 0.1)
            fmap.append(x)
        return self.post(x), fmap
""",
            line=14,
            column=17,
            config=_EXACT,
            message="the fresh output of `l`, a layer of a ModuleList",
            fixed="""
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import weight_norm, spectral_norm
class Discriminator(nn.Module):
    def __init__(self, use_spectral_norm=False):
        super().__init__()
        norm_f = weight_norm if use_spectral_norm == False else spectral_norm
        self.convs = nn.ModuleList([norm_f(nn.Conv1d(1, 4, 3, padding=1)), norm_f(nn.Conv1d(4, 4, 3, padding=1))])
        self.post = nn.Conv1d(4, 1, 3, padding=1)
    def forward(self, x):
        fmap = []
        for l in self.convs:
            x = l(x)
            x = F.leaky_relu(x, 0.1, inplace=True)
            fmap.append(x)
        return self.post(x), fmap
""",
            harness=Harness(
                setup="import torch",
                then="d = Discriminator()\nx = torch.randn(2, 1, 16, requires_grad=True)\nout, fmap = d(x)\nout.sum().backward()\nresult = (out, fmap, x.grad, [p.grad for p in d.parameters()])",
            ),
        ),
        Invalid(  # a `setattr` of a tensor under a name not literal rebinds no submodule (BigGAN's spectral norm)
            """
import torch
import torch.nn.functional as F
from torch import nn
class SpectralNorm(nn.Module):
    def __init__(self, module, name="weight"):
        super().__init__()
        self.module, self.name = module, name
    def forward(self, x):
        w = getattr(self.module, self.name)
        setattr(self.module, self.name, w / w.norm())
        return self.module(x)
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(4)
        self.out = nn.Conv2d(4, 3, 3, padding=1)
    def forward(self, x):
        x = self.bn(x)
        x = F.relu(x)
        return self.out(x)
""",
            line=19,
            column=13,
            config=_EXACT,
            message="the fresh output of `self.bn`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class SpectralNorm(nn.Module):
    def __init__(self, module, name="weight"):
        super().__init__()
        self.module, self.name = module, name
    def forward(self, x):
        w = getattr(self.module, self.name)
        setattr(self.module, self.name, w / w.norm())
        return self.module(x)
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(4)
        self.out = nn.Conv2d(4, 3, 3, padding=1)
    def forward(self, x):
        x = self.bn(x)
        x = F.relu(x, inplace=True)
        return self.out(x)
""",
            harness=_runs("Generator()", "2, 4, 5, 5"),
        ),
        Valid(  # a `setattr` of a value that may be a module, under a name not literal: `self.bn` may be anything
            """
import torch.nn.functional as F
from torch import nn
class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(4)
    def forward(self, x):
        x = self.bn(x)
        x = F.relu(x)
        return x
def swap(model, name, layer):
    setattr(model, name, layer)
""",
            config=_EXACT,
        ),
        Invalid(  # a module class of the file that returns the output of the layer it is given (BigGAN's SpectralNorm)
            """
import torch
from torch import nn
class SpectralNorm(nn.Module):
    def __init__(self, module, name="weight"):
        super().__init__()
        self.module = module
        self.name = name
    def forward(self, *args):
        return self.module.forward(*args)
class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre_conv = nn.Sequential(
            SpectralNorm(nn.Conv2d(3, 4, 3, padding=1)),
            nn.ReLU(),
            SpectralNorm(nn.Conv2d(4, 4, 3, padding=1)),
        )
    def forward(self, x):
        return self.pre_conv(x)
""",
            line=15,
            column=13,
            config=_EXACT,
            message="`nn.ReLU` after `nn.Conv2d`",
            fixed="""
import torch
from torch import nn
class SpectralNorm(nn.Module):
    def __init__(self, module, name="weight"):
        super().__init__()
        self.module = module
        self.name = name
    def forward(self, *args):
        return self.module.forward(*args)
class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre_conv = nn.Sequential(
            SpectralNorm(nn.Conv2d(3, 4, 3, padding=1)),
            nn.ReLU(inplace=True),
            SpectralNorm(nn.Conv2d(4, 4, 3, padding=1)),
        )
    def forward(self, x):
        return self.pre_conv(x)
""",
            harness=_runs("Discriminator()", "2, 3, 5, 5"),
        ),
        Valid(  # the wrapper may return its input instead: the ReLU could overwrite the caller's tensor
            """
import torch
from torch import nn
class Maybe(nn.Module):
    def __init__(self, module, active=True):
        super().__init__()
        self.module = module
        self.active = active
    def forward(self, x):
        if not self.active:
            return x
        return self.module(x)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(Maybe(nn.Conv2d(3, 3, 1), active=False), nn.ReLU())
    def forward(self, x):
        return self.body(x)
""",
            config=_EXACT,
        ),
        Invalid(  # a layer of a ModuleList taken by index into a local name (pointnet2's set abstraction)
            """
import torch.nn.functional as F
from torch import nn
class SetAbstraction(nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.mlp_convs = nn.ModuleList()
        self.mlp_bns = nn.ModuleList()
        last = 3
        for width in widths:
            self.mlp_convs.append(nn.Conv2d(last, width, 1))
            self.mlp_bns.append(nn.BatchNorm2d(width))
            last = width
    def forward(self, points):
        for i, conv in enumerate(self.mlp_convs):
            bn = self.mlp_bns[i]
            points = F.relu(bn(conv(points)))
        return points.max(2)[0]
""",
            line=16,
            column=22,
            config=_EXACT,
            message="the fresh output of `bn`, a layer of a ModuleList",
            fixed="""
import torch.nn.functional as F
from torch import nn
class SetAbstraction(nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.mlp_convs = nn.ModuleList()
        self.mlp_bns = nn.ModuleList()
        last = 3
        for width in widths:
            self.mlp_convs.append(nn.Conv2d(last, width, 1))
            self.mlp_bns.append(nn.BatchNorm2d(width))
            last = width
    def forward(self, points):
        for i, conv in enumerate(self.mlp_convs):
            bn = self.mlp_bns[i]
            points = F.relu(bn(conv(points)), inplace=True)
        return points.max(2)[0]
""",
            harness=Harness(
                setup="import torch",
                then="m = SetAbstraction([4, 8])\nx = torch.randn(2, 3, 5, 6, requires_grad=True)\nout = m(x)\nout.sum().backward()\nresult = (out, x.grad, [p.grad for p in m.parameters()])",
            ),
        ),
        Invalid(  # a layer of a ModuleList of ModuleLists, taken by two indices (pointnet2's multi-scale grouping)
            """
import torch.nn.functional as F
from torch import nn
class SetAbstractionMsg(nn.Module):
    def __init__(self, widths_per_scale):
        super().__init__()
        self.conv_blocks = nn.ModuleList()
        self.bn_blocks = nn.ModuleList()
        for widths in widths_per_scale:
            convs = nn.ModuleList()
            bns = nn.ModuleList()
            last = 3
            for width in widths:
                convs.append(nn.Conv2d(last, width, 1))
                bns.append(nn.BatchNorm2d(width))
                last = width
            self.conv_blocks.append(convs)
            self.bn_blocks.append(bns)
    def forward(self, points):
        outs = []
        for i in range(len(self.conv_blocks)):
            grouped = points
            for j in range(len(self.conv_blocks[i])):
                conv = self.conv_blocks[i][j]
                bn = self.bn_blocks[i][j]
                grouped = F.relu(bn(conv(grouped)))
            outs.append(grouped.max(2)[0])
        return outs
""",
            line=25,
            column=27,
            config=_EXACT,
            message="the fresh output of `bn`, a layer of a ModuleList",
            fixed="""
import torch.nn.functional as F
from torch import nn
class SetAbstractionMsg(nn.Module):
    def __init__(self, widths_per_scale):
        super().__init__()
        self.conv_blocks = nn.ModuleList()
        self.bn_blocks = nn.ModuleList()
        for widths in widths_per_scale:
            convs = nn.ModuleList()
            bns = nn.ModuleList()
            last = 3
            for width in widths:
                convs.append(nn.Conv2d(last, width, 1))
                bns.append(nn.BatchNorm2d(width))
                last = width
            self.conv_blocks.append(convs)
            self.bn_blocks.append(bns)
    def forward(self, points):
        outs = []
        for i in range(len(self.conv_blocks)):
            grouped = points
            for j in range(len(self.conv_blocks[i])):
                conv = self.conv_blocks[i][j]
                bn = self.bn_blocks[i][j]
                grouped = F.relu(bn(conv(grouped)), inplace=True)
            outs.append(grouped.max(2)[0])
        return outs
""",
            harness=Harness(
                setup="import torch",
                then="m = SetAbstractionMsg([[4, 8], [6]])\nx = torch.randn(2, 3, 5, 6, requires_grad=True)\nouts = m(x)\nsum(o.sum() for o in outs).backward()\nresult = (outs, x.grad, [p.grad for p in m.parameters()])",
            ),
        ),
        Valid(  # an inner list also gets a layer through the outer one elsewhere: its elements are unknown
            """
import torch.nn.functional as F
from torch import nn
class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn_blocks = nn.ModuleList()
        for _ in range(2):
            bns = nn.ModuleList()
            bns.append(nn.BatchNorm2d(4))
            self.bn_blocks.append(bns)
        self.bn_blocks[0].append(nn.Sigmoid())
    def forward(self, x):
        for i in range(2):
            for j in range(len(self.bn_blocks[i])):
                x = F.relu(self.bn_blocks[i][j](x))
        return x
""",
            config=_EXACT,
        ),
        Valid(  # the local name is bound to an element and again to something else: which layer runs is unknown
            """
import torch.nn.functional as F
from torch import nn
class SetAbstraction(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp_bns = nn.ModuleList([nn.BatchNorm2d(4), nn.BatchNorm2d(4)])
    def forward(self, points, skip):
        for i in range(2):
            bn = self.mlp_bns[i]
            if skip:
                bn = lambda t: t
            points = F.relu(bn(points))
        return points
""",
            config=_EXACT,
        ),
        Invalid(  # bound further back by a tensor method, checked, and activated in a branch that returns it
            """
import torch
import torch.nn.functional as F
from torch import nn
class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Parameter(torch.randn(8, 8))
        self.concat = True
    def forward(self, h, rowsum):
        h_prime = torch.mm(h, self.W).div(rowsum)
        assert not torch.isnan(h_prime).any()
        if self.concat:
            return F.relu(h_prime)
        return h_prime
""",
            line=13,
            column=20,
            config=_EXACT,
            message="the fresh result of `torch.mm(h, self.W).div`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Parameter(torch.randn(8, 8))
        self.concat = True
    def forward(self, h, rowsum):
        h_prime = torch.mm(h, self.W).div(rowsum)
        assert not torch.isnan(h_prime).any()
        if self.concat:
            return F.relu(h_prime, inplace=True)
        return h_prime
""",
            harness=Harness(
                setup="import torch",
                then="a = Attention()\nx = torch.randn(4, 8, requires_grad=True)\nout = a(x, torch.rand(4, 1) + 1)\nout.sum().backward()\nresult = (out, x.grad, a.W.grad)",
            ),
        ),
        Invalid(  # a method other than `forward` (a message function handed to a graph library)
            """
import torch
import torch.nn.functional as F
from torch import nn
class EdgeScores(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_fc = nn.Linear(16, 1)
    def edge_attention(self, z):
        a = self.attn_fc(z)
        return {"e": F.relu(a)}
    def forward(self, z):
        return self.edge_attention(z)["e"]
""",
            line=10,
            column=22,
            config=_EXACT,
            message="the fresh output of `self.attn_fc`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class EdgeScores(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_fc = nn.Linear(16, 1)
    def edge_attention(self, z):
        a = self.attn_fc(z)
        return {"e": F.relu(a, inplace=True)}
    def forward(self, z):
        return self.edge_attention(z)["e"]
""",
            harness=_runs("EdgeScores()", "4, 16"),
        ),
        Invalid(  # an activation module called only in a helper that `forward` calls, on a fresh sum
            """
import torch
from torch import nn
class Scores(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 1)
        self.b = nn.Linear(8, 1)
        self.relu = nn.ReLU()
    def _scores(self, h):
        e = self.a(h) + self.b(h).T
        return self.relu(e)
    def forward(self, h):
        return self._scores(h)
""",
            line=8,
            column=21,
            config=_EXACT,
            message="only called on fresh values",
            fixed="""
import torch
from torch import nn
class Scores(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 1)
        self.b = nn.Linear(8, 1)
        self.relu = nn.ReLU(inplace=True)
    def _scores(self, h):
        e = self.a(h) + self.b(h).T
        return self.relu(e)
    def forward(self, h):
        return self._scores(h)
""",
            harness=_runs("Scores()", "4, 8"),
        ),
        Invalid(  # exact selection: a marimo notebook's cell gets `nn` from the cell that imports it
            """
import marimo

app = marimo.App()


@app.cell
def _():
    import torch.nn as nn
    return (nn,)


@app.cell
def _(nn):
    mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    return (mlp,)
""",
            line=14,
            column=43,
            config=_EXACT,
            message="`nn.ReLU` after `nn.Linear`",
            fixed="""
import marimo

app = marimo.App()


@app.cell
def _():
    import torch.nn as nn
    return (nn,)


@app.cell
def _(nn):
    mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(inplace=True), nn.Linear(16, 8))
    return (mlp,)
""",
            harness=Harness(
                setup="import torch\n" + MARIMO_STAND_IN,
                then="(nn,) = app.cells[0]()\n(mlp,) = app.cells[1](nn)\nx = torch.randn(2, 8, requires_grad=True)\nout = mlp(x)\nout.sum().backward()\nresult = (out, x, x.grad, [p.grad for p in mlp.parameters()])",
            ),
        ),
        Invalid(  # exact selection: a module class at the top of a marimo cell, `F` a cell parameter
            """
import marimo

app = marimo.App()


@app.cell
def _():
    import torch.nn as nn
    import torch.nn.functional as F
    return F, nn


@app.cell
def _(F, nn):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            return F.relu(self.fc(x))

    return (Net,)
""",
            line=21,
            column=20,
            config=_EXACT,
            message="on the fresh output of `self.fc`",
            fixed="""
import marimo

app = marimo.App()


@app.cell
def _():
    import torch.nn as nn
    import torch.nn.functional as F
    return F, nn


@app.cell
def _(F, nn):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            return F.relu(self.fc(x), inplace=True)

    return (Net,)
""",
            harness=Harness(
                setup="import torch\n" + MARIMO_STAND_IN,
                then="(F, nn) = app.cells[0]()\n(Net,) = app.cells[1](F, nn)\nmodel = Net()\nx = torch.randn(2, 8, requires_grad=True)\nout = model(x)\nout.sum().backward()\nresult = (out, x, x.grad, [p.grad for p in model.parameters()])",
            ),
        ),
        Invalid(  # a layer built through the project's initialiser, which only a star import brings (DeepRL)
            """
from utils import *
class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = layer_init(nn.Conv2d(4, 4, kernel_size=3, padding=1))
    def forward(self, x):
        return F.relu(self.conv1(x))
""",
            line=7,
            column=16,
            config=_EXACT,
            fixed="""
from utils import *
class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = layer_init(nn.Conv2d(4, 4, kernel_size=3, padding=1))
    def forward(self, x):
        return F.relu(self.conv1(x), inplace=True)
""",
            harness=_runs("Body()", "2, 4, 6, 6", setup=_STAR_UTILS),
        ),
        Invalid(  # torch's conventional names arrive only through a star import of the project's own module
            """
from utils import *
class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, kernel_size=3, padding=1)
    def forward(self, x):
        return F.relu(self.conv1(x))
""",
            line=7,
            column=16,
            config=_EXACT,
            fixed="""
from utils import *
class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, kernel_size=3, padding=1)
    def forward(self, x):
        return F.relu(self.conv1(x), inplace=True)
""",
            harness=_runs("Body()", "2, 4, 6, 6", setup=_STAR_UTILS),
        ),
        Invalid(  # a layer bound to a name on the line before, then listed with the activation (issue 27)
            """
from torch import nn
def make_layers(cfg):
    layers = []
    in_channels = 3
    for v in cfg:
        conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
        layers += [conv2d, nn.ReLU()]
        in_channels = v
    return nn.Sequential(*layers)
""",
            line=7,
            column=28,
            config=_EXACT,
            fixed="""
from torch import nn
def make_layers(cfg):
    layers = []
    in_channels = 3
    for v in cfg:
        conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
        layers += [conv2d, nn.ReLU(inplace=True)]
        in_channels = v
    return nn.Sequential(*layers)
""",
            harness=_runs("make_layers([4, 4])", "2, 3, 6, 6"),
        ),
        Invalid(  # a ResNet block: the fresh output of `self.bn2` with the shortcut added in place (issue 27)
            """
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.shortcut = nn.Sequential()
    def forward(self, x):
        out = self.bn(self.conv(x))
        out += self.shortcut(x)
        out = F.relu(out)
        return out
""",
            line=12,
            column=15,
            config=_EXACT,
            message="changed in place by `+=`",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.shortcut = nn.Sequential()
    def forward(self, x):
        out = self.bn(self.conv(x))
        out += self.shortcut(x)
        out = F.relu(out, inplace=True)
        return out
""",
            harness=_runs("Block()", "2, 4, 6, 6"),
        ),
        Invalid(  # a fresh sum: `+` keeps nothing of its result for backward
            """
import torch.nn.functional as F
from torch import nn
class Merge(nn.Module):
    def __init__(self):
        super().__init__()
        self.left = nn.Linear(4, 4)
        self.right = nn.Linear(4, 4)
    def forward(self, x):
        return F.relu(self.left(x) + self.right(x))
""",
            line=9,
            column=16,
            config=_EXACT,
            message="a fresh sum",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Merge(nn.Module):
    def __init__(self):
        super().__init__()
        self.left = nn.Linear(4, 4)
        self.right = nn.Linear(4, 4)
    def forward(self, x):
        return F.relu(self.left(x) + self.right(x), inplace=True)
""",
            harness=_runs("Merge()", "2, 4"),
        ),
        Invalid(  # `self.dropout = nn.LeakyReLU()` used once, on the fresh output of the pooling layer
            """
from torch import nn
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.LeakyReLU(0.2)
        self.linear = nn.Linear(4, 2)
    def forward(self, x):
        x = self.avgpool(x)
        x = self.dropout(x)
        return self.linear(x.flatten(1))
""",
            line=6,
            column=24,
            config=_EXACT,
            message="only called on fresh values",
            fixed="""
from torch import nn
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.LeakyReLU(0.2, inplace=True)
        self.linear = nn.Linear(4, 2)
    def forward(self, x):
        x = self.avgpool(x)
        x = self.dropout(x)
        return self.linear(x.flatten(1))
""",
            harness=_runs("Head().eval()", "2, 4, 5, 5"),
        ),
        Invalid(  # `inplace=False` written out with no comment saying why (TorchSSL's WideResNet)
            """
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn1 = nn.BatchNorm1d(4)
        self.relu1 = nn.LeakyReLU(negative_slope=0.1, inplace=False)
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(self.relu1(self.bn1(x)))
""",
            line=6,
            column=22,
            config=_EXACT,
            message="only called on fresh values",
            fixed="""
from torch import nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn1 = nn.BatchNorm1d(4)
        self.relu1 = nn.LeakyReLU(negative_slope=0.1, inplace=True)
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        return self.fc(self.relu1(self.bn1(x)))
""",
            harness=_runs("Block().eval()", "2, 4"),
        ),
        Invalid(  # ELU in place computes its gradient from the output: equal up to the last bits, so unsafe
            """
from torch import nn
mlp = nn.Sequential(nn.Linear(8, 16), nn.ELU(), nn.Linear(16, 4))
""",
            line=2,
            column=39,
            unsafe=True,
            fixed="""
from torch import nn
mlp = nn.Sequential(nn.Linear(8, 16), nn.ELU(inplace=True), nn.Linear(16, 4))
""",
        ),
        Invalid(  # a slope known only at run time may be negative: unsafe
            """
from torch import nn
def mlp(slope):
    return nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(slope), nn.Linear(16, 4))
""",
            line=3,
            column=44,
            unsafe=True,
            fixed="""
from torch import nn
def mlp(slope):
    return nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(slope, inplace=True), nn.Linear(16, 4))
""",
        ),
        Invalid(
            """
from torch import nn
features = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU())
""",
            line=2,
            column=67,
            config=_EXACT,
            message="leaves a training step's peak unchanged",
            fixed="""
from torch import nn
features = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(inplace=True))
""",
            harness=_runs("features", "2, 3, 8, 8"),
        ),
        Invalid(  # aliases, a positional argument, explicit False without a reason; in the default set (a LeakyReLU before a Linear)
            """
import torch.nn as tnn
from torch.nn import LeakyReLU as LR
mlp = tnn.Sequential(tnn.Linear(8, 16), LR(0.2, False), tnn.Linear(16, 4))
""",
            line=3,
            column=41,
            fixed="""
import torch.nn as tnn
from torch.nn import LeakyReLU as LR
mlp = tnn.Sequential(tnn.Linear(8, 16), LR(0.2, True), tnn.Linear(16, 4))
""",
            harness=_runs("mlp", "4, 8"),
        ),
        Invalid(  # OrderedDict form, multi-line with a trailing comma
            """
from collections import OrderedDict
from torch import nn
head = nn.Sequential(OrderedDict([
    ("fc", nn.Linear(512, 256)),
    ("drop", nn.LeakyReLU(
        0.5,
    )),
]))
""",
            line=5,
            column=14,
            config=_EXACT,
            fixed="""
from collections import OrderedDict
from torch import nn
head = nn.Sequential(OrderedDict([
    ("fc", nn.Linear(512, 256)),
    ("drop", nn.LeakyReLU(
        0.5, inplace=True,
    )),
]))
""",
            harness=_runs("head", "2, 512"),
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
            config=_EXACT,
            fixed="""
from torch import nn
def make_layers(cfg):
    layers = []
    for v in cfg:
        layers += [nn.Conv2d(3, v, 3), nn.ReLU(inplace=True)]
    return nn.Sequential(*layers)
""",
            harness=_runs("make_layers([4])", "2, 3, 8, 8"),
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
            config=_EXACT,
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
            harness=_runs("Net()", "2, 3, 8, 8"),
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
            config=_EXACT,
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
            harness=_runs("Net()", "1, 3, 16, 16"),
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
        h = F.leaky_relu(h, 0.1)
        return h
""",
            line=9,
            column=13,
            config=_EXACT,
            fixed="""
from torch import nn
from torch.nn import functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
    def forward(self, x):
        h = self.fc(x)
        h = F.leaky_relu(h, 0.1, inplace=True)
        return h
""",
            harness=_runs("Net()", "4, 16"),
        ),
        Invalid(  # a layer wrapped in the file's initialiser, which returns it (cleanrl)
            """
import numpy as np
import torch
from torch import nn
def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer
class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.network = nn.Sequential(layer_init(nn.Conv2d(4, 32, 8, stride=4)), nn.ReLU())
""",
            line=11,
            column=81,
            config=_EXACT,
            fixed="""
import numpy as np
import torch
from torch import nn
def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer
class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.network = nn.Sequential(layer_init(nn.Conv2d(4, 32, 8, stride=4)), nn.ReLU(inplace=True))
""",
            harness=_runs("Agent().network", "1, 4, 16, 16"),
        ),
        Invalid(  # an initialiser that only a star import can bring (ShangtongZhang/DeepRL's layer_init)
            """
from utils import *
class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(layer_init(nn.Conv2d(4, 4, 3)), nn.ReLU())
""",
            line=5,
            column=67,
            config=_EXACT,
            fixed="""
from utils import *
class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(layer_init(nn.Conv2d(4, 4, 3)), nn.ReLU(inplace=True))
""",
            harness=_runs("Body().main", "1, 4, 8, 8", setup=_STAR_UTILS),
        ),
        Invalid(  # a lambda over an imported initialiser (pytorch-a2c-ppo-acktr-gail)
            """
from torch import nn
from a2c_ppo_acktr.utils import init
class CNNBase(nn.Module):
    def __init__(self, num_inputs):
        super().__init__()
        init_ = lambda m: init(m, nn.init.orthogonal_, lambda x: nn.init.constant_(x, 0))
        self.main = nn.Sequential(init_(nn.Conv2d(num_inputs, 32, 8, stride=4)), nn.ReLU(), nn.Flatten())
""",
            line=7,
            column=82,
            config=_EXACT,
            fixed="""
from torch import nn
from a2c_ppo_acktr.utils import init
class CNNBase(nn.Module):
    def __init__(self, num_inputs):
        super().__init__()
        init_ = lambda m: init(m, nn.init.orthogonal_, lambda x: nn.init.constant_(x, 0))
        self.main = nn.Sequential(init_(nn.Conv2d(num_inputs, 32, 8, stride=4)), nn.ReLU(inplace=True), nn.Flatten())
""",
            harness=_runs("CNNBase(4).main", "1, 4, 16, 16", setup=_A2C_INIT),
        ),
        Invalid(  # weight_norm returns the layer it reparameterises
            """
from torch import nn
from torch.nn.utils import weight_norm
def classifier(in_dim, hidden_dim):
    layers = [weight_norm(nn.Linear(in_dim, hidden_dim), dim=None), nn.ReLU()]
    return nn.Sequential(*layers)
""",
            line=4,
            column=69,
            config=_EXACT,
            fixed="""
from torch import nn
from torch.nn.utils import weight_norm
def classifier(in_dim, hidden_dim):
    layers = [weight_norm(nn.Linear(in_dim, hidden_dim), dim=None), nn.ReLU(inplace=True)]
    return nn.Sequential(*layers)
""",
            harness=_runs("classifier(8, 4)", "3, 8"),
        ),
        Invalid(  # a plain class's Sequential, used through module methods that run none of its layers
            """
import torch
import torch.nn as nn
class GAN(object):
    def __init__(self):
        self.G = nn.Sequential(nn.Linear(100, 256), nn.LeakyReLU(0.2), nn.Linear(256, 784), nn.Tanh())
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), lr=0.0002)
        self.G.cuda(0)
    def train(self, z):
        return self.G(z)
""",
            line=5,
            column=53,
            fixed="""
import torch
import torch.nn as nn
class GAN(object):
    def __init__(self):
        self.G = nn.Sequential(nn.Linear(100, 256), nn.LeakyReLU(0.2, inplace=True), nn.Linear(256, 784), nn.Tanh())
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), lr=0.0002)
        self.G.cuda(0)
    def train(self, z):
        return self.G(z)
""",
            harness=_runs("GAN().G", "2, 100", setup=_NO_GPU),
        ),
        Invalid(  # one layer indexed only to read where the weights are
            """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())
    def forward(self, x):
        return self.body(x.to(self.body[0].weight.device))
""",
            line=5,
            column=55,
            config=_EXACT,
            fixed="""
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(inplace=True))
    def forward(self, x):
        return self.body(x.to(self.body[0].weight.device))
""",
            harness=_runs("Net()", "1, 3, 8, 8"),
        ),
        Invalid(  # a block re-wrapped into a parent Sequential, which calls it whole
            """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())
        self.net = nn.Sequential(self.stem, nn.Conv2d(8, 8, 3))
    def forward(self, x):
        return self.net(x)
""",
            line=5,
            column=74,
            config=_EXACT,
            fixed="""
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.net = nn.Sequential(self.stem, nn.Conv2d(8, 8, 3))
    def forward(self, x):
        return self.net(x)
""",
            harness=_runs("Net()", "1, 3, 12, 12"),
        ),
        Invalid(  # built with add_module, one statement per layer (pytorch-book)
            """
from torch import nn
net1 = nn.Sequential()
net1.add_module("conv", nn.Conv2d(3, 3, 3))
net1.add_module("batchnorm", nn.BatchNorm2d(3))
net1.add_module("activation_layer", nn.ReLU())
""",
            line=5,
            column=37,
            config=_EXACT,
            fixed="""
from torch import nn
net1 = nn.Sequential()
net1.add_module("conv", nn.Conv2d(3, 3, 3))
net1.add_module("batchnorm", nn.BatchNorm2d(3))
net1.add_module("activation_layer", nn.ReLU(inplace=True))
""",
            harness=_runs("net1", "1, 3, 8, 8"),
        ),
        Invalid(  # a list filled by append and unpacked into a Sequential (DCGAN-LSGAN-WGAN-GP-DRAGAN)
            """
from torch import nn
class ConvDiscriminator(nn.Module):
    def __init__(self, input_channels=3, d=64):
        super().__init__()
        layers = []
        layers.append(nn.Conv2d(input_channels, d, kernel_size=4, stride=2, padding=1))
        layers.append(nn.LeakyReLU(0.2))
        self.net = nn.Sequential(*layers)
""",
            line=7,
            column=23,
            config=_EXACT,  # the layer after the LeakyReLU is not in this sequence
            fixed="""
from torch import nn
class ConvDiscriminator(nn.Module):
    def __init__(self, input_channels=3, d=64):
        super().__init__()
        layers = []
        layers.append(nn.Conv2d(input_channels, d, kernel_size=4, stride=2, padding=1))
        layers.append(nn.LeakyReLU(0.2, inplace=True))
        self.net = nn.Sequential(*layers)
""",
            harness=_runs("ConvDiscriminator().net", "1, 3, 16, 16"),
        ),
        Invalid(  # the default set: a forward-only pass (no_grad), where in place saves up to one activation
            """
import torch
import torch.nn.functional as F
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 32)
    @torch.no_grad()
    def forward(self, x):
        return F.silu(self.fc(x))
""",
            line=10,
            column=16,
            message="in this forward-only pass",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 32)
    @torch.no_grad()
    def forward(self, x):
        return F.silu(self.fc(x), inplace=True)
""",
            harness=Harness(setup="import torch", then="result = Encoder()(torch.randn(2, 8))"),
        ),
        Invalid(  # exact selection: LeakyReLU keeps an activation fewer only if the layer reading its result keeps it
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        return F.leaky_relu(self.fc(x), 0.2)
""",
            line=8,
            column=16,
            config=_EXACT,
            message="only where the layer that reads it keeps its input",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        return F.leaky_relu(self.fc(x), 0.2, inplace=True)
""",
            harness=_runs("Net()", "2, 8"),
        ),
        Invalid(  # the learning rate set through a string key replaces no layer (cleanrl's PPO scripts, issue 27)
            """
import torch
from torch import nn
agent = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.ReLU())
optimizer = torch.optim.Adam(agent.parameters(), lr=1e-3)
optimizer.param_groups[0]["lr"] = 5e-4
buffer = torch.zeros(8, 4)
buffer[:, 0] = 1.0
""",
            line=3,
            column=71,
            config=_EXACT,
            fixed="""
import torch
from torch import nn
agent = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.ReLU(inplace=True))
optimizer = torch.optim.Adam(agent.parameters(), lr=1e-3)
optimizer.param_groups[0]["lr"] = 5e-4
buffer = torch.zeros(8, 4)
buffer[:, 0] = 1.0
""",
            harness=_runs("agent", "2, 4"),
        ),
        Invalid(  # a class defined again under its name (a notebook's cell edited and run again): each builds its own layers
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return F.relu(self.fc(x))
""",
            line=14,
            column=16,
            config=_EXACT,
            fixed="""
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return F.relu(self.fc(x), inplace=True)
""",
            harness=_runs("Net()", "2, 4"),
        ),
        Invalid(  # a hook on another module, known by name (`model.head`), sees nothing the ReLU overwrites
            """
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, 2)
    def forward(self, x):
        return self.head(self.body(x))
model = Net()
kept = []
model.head.register_forward_hook(lambda module, args, output: kept.append(args[0]))
""",
            line=5,
            column=52,
            config=_EXACT,
            fixed="""
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True))
        self.head = nn.Linear(8, 2)
    def forward(self, x):
        return self.head(self.body(x))
model = Net()
kept = []
model.head.register_forward_hook(lambda module, args, output: kept.append(args[0]))
""",
            harness=Harness(
                setup="import torch",
                then="x = torch.randn(2, 4, requires_grad=True)\nout = model(x)\nout.sum().backward()\nresult = (out, kept, x.grad)",
            ),
        ),
        Invalid(  # each branch of the `if` just before binds a fresh layer output, the branch's layer built in a branch of the constructor (benchmarking-gnns' nets, issue 27)
            """
from torch import nn
class Net(nn.Module):
    def __init__(self, pos_enc):
        super().__init__()
        self.pos_enc = pos_enc
        if pos_enc:
            self.embedding_pos_enc = nn.Linear(4, 8)
        else:
            self.embedding_h = nn.Linear(4, 8)
        self.in_feat_dropout = nn.LeakyReLU(0.5)
    def forward(self, h):
        if self.pos_enc:
            h = self.embedding_pos_enc(h)
        else:
            h = self.embedding_h(h)
        h = self.in_feat_dropout(h)
        return h
""",
            line=10,
            column=32,
            config=_EXACT,
            fixed="""
from torch import nn
class Net(nn.Module):
    def __init__(self, pos_enc):
        super().__init__()
        self.pos_enc = pos_enc
        if pos_enc:
            self.embedding_pos_enc = nn.Linear(4, 8)
        else:
            self.embedding_h = nn.Linear(4, 8)
        self.in_feat_dropout = nn.LeakyReLU(0.5, inplace=True)
    def forward(self, h):
        if self.pos_enc:
            h = self.embedding_pos_enc(h)
        else:
            h = self.embedding_h(h)
        h = self.in_feat_dropout(h)
        return h
""",
            harness=_runs("Net(True).eval()", "2, 4"),
        ),
        Invalid(  # an `if` with no `else`: the value is the branch's fresh sum or the layer output bound before the `if`
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.shift = True
    def forward(self, x):
        y = self.fc(x)
        if self.shift:
            y = y + x
        z = F.relu(y)
        return z
""",
            line=12,
            column=13,
            config=_EXACT,
            fixed="""
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.shift = True
    def forward(self, x):
        y = self.fc(x)
        if self.shift:
            y = y + x
        z = F.relu(y, inplace=True)
        return z
""",
            harness=_runs("Net()", "2, 4"),
        ),
        Invalid(  # another class of the file names its own module `self.dropout` and calls it on a kept value (PreSumm's encoder, issue 27)
            """
from torch import nn
class Encoding(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.dropout = nn.LeakyReLU(0.5)
    def forward(self, x):
        return self.dropout(self.fc(x))
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = nn.LeakyReLU(0.5)
    def forward(self, x):
        return self.dropout(x) + x
""",
            line=6,
            column=24,
            config=_EXACT,
            fixed="""
from torch import nn
class Encoding(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.dropout = nn.LeakyReLU(0.5, inplace=True)
    def forward(self, x):
        return self.dropout(self.fc(x))
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = nn.LeakyReLU(0.5)
    def forward(self, x):
        return self.dropout(x) + x
""",
            harness=_runs("Encoding().eval()", "2, 4"),
        ),
        Invalid(  # a factory of the file whose every return builds a Conv2d (RepDistiller's VID, issue 27)
            """
from torch import nn
def conv1x1(in_channels, out_channels):
    return nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)
regressor = nn.Sequential(conv1x1(3, 8), nn.ReLU(), conv1x1(8, 4))
""",
            line=4,
            column=42,
            config=_EXACT,
            fixed="""
from torch import nn
def conv1x1(in_channels, out_channels):
    return nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)
regressor = nn.Sequential(conv1x1(3, 8), nn.ReLU(inplace=True), conv1x1(8, 4))
""",
            harness=_runs("regressor", "2, 3, 4, 4"),
        ),
        Invalid(  # added in branches: after `if bn:` the last layer is the norm or the conv, both keep no output (YOLOv3's builder, issue 27)
            """
from torch import nn
def create(defs):
    blocks = nn.ModuleList()
    for d in defs:
        block = nn.Sequential()
        if d["type"] == "conv":
            block.add_module("conv", nn.Conv2d(3, 3, 3, padding=1, bias=not d["bn"]))
            if d["bn"]:
                block.add_module("bn", nn.BatchNorm2d(3))
            if d["activation"] == "leaky":
                block.add_module("leaky", nn.LeakyReLU(0.1))
            elif d["activation"] == "logistic":
                block.add_module("sigmoid", nn.Sigmoid())
        blocks.append(block)
    return blocks
""",
            line=11,
            column=43,
            config=_EXACT,
            fixed="""
from torch import nn
def create(defs):
    blocks = nn.ModuleList()
    for d in defs:
        block = nn.Sequential()
        if d["type"] == "conv":
            block.add_module("conv", nn.Conv2d(3, 3, 3, padding=1, bias=not d["bn"]))
            if d["bn"]:
                block.add_module("bn", nn.BatchNorm2d(3))
            if d["activation"] == "leaky":
                block.add_module("leaky", nn.LeakyReLU(0.1, inplace=True))
            elif d["activation"] == "logistic":
                block.add_module("sigmoid", nn.Sigmoid())
        blocks.append(block)
    return blocks
""",
            harness=_runs("create([{'type': 'conv', 'bn': 1, 'activation': 'leaky'}])[0]", "2, 3, 4, 4"),
        ),
        Invalid(  # an element assignment of a tensor elsewhere in the file changes no layer of this Sequential (benchmarking-gnns' MLP net, issue 27)
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Linear(4, 4), nn.ReLU()]
        layers.append(nn.Linear(4, 2))
        self.mlp = nn.Sequential(*layers)
    def forward(self, x):
        return self.mlp(x)
    def weights(self, label):
        counts = torch.zeros(2)
        counts[label] = 1.0
        return counts
""",
            line=6,
            column=36,
            config=_EXACT,
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Linear(4, 4), nn.ReLU(inplace=True)]
        layers.append(nn.Linear(4, 2))
        self.mlp = nn.Sequential(*layers)
    def forward(self, x):
        return self.mlp(x)
    def weights(self, label):
        counts = torch.zeros(2)
        counts[label] = 1.0
        return counts
""",
            harness=_runs("Net()", "2, 4"),
        ),
        Invalid(  # a layer taken from a ModuleList whose every element is a Linear (benchmarking-gnns' MLPReadout, issue 27)
            """
import torch.nn.functional as F
from torch import nn
class Readout(nn.Module):
    def __init__(self, d, out, L=2):
        super().__init__()
        layers = [nn.Linear(d // 2**l, d // 2 ** (l + 1)) for l in range(L)]
        layers.append(nn.Linear(d // 2**L, out))
        self.fc_layers = nn.ModuleList(layers)
        self.L = L
    def forward(self, y):
        for l in range(self.L):
            y = self.fc_layers[l](y)
            y = F.relu(y)
        return self.fc_layers[self.L](y)
""",
            line=13,
            column=17,
            config=_EXACT,
            fixed="""
import torch.nn.functional as F
from torch import nn
class Readout(nn.Module):
    def __init__(self, d, out, L=2):
        super().__init__()
        layers = [nn.Linear(d // 2**l, d // 2 ** (l + 1)) for l in range(L)]
        layers.append(nn.Linear(d // 2**L, out))
        self.fc_layers = nn.ModuleList(layers)
        self.L = L
    def forward(self, y):
        for l in range(self.L):
            y = self.fc_layers[l](y)
            y = F.relu(y, inplace=True)
        return self.fc_layers[self.L](y)
""",
            harness=_runs("Readout(8, 2)", "2, 8"),
        ),
        Invalid(  # exact selection: `torch.relu` has no `inplace` parameter; its in-place twin is `torch.relu_`
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(8, 8)
    def forward(self, x):
        return torch.relu(self.l1(x))
""",
            line=8,
            column=16,
            config=_EXACT,
            message="`torch.relu_`",
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(8, 8)
    def forward(self, x):
        return torch.relu_(self.l1(x))
""",
            harness=_runs("Net()", "2, 8"),
        ),
        Invalid(  # exact selection: `torch.cat` keeps nothing for backward, so a LeakyReLU may overwrite its result
            """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def forward(self, x):
        h = torch.cat([x * 2, x * 3], dim=1)
        h = F.leaky_relu(h, 0.5)
        return h
""",
            line=7,
            column=13,
            config=_EXACT,
            message="the fresh result of `torch.cat`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def forward(self, x):
        h = torch.cat([x * 2, x * 3], dim=1)
        h = F.leaky_relu(h, 0.5, inplace=True)
        return h
""",
            harness=Harness(setup="import torch", then="torch.manual_seed(0)\nmodel = Net().eval()\nx = torch.randn(2, 4, requires_grad=True)\nout = model(x)\nout.sum().backward()\nresult = (out, x.grad)"),
        ),
        Invalid(  # a U-Net decoder: the name is rebound to a fresh `torch.cat` and this read is its last
            """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.up1 = nn.Linear(4, 4)
        self.up2 = nn.Linear(8, 4)
    def forward(self, x):
        d1 = self.up1(x)
        d1 = torch.cat([d1, x], 1)
        d2 = self.up2(F.relu(d1))
        return d2
""",
            line=12,
            column=23,
            config=_EXACT,
            message="the fresh result of `torch.cat`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.up1 = nn.Linear(4, 4)
        self.up2 = nn.Linear(8, 4)
    def forward(self, x):
        d1 = self.up1(x)
        d1 = torch.cat([d1, x], 1)
        d2 = self.up2(F.relu(d1, inplace=True))
        return d2
""",
            harness=_runs("Net()", "2, 4"),
        ),
        Invalid(  # a view of a fresh pooling output, the name rebound: in place overwrites only that tensor
            """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        batch = x.size(0)
        x = self.pool(x)
        x = F.relu(x.view(batch, -1))
        return self.fc(x)
""",
            line=12,
            column=13,
            config=_EXACT,
            message="the fresh output of `self.pool`, reshaped by `.view`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        batch = x.size(0)
        x = self.pool(x)
        x = F.relu(x.view(batch, -1), inplace=True)
        return self.fc(x)
""",
            harness=_runs("Net()", "2, 1, 4, 4"),
        ),
        Valid(  # the pooled tensor is read again after the activation on its view
            """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2)
    def forward(self, x):
        p = self.pool(x)
        h = F.relu(p.view(p.size(0), -1))
        return h, p
""",
            config=_EXACT,
        ),
        Invalid(  # a hinge loss: the ReLU module is built for one call on a fresh difference
            """
import torch
def hinge(d_out_real):
    return torch.nn.ReLU()(1.0 - d_out_real).mean()
""",
            line=3,
            column=12,
            config=_EXACT,
            message="`nn.ReLU` built for one call on a fresh difference",
            fixed="""
import torch
def hinge(d_out_real):
    return torch.nn.ReLU(inplace=True)(1.0 - d_out_real).mean()
""",
            harness=Harness(
                setup="import torch",
                then="d = torch.randn(6, requires_grad=True)\nloss = hinge(d)\nloss.backward()\nresult = (loss, d.grad)",
            ),
        ),
        Valid(  # the module built for one call on a name that is read again: in place would change it
            """
import torch
def hinge(d_out_real):
    margin = 1.0 - d_out_real
    loss = torch.nn.ReLU()(margin).mean()
    return loss, margin
""",
            config=_EXACT,
        ),
        Valid(  # the rebound name is read again after the activation: in place would change what it sees
            """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.up1 = nn.Linear(4, 4)
        self.up2 = nn.Linear(8, 4)
    def forward(self, x):
        d1 = self.up1(x)
        d1 = torch.cat([d1, x], 1)
        d2 = self.up2(F.relu(d1))
        return d2 + d1[:, :4]
""",
            config=_EXACT,
        ),
        Valid(  # in a loop the next pass may read the name before it is rebound
            """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(8, 4)
    def forward(self, x):
        d = torch.cat([x, x], 1)
        outs = []
        for _ in range(2):
            outs.append(d)
            d = torch.cat([x, x], 1)
            x = self.up(F.relu(d))
        return x, outs
""",
            config=_EXACT,
        ),
        Invalid(  # exact selection: GELU keeps its input, not its output
            """
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        h = F.gelu(self.fc(x))
        h = F.relu(h)
        return h @ h.t()
""",
            line=10,
            column=13,
            config=_EXACT,
            message="the fresh result of `F.gelu`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        h = F.gelu(self.fc(x))
        h = F.relu(h, inplace=True)
        return h @ h.t()
""",
            harness=_runs("Net()", "2, 8"),
        ),
        Invalid(  # exact selection: `nn.GELU` keeps its input, not its output, so the LeakyReLU after it may overwrite it
            """
from torch import nn
mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LeakyReLU(0.1), nn.Linear(16, 8))
""",
            line=2,
            column=50,
            config=_EXACT,
            message="after `nn.GELU`",
            fixed="""
from torch import nn
mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LeakyReLU(0.1, inplace=True), nn.Linear(16, 8))
""",
            harness=Harness(setup="import torch", then="mlp.eval()\nx = torch.randn(2, 8, requires_grad=True)\nout = mlp(x)\nout.sum().backward()\nresult = (out, x.grad)"),
        ),
        Valid(  # exact selection: a dropout that may run with gradients on is not reported; in place it keeps a full-size mask where CUDA's fused kernel keeps a one-byte one (measured: docs/inplace-activations.md)
            """
from torch import nn
mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.1), nn.Linear(16, 8))
""",
            config=_EXACT,
        ),
        Valid(  # the functional form, the same: `F.dropout` on a Linear's fresh output in a training forward
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
            config=_EXACT,
        ),
        Invalid(  # exact selection: a norm built by a constructor parameter named as one, whose default is torch's
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, c, 3), norm_layer(c), nn.ReLU(), nn.Conv2d(c, c, 3))
    def forward(self, x):
        return self.body(x)
""",
            line=5,
            column=70,
            config=_EXACT,
            message="after `norm_layer(...)` (`nn.BatchNorm2d`)",
            fixed="""
from torch import nn
class Block(nn.Module):
    def __init__(self, c, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, c, 3), norm_layer(c), nn.ReLU(inplace=True), nn.Conv2d(c, c, 3))
    def forward(self, x):
        return self.body(x)
""",
            harness=_runs("Block(4)", "2, 3, 8, 8"),
        ),
        Invalid(  # default set: the layer after the LeakyReLU is a norm the file names otherwise, which keeps its input for backward
            """
from torch import nn
class Block(nn.Module):
    def __init__(self, c, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, c, 3), nn.LeakyReLU(0.2), norm_layer(c))
    def forward(self, x):
        return self.body(x)
""",
            line=5,
            column=55,
            message="out of place, LeakyReLU keeps its input as well as its output",
            fixed="""
from torch import nn
class Block(nn.Module):
    def __init__(self, c, norm_layer=nn.BatchNorm2d):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, c, 3), nn.LeakyReLU(0.2, inplace=True), norm_layer(c))
    def forward(self, x):
        return self.body(x)
""",
            harness=_runs("Block(4)", "2, 3, 8, 8"),
        ),
        Invalid(  # exact selection: deeplab's `BatchNorm` parameter, passed in by another file; `x` is rebound before the `return` that ends it
            """
from torch import nn
class ASPPModule(nn.Module):
    def __init__(self, inplanes, planes, BatchNorm):
        super().__init__()
        self.atrous_conv = nn.Conv2d(inplanes, planes, 3, padding=1, bias=False)
        self.bn = BatchNorm(planes)
        self.relu = nn.ReLU()
    def forward(self, x):
        x = self.atrous_conv(x)
        x = self.bn(x)
        return self.relu(x)
""",
            line=7,
            column=21,
            config=_EXACT,
            message="only called on fresh values",
            fixed="""
from torch import nn
class ASPPModule(nn.Module):
    def __init__(self, inplanes, planes, BatchNorm):
        super().__init__()
        self.atrous_conv = nn.Conv2d(inplanes, planes, 3, padding=1, bias=False)
        self.bn = BatchNorm(planes)
        self.relu = nn.ReLU(inplace=True)
    def forward(self, x):
        x = self.atrous_conv(x)
        x = self.bn(x)
        return self.relu(x)
""",
            harness=_runs("ASPPModule(3, 4, nn.BatchNorm2d)", "2, 3, 8, 8"),
        ),
        Invalid(  # exact selection: a project norm class, through a module-level alias (deeplab's `BatchNorm2d = SynchronizedBatchNorm2d`)
            """
from torch import nn
from sync_batchnorm import SynchronizedBatchNorm2d
BatchNorm2d = SynchronizedBatchNorm2d
head = nn.Sequential(nn.Conv2d(3, 4, 3), BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 2, 1))
""",
            line=4,
            column=58,
            config=_EXACT,
            message="after `BatchNorm2d` (`SynchronizedBatchNorm2d`, a project norm class)",
            fixed="""
from torch import nn
from sync_batchnorm import SynchronizedBatchNorm2d
BatchNorm2d = SynchronizedBatchNorm2d
head = nn.Sequential(nn.Conv2d(3, 4, 3), BatchNorm2d(4), nn.ReLU(inplace=True), nn.Conv2d(4, 2, 1))
""",
            harness=_runs(
                "head",
                "2, 3, 8, 8",
                'import sys, types\nsys.modules["sync_batchnorm"] = types.SimpleNamespace(SynchronizedBatchNorm2d=torch.nn.BatchNorm2d)\n',
            ),
        ),
        Invalid(  # exact selection: a local name chooses the activation class (pytorch-ssd); every choice runs in place the same way
            """
from torch import nn
def separable(c, onnx_compatible=False):
    ReLU = nn.ReLU if onnx_compatible else nn.ReLU6
    return nn.Sequential(nn.Conv2d(c, c, 3, groups=c), nn.BatchNorm2d(c), ReLU(), nn.Conv2d(c, c, 1))
""",
            line=4,
            column=75,
            config=_EXACT,
            message="`ReLU` (`nn.ReLU` or `nn.ReLU6`) after `nn.BatchNorm2d`",
            fixed="""
from torch import nn
def separable(c, onnx_compatible=False):
    ReLU = nn.ReLU if onnx_compatible else nn.ReLU6
    return nn.Sequential(nn.Conv2d(c, c, 3, groups=c), nn.BatchNorm2d(c), ReLU(inplace=True), nn.Conv2d(c, c, 1))
""",
            harness=_runs("separable(3)", "2, 3, 8, 8"),
        ),
        Invalid(  # exact selection: the constructor's branches bind the attribute to ReLU or to Tanh; the ReLU is reported whichever branch comes last
            """
from torch import nn
class Net(nn.Module):
    def __init__(self, bounded):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        if not bounded:
            self.act = nn.ReLU()
        else:
            self.act = nn.Tanh()
    def forward(self, x):
        return self.act(self.fc(x))
""",
            line=7,
            column=24,
            config=_EXACT,
            message="`self.act = nn.ReLU(...)`",
            fixed="""
from torch import nn
class Net(nn.Module):
    def __init__(self, bounded):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        if not bounded:
            self.act = nn.ReLU(inplace=True)
        else:
            self.act = nn.Tanh()
    def forward(self, x):
        return self.act(self.fc(x))
""",
            harness=_runs("Net(False)", "2, 4"),
        ),
        Invalid(  # an augmented assignment: the activation acts on a fresh difference inside it (curl's `squash`)
            """
import torch
import torch.nn.functional as F
def squash(pi, log_pi):
    log_pi -= torch.log(F.relu(1 - pi.pow(2)) + 1e-6).sum(-1, keepdim=True)
    return log_pi
""",
            line=4,
            column=25,
            config=_EXACT,
            message="`F.relu` on a fresh difference can run in place",
            fixed="""
import torch
import torch.nn.functional as F
def squash(pi, log_pi):
    log_pi -= torch.log(F.relu(1 - pi.pow(2), inplace=True) + 1e-6).sum(-1, keepdim=True)
    return log_pi
""",
            harness=Harness(
                setup="import torch",
                then="p = torch.rand(3, 2, requires_grad=True)\nl = torch.zeros(3, 1)\nout = squash(p, l)\nout.sum().backward()\nresult = (out, p.grad)",
            ),
        ),
        Invalid(  # one Linear of the trunk handed to a logger (curl's Actor.log): not the activation, not its input
            """
from torch import nn
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    def forward(self, obs):
        return self.trunk(obs)
    def log(self, L, step):
        L.log_param("train_actor/fc1", self.trunk[0], step)
        L.log_param("train_actor/fc2", self.trunk[-1], step)
""",
            line=5,
            column=53,
            config=_EXACT,
            message="`nn.ReLU` after `nn.Linear` can run in place",
            fixed="""
from torch import nn
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True), nn.Linear(8, 2))
    def forward(self, obs):
        return self.trunk(obs)
    def log(self, L, step):
        L.log_param("train_actor/fc1", self.trunk[0], step)
        L.log_param("train_actor/fc2", self.trunk[-1], step)
""",
            harness=_runs("Actor()", "3, 4"),
        ),
        Invalid(  # one ReLU module on fresh values at several sites, the convs built in both branches of
            # the constructor, one branch a torch layer's subclass returning `F.conv2d` or `super().forward`
            """
import torch.nn.functional as F
from torch import nn
class Conv2d_fw(nn.Conv2d):
    def __init__(self, c_in, c_out, k):
        super(Conv2d_fw, self).__init__(c_in, c_out, k)
        self.weight.fast = None
    def forward(self, x):
        if self.weight.fast is not None:
            out = F.conv2d(x, self.weight.fast, self.bias)
        else:
            out = super(Conv2d_fw, self).forward(x)
        return out
class Block(nn.Module):
    maml = False
    def __init__(self, c):
        super().__init__()
        if self.maml:
            self.C1 = Conv2d_fw(c, c, 1)
            self.C2 = Conv2d_fw(c, c, 1)
        else:
            self.C1 = nn.Conv2d(c, c, 1)
            self.C2 = nn.Conv2d(c, c, 1)
        self.relu = nn.ReLU()
    def forward(self, x):
        out = self.C1(x)
        out = self.relu(out)
        out = self.C2(out)
        out = out + x
        out = self.relu(out)
        return out
""",
            line=23,
            column=21,
            config=_EXACT,
            message="`self.relu = nn.ReLU(...)` is only called on fresh values",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Conv2d_fw(nn.Conv2d):
    def __init__(self, c_in, c_out, k):
        super(Conv2d_fw, self).__init__(c_in, c_out, k)
        self.weight.fast = None
    def forward(self, x):
        if self.weight.fast is not None:
            out = F.conv2d(x, self.weight.fast, self.bias)
        else:
            out = super(Conv2d_fw, self).forward(x)
        return out
class Block(nn.Module):
    maml = False
    def __init__(self, c):
        super().__init__()
        if self.maml:
            self.C1 = Conv2d_fw(c, c, 1)
            self.C2 = Conv2d_fw(c, c, 1)
        else:
            self.C1 = nn.Conv2d(c, c, 1)
            self.C2 = nn.Conv2d(c, c, 1)
        self.relu = nn.ReLU(inplace=True)
    def forward(self, x):
        out = self.C1(x)
        out = self.relu(out)
        out = self.C2(out)
        out = out + x
        out = self.relu(out)
        return out
""",
            harness=_runs("(setattr(Block, 'maml', True), Block(3))[1]", "2, 3, 4, 4"),
        ),
        Invalid(  # a stem's ReLU bound to a local name listed once, after a norm bound in either branch
            """
from torch import nn
class ResNet(nn.Module):
    maml = False
    def __init__(self, flatten=True):
        super().__init__()
        conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1, bias=False)
        if self.maml:
            bn1 = nn.BatchNorm2d(8, momentum=1)
        else:
            bn1 = nn.BatchNorm2d(8)
        relu = nn.ReLU()
        trunk = [conv1, bn1, relu, nn.MaxPool2d(2)]
        if flatten:
            trunk.append(nn.Flatten())
        self.trunk = nn.Sequential(*trunk)
    def forward(self, x):
        return self.trunk(x)
""",
            line=11,
            column=16,
            config=_EXACT,
            message="`nn.ReLU` after `nn.BatchNorm2d` can run in place",
            fixed="""
from torch import nn
class ResNet(nn.Module):
    maml = False
    def __init__(self, flatten=True):
        super().__init__()
        conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1, bias=False)
        if self.maml:
            bn1 = nn.BatchNorm2d(8, momentum=1)
        else:
            bn1 = nn.BatchNorm2d(8)
        relu = nn.ReLU(inplace=True)
        trunk = [conv1, bn1, relu, nn.MaxPool2d(2)]
        if flatten:
            trunk.append(nn.Flatten())
        self.trunk = nn.Sequential(*trunk)
    def forward(self, x):
        return self.trunk(x)
""",
            harness=_runs("ResNet()", "2, 3, 8, 8"),
        ),
        Invalid(  # a list extended in loops: the LeakyReLU that starts each `+=` follows the first conv, or a residual block (whose `forward` returns a fresh sum), or the conv of the turn before (descriptinc/melgan-neurips's generator, issue 27)
            """
from torch import nn
class Res(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Conv1d(c, c, 3, padding=1)
        self.skip = nn.Conv1d(c, c, 1)
    def forward(self, x):
        return self.skip(x) + self.body(x)
class Gen(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        layers = [nn.Conv1d(4, c, 7, padding=3)]
        for _ in range(2):
            layers += [nn.LeakyReLU(0.2), nn.Conv1d(c, c, 3, padding=1)]
            for _ in range(n):
                layers += [Res(c)]
        layers += [nn.Conv1d(c, 1, 1)]
        self.model = nn.Sequential(*layers)
    def forward(self, x):
        return self.model(x)
""",
            line=14,
            column=24,
            message="`nn.Conv1d` or `Res`",
            fixed="""
from torch import nn
class Res(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Conv1d(c, c, 3, padding=1)
        self.skip = nn.Conv1d(c, c, 1)
    def forward(self, x):
        return self.skip(x) + self.body(x)
class Gen(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        layers = [nn.Conv1d(4, c, 7, padding=3)]
        for _ in range(2):
            layers += [nn.LeakyReLU(0.2, inplace=True), nn.Conv1d(c, c, 3, padding=1)]
            for _ in range(n):
                layers += [Res(c)]
        layers += [nn.Conv1d(c, 1, 1)]
        self.model = nn.Sequential(*layers)
    def forward(self, x):
        return self.model(x)
""",
            harness=_runs("Gen(4, 1)", "2, 4, 16"),
        ),
        Invalid(  # `layers.extend([...])` in a loop extends the list as `layers += [...]` does: the LeakyReLU follows the first conv or the conv of the turn before
            """
from torch import nn
class Gen(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        layers = [nn.Conv1d(4, c, 1)]
        for _ in range(n):
            layers.extend([nn.LeakyReLU(0.2), nn.Conv1d(c, c, 1)])
        layers += (nn.Conv1d(c, 1, 1),)
        self.model = nn.Sequential(*layers)
    def forward(self, x):
        return self.model(x)
""",
            line=7,
            column=28,
            fixed="""
from torch import nn
class Gen(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        layers = [nn.Conv1d(4, c, 1)]
        for _ in range(n):
            layers.extend([nn.LeakyReLU(0.2, inplace=True), nn.Conv1d(c, c, 1)])
        layers += (nn.Conv1d(c, 1, 1),)
        self.model = nn.Sequential(*layers)
    def forward(self, x):
        return self.model(x)
""",
            harness=_runs("Gen(4, 2)", "2, 4, 16"),
        ),
        Invalid(  # after the loop the name holds the sum its last turn bound (nothing later in the body reads it) or, with no turn, a number: no tensor another reads (vincentherrmann/pytorch-wavenet's skip sum, issue 27)
            """
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv1d(c, c, 1) for _ in range(n)])
        self.head = nn.Conv1d(c, c, 1)
    def forward(self, x):
        skip = 0
        for conv in self.convs:
            s = conv(x)
            skip = s + skip
            x = x + s
        out = F.relu(skip)
        return self.head(out)
""",
            line=14,
            column=15,
            config=_EXACT,
            message="a fresh sum",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv1d(c, c, 1) for _ in range(n)])
        self.head = nn.Conv1d(c, c, 1)
    def forward(self, x):
        skip = 0
        for conv in self.convs:
            s = conv(x)
            skip = s + skip
            x = x + s
        out = F.relu(skip, inplace=True)
        return self.head(out)
""",
            harness=_runs("Net(4, 2)", "2, 4, 8"),
        ),
        Invalid(  # a script's training loop at module level: the hinge's ReLU is built for one call on a fresh difference (AlexiaJM/RelativisticGAN, issue 27)
            """
import torch
d = torch.randn(6, requires_grad=True)
for _ in range(2):
    loss = torch.nn.ReLU()(1.0 - d).mean()
    loss.backward()
""",
            line=4,
            column=12,
            config=_EXACT,
            message="`nn.ReLU` built for one call on a fresh difference",
            fixed="""
import torch
d = torch.randn(6, requires_grad=True)
for _ in range(2):
    loss = torch.nn.ReLU(inplace=True)(1.0 - d).mean()
    loss.backward()
""",
            harness=Harness(setup="import torch", then="result = (loss, d.grad)"),
        ),
        Invalid(  # module level: a name bound on the line before to a fresh product, mentioned nowhere else in the file
            """
import torch
import torch.nn.functional as F
x = torch.randn(4, 3, requires_grad=True)
w = torch.randn(3, 3, requires_grad=True)
h = x @ w
y = F.relu(h)
y.sum().backward()
""",
            line=6,
            column=5,
            config=_EXACT,
            message="a fresh matrix product",
            fixed="""
import torch
import torch.nn.functional as F
x = torch.randn(4, 3, requires_grad=True)
w = torch.randn(3, 3, requires_grad=True)
h = x @ w
y = F.relu(h, inplace=True)
y.sum().backward()
""",
            harness=Harness(setup="import torch", then="result = (y, x.grad, w.grad)"),
        ),
        Invalid(  # a Sequential made before a loop is the same container inside it: each turn adds a conv, then a ReLU (RelativisticGAN's generator, issue 27)
            """
from torch import nn
class Gen(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        main = nn.Sequential()
        i = 0
        while i < n:
            main.add_module("conv%d" % i, nn.Conv2d(c, c, 3, padding=1))
            main.add_module("relu%d" % i, nn.ReLU())
            i += 1
        self.main = main
    def forward(self, x):
        return self.main(x)
""",
            line=9,
            column=43,
            config=_EXACT,
            message="`nn.ReLU` after `nn.Conv2d`",
            fixed="""
from torch import nn
class Gen(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        main = nn.Sequential()
        i = 0
        while i < n:
            main.add_module("conv%d" % i, nn.Conv2d(c, c, 3, padding=1))
            main.add_module("relu%d" % i, nn.ReLU(inplace=True))
            i += 1
        self.main = main
    def forward(self, x):
        return self.main(x)
""",
            harness=_runs("Gen(4, 2)", "2, 4, 8, 8"),
        ),
        Invalid(  # `conv1` bound elsewhere on another object only to a new convolution, and by a name that starts "bn": whichever layer it holds, its output is fresh (facebookresearch/DomainBed, issue 27)
            """
import torch.nn.functional as F
from torch import nn
def adapt(model, c, suffix):
    model.conv1 = nn.Conv2d(c, 8, 3)
    setattr(model, "bn" + suffix, nn.Identity())
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3)
    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        return x
""",
            line=12,
            column=13,
            config=_EXACT,
            message="the fresh output of `self.conv1`",
            fixed="""
import torch.nn.functional as F
from torch import nn
def adapt(model, c, suffix):
    model.conv1 = nn.Conv2d(c, 8, 3)
    setattr(model, "bn" + suffix, nn.Identity())
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3)
    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x, inplace=True)
        return x
""",
            harness=_runs("Net()", "1, 3, 8, 8"),
        ),
        Invalid(  # `self.weight` is a Parameter bound once: its `mm` is torch's, a new tensor mm keeps nothing of (williamleif/graphsage-simple, issue 27)
            """
import torch
import torch.nn.functional as F
from torch import nn
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 6))
    def forward(self, x):
        return F.relu(self.weight.mm(x.t()))
""",
            line=9,
            column=16,
            config=_EXACT,
            message="the fresh result of `self.weight.mm`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 6))
    def forward(self, x):
        return F.relu(self.weight.mm(x.t()), inplace=True)
""",
            harness=_runs("Enc()", "3, 6"),
        ),
        Invalid(  # the list's name is rebound to its Sequential: after that line it is the Sequential, handed on whole (taesungp/contrastive-unpaired-translation, issue 27)
            """
from torch import nn
def prepare(net):
    return net.float()
def head(c, n):
    mlp = []
    for _ in range(n):
        mlp.append(nn.Conv2d(c, c, 3, padding=1))
        mlp.append(nn.ReLU())
    mlp.append(nn.Conv2d(c, 4, 3))
    mlp = nn.Sequential(*mlp)
    prepare(mlp)
    return mlp
""",
            line=8,
            column=20,
            config=_EXACT,
            message="`nn.ReLU` after `nn.Conv2d`",
            fixed="""
from torch import nn
def prepare(net):
    return net.float()
def head(c, n):
    mlp = []
    for _ in range(n):
        mlp.append(nn.Conv2d(c, c, 3, padding=1))
        mlp.append(nn.ReLU(inplace=True))
    mlp.append(nn.Conv2d(c, 4, 3))
    mlp = nn.Sequential(*mlp)
    prepare(mlp)
    return mlp
""",
            harness=_runs("head(4, 2)", "2, 4, 8, 8"),
        ),
        Invalid(  # a class that is an nn.Sequential and nothing more, built by `super().__init__(*modules)`; its instances are appended to a list that becomes a ModuleList whose elements only run whole (DensePose's ASPP, issue 27, the twenty-second part)
            """
import torch
from torch import nn
class Branch(nn.Sequential):
    def __init__(self, c, d):
        modules = [
            nn.Conv2d(c, c, 3, padding=d, dilation=d, bias=False),
            nn.GroupNorm(2, c),
            nn.ReLU(),
        ]
        super(Branch, self).__init__(*modules)
class Pyramid(nn.Module):
    def __init__(self, c, rates):
        super().__init__()
        modules = []
        for r in rates:
            modules.append(Branch(c, r))
        self.convs = nn.ModuleList(modules)
    def forward(self, x):
        res = []
        for conv in self.convs:
            res.append(conv(x))
        return torch.cat(res, dim=1)
""",
            line=8,
            column=13,
            config=_EXACT,
            message="`nn.ReLU` after `nn.GroupNorm`",
            fixed="""
import torch
from torch import nn
class Branch(nn.Sequential):
    def __init__(self, c, d):
        modules = [
            nn.Conv2d(c, c, 3, padding=d, dilation=d, bias=False),
            nn.GroupNorm(2, c),
            nn.ReLU(inplace=True),
        ]
        super(Branch, self).__init__(*modules)
class Pyramid(nn.Module):
    def __init__(self, c, rates):
        super().__init__()
        modules = []
        for r in rates:
            modules.append(Branch(c, r))
        self.convs = nn.ModuleList(modules)
    def forward(self, x):
        res = []
        for conv in self.convs:
            res.append(conv(x))
        return torch.cat(res, dim=1)
""",
            harness=_runs("Pyramid(4, [1, 2])", "2, 4, 8, 8"),
        ),
        Invalid(  # the class's `forward` runs the Sequential's own and then resizes; another class reaches its layers by names a method numbers, none of them the instances' container (DensePose's ASPPPooling and head, issue 27, the twenty-second part)
            """
import torch
import torch.nn.functional as F
from torch import nn
class Pool(nn.Sequential):
    def __init__(self, c):
        super(Pool, self).__init__(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c, 1), nn.GroupNorm(2, c), nn.ReLU())
    def forward(self, x):
        size = x.shape[-2:]
        x = super(Pool, self).forward(x)
        return F.interpolate(x, size=size, mode="nearest")
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        modules = []
        modules.append(Pool(c))
        self.pools = nn.ModuleList(modules)
        for i in range(n):
            self.add_module(self._layer_name(i), nn.Conv2d(c, c, 1))
        self.n = n
    def forward(self, x):
        x = torch.cat([pool(x) for pool in self.pools], 1)
        for i in range(self.n):
            layer_name = self._layer_name(i)
            x = getattr(self, layer_name)(x)
        return x
    def _layer_name(self, i):
        layer_name = "conv_fcn{}".format(i + 1)
        return layer_name
""",
            line=6,
            column=101,
            config=_EXACT,
            message="`nn.ReLU` after `nn.GroupNorm`",
            fixed="""
import torch
import torch.nn.functional as F
from torch import nn
class Pool(nn.Sequential):
    def __init__(self, c):
        super(Pool, self).__init__(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c, 1), nn.GroupNorm(2, c), nn.ReLU(inplace=True))
    def forward(self, x):
        size = x.shape[-2:]
        x = super(Pool, self).forward(x)
        return F.interpolate(x, size=size, mode="nearest")
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        modules = []
        modules.append(Pool(c))
        self.pools = nn.ModuleList(modules)
        for i in range(n):
            self.add_module(self._layer_name(i), nn.Conv2d(c, c, 1))
        self.n = n
    def forward(self, x):
        x = torch.cat([pool(x) for pool in self.pools], 1)
        for i in range(self.n):
            layer_name = self._layer_name(i)
            x = getattr(self, layer_name)(x)
        return x
    def _layer_name(self, i):
        layer_name = "conv_fcn{}".format(i + 1)
        return layer_name
""",
            harness=_runs("Head(4, 2)", "2, 4, 8, 8"),
        ),
        Invalid(  # the layers given to the Sequential's constructor directly; the instance held by `self` and only called
            """
from torch import nn
class Pool(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c, 1), nn.GroupNorm(2, c), nn.ReLU())
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pool = Pool(c)
    def forward(self, x):
        return self.pool(x) + x
""",
            line=4,
            column=91,
            config=_EXACT,
            message="`nn.ReLU` after `nn.GroupNorm`",
            fixed="""
from torch import nn
class Pool(nn.Sequential):
    def __init__(self, c):
        super().__init__(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c, 1), nn.GroupNorm(2, c), nn.ReLU(inplace=True))
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.pool = Pool(c)
    def forward(self, x):
        return self.pool(x) + x
""",
            harness=_runs("Net(4)", "2, 4, 8, 8"),
        ),
        Invalid(  # a plain list of layers, each bound to a name, registered under a numbered name and appended; the function's other loop binds the same name to another list's elements (PointRend's heads, issue 27, the twenty-second part)
            """
import torch.nn.functional as F
from torch import nn
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.blocks = [nn.Sigmoid()]
        self.fcs = []
        for k in range(n):
            fc = nn.Linear(c, c)
            self.add_module("fc{}".format(k + 1), fc)
            self.fcs.append(fc)
    def forward(self, x):
        for layer in self.blocks:
            x = layer(x)
        for layer in self.fcs:
            x = F.relu(layer(x))
        return x
""",
            line=16,
            column=17,
            config=_EXACT,
            message="the fresh output of `layer`, a layer of a list",
            fixed="""
import torch.nn.functional as F
from torch import nn
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.blocks = [nn.Sigmoid()]
        self.fcs = []
        for k in range(n):
            fc = nn.Linear(c, c)
            self.add_module("fc{}".format(k + 1), fc)
            self.fcs.append(fc)
    def forward(self, x):
        for layer in self.blocks:
            x = layer(x)
        for layer in self.fcs:
            x = F.relu(layer(x), inplace=True)
        return x
""",
            harness=_runs("Head(4, 2)", "3, 4"),
        ),
        Invalid(  # a statement between the appends only updates a width: the ReLU still follows the conv (TensorMask's subnets, issue 27, the twenty-second part)
            """
from torch import nn
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        subnet = []
        width = c
        for _ in range(n):
            subnet.append(nn.Conv2d(width, c, 3, padding=1))
            width = c
            subnet.append(nn.ReLU())
        self.subnet = nn.Sequential(*subnet)
    def forward(self, x):
        return self.subnet(x)
""",
            line=10,
            column=27,
            config=_EXACT,
            message="`nn.ReLU` after `nn.Conv2d`",
            fixed="""
from torch import nn
class Head(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        subnet = []
        width = c
        for _ in range(n):
            subnet.append(nn.Conv2d(width, c, 3, padding=1))
            width = c
            subnet.append(nn.ReLU(inplace=True))
        self.subnet = nn.Sequential(*subnet)
    def forward(self, x):
        return self.subnet(x)
""",
            harness=_runs("Head(4, 2)", "2, 4, 8, 8"),
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._pending: list[_Pending] = []
        self._lists: dict[int, list[tuple[str, Union[cst.List, cst.Tuple]]]] = {}  # per function: name, display
        self._sequential_targets: dict[int, str] = {}  # id(nn.Sequential call) -> the self attribute it is stored in
        self._bound_to: dict[int, str] = {}  # id(call) -> the plain name it is assigned to
        # id(call) -> the attribute it is stored in on another module (`self.encoder_q.fc = ...`: "fc")
        self._path_targets: dict[int, str] = {}
        self._no_grad_calls: set[int] = set()  # id(F.<activation>(...)) of the calls made with gradients off
        # (class, attribute) -> the modules `self.<attribute> = nn.ReLU()` may be, how many bindings
        # of the attribute the constructor writes, and per call of it whether its input is fresh
        self._module_calls: dict[tuple[str, str], tuple] = {}

    # ------------------------------------------------------------------ sequences of layers

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        if target is not None and self_attr(target) is not None and isinstance(node.value, cst.Call):
            self._sequential_targets[id(node.value)] = target.attr.value  # type: ignore[union-attr]
        elif type(target) is cst.Attribute and type(target.value) is cst.Attribute and isinstance(node.value, cst.Call):
            self._path_targets[id(node.value)] = target.attr.value  # `self.encoder_q.fc = nn.Sequential(...)`
        if isinstance(target, cst.Name) and isinstance(node.value, cst.Call):
            self._bound_to[id(node.value)] = target.value
        if isinstance(target, cst.Name) and isinstance(node.value, cst.List):
            self._note_list(target.value, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and isinstance(node.operator, cst.AddAssign) and isinstance(node.value, (cst.List, cst.Tuple)):
            self._note_list(node.target.value, node.value)

    def _note_extended(self, node: cst.Call) -> None:
        """`name.extend([a, b])` extends the list as `name += [a, b]` does (analysis/list_tails.py)."""
        func = node.func
        if (
            type(func) is cst.Attribute
            and func.attr.value == "extend"
            and type(func.value) is cst.Name
            and len(node.args) == 1
            and node.args[0].keyword is None
            and not node.args[0].star
            and type(node.args[0].value) in (cst.List, cst.Tuple)
        ):
            self._note_list(func.value.value, node.args[0].value)  # type: ignore[arg-type]

    def _note_list(self, name: str, display: Union[cst.List, cst.Tuple]) -> None:
        scope = self.ctx.function_node
        if scope is not None:
            self._lists.setdefault(id(scope), []).append((name, display))

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        self._note_extended(node)
        if ctx.grad_mode is GradMode.DISABLED and (
            final_name(node.func) in INPLACE_FUNCTIONS or (type(node.func) is cst.Call and final_name(node.func.func) in INPLACE_MODULES)
        ):
            self._no_grad_calls.add(id(node))
        if torch_nn_name(ctx, node.func) == "Sequential" and ctx.resolve(node.func) is not None:
            attribute = self._sequential_targets.get(id(node))
            elements = sequential_elements(node, ctx)
            candidates = self._sequence_candidates(elements, attribute)
            # Asked only with a candidate: what changes a module is a walk of the whole file.
            if candidates:
                name = attribute or self._bound_to.get(id(node))
                stored_on = self._path_targets.get(id(node)) if name is None else None
                if stored_on is not None:
                    # On a submodule (MoCo's `self.encoder_q.fc = nn.Sequential(nn.Linear(...), nn.ReLU(), fc)`):
                    # it runs its layers in order like any Sequential when nothing of the file that may
                    # name it (every `.fc`) changes, splits, iterates or hands on its layers.
                    if not self._elements_may_change(stored_on) and not path_used_other_than_called(stored_on, ctx):
                        self._pending.extend(candidates)
                elif not self._elements_may_change(name, node, ctx.class_name if attribute is not None else None):
                    self._pending.extend(candidates)
                elif attribute is not None:  # (held by `self`: its other uses are checked in `finish`)
                    self._pending.extend(self._inside_parts(attribute, elements, candidates))

    def _inside_parts(self, name: str, elements: list, candidates: list[_Pending]) -> list[_Pending]:
        """A Sequential on `self` whose elements stay as built, run only by parts at literal positions
        (robustness's VGG: `self.classifier[:4](x)`, then `self.classifier[-2:](h)`): the candidates
        inside a part, at a position no part starts at (there the layer before runs on the caller's
        tensor), its layer before the same as in the whole.  The layer after it counts only where
        no part ends right after it (else the activation's output goes to the caller)."""
        changes = module_changes(self.ctx)
        owner = self.ctx.class_name
        parts = changes.parts_run(name, owner)
        if not parts or changes.elements_changed(name, owner) or any(holder is None for _, holder in elements):
            return []  # (an unpacked part of unknown length: a position from the end is not known)
        n = len(elements)
        spans = [(start + n if start < 0 else start, n if stop is None else min(stop + n if stop < 0 else stop, n)) for start, stop in parts]
        kept = []
        for candidate in candidates:
            at = next((i for i, (element, _) in enumerate(elements) if element is candidate.activation), None)
            if at is None or any(start == at for start, _ in spans) or not any(start < at < stop for start, stop in spans):
                continue
            if any(start < at and stop == at + 1 for start, stop in spans):
                candidate.then = None
            kept.append(candidate)
        return kept

    def _elements_may_change(self, name: Optional[str], sequential: Optional[cst.Call] = None, class_name: Optional[str] = None) -> bool:
        """Could the layers of a Sequential bound to `name` (None: not bound to a name here) be
        replaced or removed (`features[0] = nn.Identity()`, `del net[0]`, `net.insert(...)`)?  Then
        the activation may follow something else, or come first and overwrite the caller's tensor.
        So could a part of it run alone (`mlp[1:]`, `mlp[2]`).  A `sequential` no name holds, kept
        in a container of the class whose elements only ever run whole (`self.mlps.append(...)`, then
        `self.mlps[i]` called: analysis/sequential_homes.py), keeps its layers as built whatever other
        containers of the file change.  `class_name`: the class whose `self.<name>` holds it, whose
        containers alone it asks about (another class's `self.<name>` is another module)."""
        changes = module_changes(self.ctx)
        if name is None:
            if not changes.changed_elements:
                return False
            home = sequential_home(self.ctx, sequential) if sequential is not None else None
            # (an element changed through a name that may be any module may be this one's)
            return home is None or elements_may_change_anywhere(self.ctx) or not runs_elements_whole(self.ctx, home)
        return changes.elements_changed(name, class_name) or changes.parts_may_run_apart(name, class_name)

    def _sequence_candidates(self, elements: list[tuple[cst.BaseExpression, Optional[cst.CSTNode]]], attribute: Optional[str]) -> list[_Pending]:
        """The activations of a Sequential's layers that could run in place, if its layers stay as built."""
        ctx = self.ctx
        candidates: list[_Pending] = []
        following = [*(e for e, _ in elements[2:]), None]
        for (previous, _), (element, holder), after in zip(elements, elements[1:], following):
            if isinstance(element, cst.Name) and isinstance(previous, (cst.Call, cst.Name)):
                named = activation_named(ctx, element.value)  # `relu = nn.ReLU()`, then `[conv1, bn1, relu, pool1]`
                if named is None or (named.args and _explained(ctx.module, named)):
                    continue  # (`relu = nn.ReLU(False)  # why`: a choice the catalogue exempts with a comment)
                element = named
            if not isinstance(element, cst.Call) or not isinstance(previous, (cst.Call, cst.Name, cst.Attribute)):
                continue  # (`self.bn1`, a layer the class keeps only for this place: layer_before)
            chosen = activation_class(ctx, element)
            before = layer_before(ctx, previous) if chosen is not None else None
            if chosen is None or before is None:
                continue
            kind, kinds = chosen
            if (before.kind not in FRESH_OUTPUT_LAYERS and before.fresh_class is None) or (not kinds and ctx.resolve(element.func) is None):
                continue
            if before.kind not in OUTPUT_NOT_SAVED and before.fresh_class is None and not self.selected_by_code():
                continue  # after `nn.GELU` / `nn.Softplus` (an activation, not a layer): exact selection only
            argument, value = inplace_argument(element, INPLACE_MODULES[kind])
            if value is not False:
                continue
            if argument is not None and holder is not None and _has_comment(holder):
                continue  # `inplace=False  # why`
            then = layer_kind(ctx, after) if isinstance(after, cst.Call) else None
            candidates.append(_Pending(element, kind, before.described, ctx.class_name, attribute, then, kinds))
        return candidates

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        tails: dict[str, dict] = {}  # per list name: what it may end with before each display extending it
        for name, listed in self._lists.pop(id(node), []):
            display = [e.value for e in listed.elements]
            if display and all(type(e) is cst.List for e in display):
                self._group_candidates(node, name, display)
                continue
            # The cheap test first: most lists hold no activation after a layer (a walk of the body follows).
            candidates = self._sequence_candidates([(e, None) for e in display], None)
            candidates += self._tail_candidates(node, name, listed, tails)
            if (
                candidates
                and unpacked_into_sequential_only(node.body, name, self.ctx)
                and not self._elements_may_change(sequential_bound_to(node.body, name, self.ctx), sequential_unpacking(node.body, name, self.ctx))
            ):
                self._pending.extend(candidates)
        for added in added_in_function(node, self.ctx):
            self._check_added(added, node)
        # `super().__init__(*modules)` in the constructor of a class that is an `nn.Sequential` and
        # nothing more: its instances run those layers in order (analysis/sequential_subclasses.py)
        if node.name.value == "__init__":
            layers = constructor_layers(self.ctx, node)
            if layers:
                self._pending.extend(self._sequence_candidates(layers, None))
        # Every function, not only `forward`: a helper that `forward` calls (`self._attention(h)`),
        # a message function handed to a graph library (`g.apply_edges(self.edge_attention)`) or a
        # metric (`cs_map = a / b; cs_map = F.relu(cs_map)`) computes the same fresh values; whether
        # its activation is safe in place does not depend on who calls it.  Only in the methods of
        # nn.Module classes are `self.<layer>` outputs known (analysis/class_layers.py).
        if self.ctx.frame.key is not None:
            values = FreshValues(self.ctx, node)
            for block in function_blocks(node):
                earlier: list[cst.CSTNode] = []
                for statement in block:
                    self._check_statement(statement, earlier, values)
                    earlier.append(statement)

    def _tail_candidates(self, node: cst.FunctionDef, name: str, listed: Union[cst.List, cst.Tuple], tails: dict) -> list[_Pending]:
        """The first element of a display that extends a list (`model += [nn.LeakyReLU(0.2), conv]`)
        follows whatever the list may end with there (analysis/list_tails.py: the last element of an
        earlier display, a turn of a loop before, an `if` branch): a candidate where it is one after
        each of them."""
        if not listed.elements or type(listed.elements[0]) is not cst.Element:
            return []
        first = listed.elements[0].value
        if not isinstance(first, cst.Name) and not (isinstance(first, cst.Call) and activation_class(self.ctx, first) is not None):
            return []  # (the cheap test before the function's reading)
        if name not in tails:
            tails[name] = display_predecessors(node, name)
        previous = tails[name].get(id(listed))
        if not previous:
            return []
        second = listed.elements[1].value if len(listed.elements) > 1 else None
        following = [(second, None)] if second is not None else []
        pending = _after_each(
            [c for c in self._sequence_candidates([(before, None), (first, listed.elements[0]), *following], None) if c.activation is not second]
            for before in previous
        )  # fmt: skip
        return [pending] if pending is not None else []

    def _group_candidates(self, node: cst.FunctionDef, name: str, display: list) -> None:
        """A list of layer groups (`sequence += [[conv, nn.LeakyReLU(0.2)]]`), each group its own
        `nn.Sequential(*sequence[n])`: within a group the layers follow one another as listed."""
        candidates = [c for group in display for c in self._sequence_candidates([(e.value, e) for e in group.elements], None)]
        if candidates and groups_unpacked_into_sequential_only(node.body, name, self.ctx) and not self._elements_may_change(None):
            self._pending.extend(candidates)

    def leave_Module(self, node: cst.Module) -> None:
        # The module's names are globals: another file may import them, or the file read them through
        # `globals()`; only a script nobody imports keeps them to itself (analysis/script_globals.py).
        if not module_names_private(self.ctx):
            return
        for added in added_in_module(node, self.ctx):
            self._check_added(added)
        # The module's own code (a script's training loop: `torch.nn.ReLU()(1.0 - y_pred)` in a
        # hinge loss) computes fresh values as a function does; its names are the file's globals.
        values = FreshValues(self.ctx, node)
        for block in module_code_blocks(node):
            earlier: list[cst.CSTNode] = []
            for statement in block:
                self._check_statement(statement, earlier, values)
                earlier.append(statement)

    def _check_added(self, added: AddedAfter, function: Optional[cst.FunctionDef] = None) -> None:
        """A layer added right after one of several (analysis/added_layers.py): a candidate where it
        is one after each."""
        pending = _after_each(self._added_pair_candidates(before, added, function) for before in added.previous)
        if pending is not None:
            self._pending.append(pending)

    def _added_pair_candidates(self, previous: cst.Call, added: AddedAfter, function: Optional[cst.FunctionDef]) -> list[_Pending]:
        method, receiver, scope = added.method, added.receiver, added.scope
        pair: list[tuple[cst.BaseExpression, Optional[cst.CSTNode]]] = [(previous, None), (added.layer, None)]
        if method == "setitem":  # `layers["relu1"] = nn.ReLU()` of an OrderedDict given to `nn.Sequential(layers)`
            container = dict_given_to_sequential_only(scope, receiver, self.ctx)
            if container is None:
                return []
            candidates = self._sequence_candidates(pair, None)
            return candidates if candidates and not self._elements_may_change(container or None) else []
        if method == "append":
            if "." in receiver:
                return []
            if not unpacked_into_sequential_only(scope, receiver, self.ctx) and not helper_list_into_sequential_only(function, receiver, self.ctx):
                return []  # (a helper's list parameter: `layers = deconv(layers, ...)` callers, list_helpers.py)
            candidates = self._sequence_candidates(pair, None)
        elif receiver in added.made:
            candidates = self._sequence_candidates(pair, added.made[receiver])
        else:
            return []
        container = receiver.rpartition(".")[2] if method != "append" else sequential_bound_to(scope, receiver, self.ctx)
        if candidates and container is None and method == "append":
            # `return nn.Sequential(*layers)` of a method whose callers store it in one `self.<attribute>`
            # (analysis/returned_sequentials.py): that attribute's uses are all that can reach its layers
            held = attribute_holding_returned(self.ctx, function, sequential_unpacking(scope, receiver, self.ctx))
            if held is not None:
                owner, attribute = held
                if self._elements_may_change(attribute, None, owner):
                    return []
                for candidate in candidates:
                    candidate.class_name, candidate.attribute = owner, attribute  # (its other uses: `finish`)
                return candidates
        if candidates and not self._elements_may_change(container):
            return candidates
        return []

    def finish(self, facts) -> None:
        self._report_module_activations()
        if not self._pending:
            return
        changes = module_changes(self.ctx)
        classes: Optional[dict[str, cst.ClassDef]] = None
        exposed: dict[tuple[str, str], bool] = {}
        for pending in self._pending:
            # A hook on one of its layers may keep or wrap the output the activation would overwrite.
            if changes.hooks_may_see([pending.attribute]) if pending.attribute is not None else changes.hooked:
                continue
            if pending.attribute is not None and pending.class_name is not None:
                if classes is None:
                    classes = class_nodes(self.ctx.module)
                key = (pending.class_name, pending.attribute)  # (a walk of the class, once per attribute)
                if key not in exposed:
                    exposed[key] = used_other_than_called(classes.get(pending.class_name), pending.attribute, self.ctx)
                if exposed[key]:
                    continue
            position = INPLACE_MODULES[pending.kind]
            # Every class the activation may be must agree on what in place saves and on its safety.
            kinds = pending.kinds or (pending.kind,)
            # A module's construction does not tell whether it runs forward-only.
            effects = {self._effect(k, forward_only=False, next_keeps_input=keeps_its_input(pending.then)) for k in kinds}
            if len(effects) != 1 or None in effects:
                continue
            (effect,) = effects
            safeties = [inplace_fix_safety(k, pending.activation) for k in kinds]
            if None in safeties:
                continue  # in place, its backward raises (a negative slope)
            safe = all(safeties)
            named = " or ".join(f"`nn.{k}`" for k in kinds)
            if pending.kinds:
                named = f"`{final_name(pending.activation.func)}` ({named})"
            message = f"{named} after {pending.after} can run in place: `inplace=True` {effect}"
            fix = self.replace(pending.activation, with_inplace(pending.activation, position), "Add `inplace=True`", safe=safe)
            self.report(pending.activation, message, fix)

    def _effect(self, kind: str, *, forward_only: bool, next_keeps_input: bool) -> Optional[str]:
        """What `inplace=True` saves for this activation here, as the message says it; None where it
        saves nothing that a training step sees and ML003 was not selected by its exact code (then
        the site is not in the default set), and for a dropout where gradients may be on."""
        saving = inplace_saving(kind, forward_only=forward_only, next_keeps_input=next_keeps_input)
        if saving is Saving.RAISES_ON_CUDA:
            return None
        if saving not in (Saving.IN_TRAINING, Saving.FORWARD_ONLY) and not self.selected_by_code():
            return None
        return _MESSAGES[saving].format(kind=kind)

    # ------------------------------------------------------------------ activations on fresh values

    def _check_statement(self, statement, earlier: list, values: FreshValues) -> None:
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return
        small = statement.body[0]
        direct: Optional[cst.BaseExpression] = None  # the statement's own value: `x = F.relu(x)`
        target: Optional[str] = None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            target, direct = small.targets[0].target.value, small.value
        elif isinstance(small, cst.Return):
            direct = small.value
        elif not isinstance(small, (cst.Expr, cst.AugAssign)):
            return  # (`log_pi -= torch.log(F.relu(1 - pi.pow(2)))`: its target is no call's direct value)
        for call in calls_run_by(small):
            attribute = self_attr(call.func)
            held = values.layers.activation(attribute)
            if held is not None:  # `self.relu(...)`: the module is reported in `finish` if every call is safe
                owner, module, bindings = held
                # `self.criterion(outputs, labels)` where a branch of the constructor binds a loss
                # instead: the call raises if the attribute holds the activation, so it never runs it
                # on `outputs` (None: a call that counts as a use, neither safe nor unsafe)
                if cannot_run_activation(call):
                    safe = None
                else:
                    safe = values.fresh_input(call, statement, earlier, target if call is direct else None, call is direct) is not None
                self._module_calls.setdefault((owner, attribute), (module, bindings, []))[2].append(safe)
            elif self._functional_inplace(call):
                self._check_call(call, statement, earlier, values, target if call is direct else None, call is direct)
            elif (method := tensor_method_activation(call)) is not None:  # `self.w_1(x).relu()`
                self._check_method(call, *method, statement, earlier, values, target if call is direct else None, call is direct)
            elif type(call.func) is cst.Call:  # `nn.ReLU()(1.0 - d_out)`: a module built and called at once
                self._check_inline_module(call, statement, earlier, values, target if call is direct else None, call is direct)

    def _check_inline_module(self, call: cst.Call, statement, earlier, values: FreshValues, target, is_direct: bool) -> None:
        """`torch.nn.ReLU()(1.0 - d_out_real).mean()` (a GAN's hinge loss): the module is built for
        this one call, so whether it may run in place is whether its input is fresh."""
        built = call.func
        kind = torch_nn_name(self.ctx, built.func)  # type: ignore[attr-defined]
        if kind not in INPLACE_MODULES:
            return
        argument, value = inplace_argument(built, INPLACE_MODULES[kind])  # type: ignore[arg-type]
        if value is not False or argument is not None:
            return  # already in place, not a literal, or `inplace=False` written out
        after = values.fresh_input(call, statement, earlier, target, is_direct)
        if after is None:
            return
        effect = self._effect(kind, forward_only=id(call) in self._no_grad_calls, next_keeps_input=False)
        safe = inplace_fix_safety(kind, built) if effect is not None else None  # type: ignore[arg-type]
        if safe is None:
            return
        message = f"`nn.{kind}` built for one call on {after} can run in place: `inplace=True` {effect}"
        fix = self.replace(built, with_inplace(built, INPLACE_MODULES[kind]), "Add `inplace=True`", safe=safe)  # type: ignore[arg-type]
        self.report(call, message, fix)

    def _functional_inplace(self, call: cst.Call) -> bool:
        """`F.relu(x, ...)` or another functional form with an `inplace` parameter (the cheap test first)."""
        if not call.args or call.args[0].keyword or call.args[0].star:
            return False
        qualified = self.ctx.resolve(call.func) or ""
        module, _, function_name = qualified.rpartition(".")
        if module == "torch":  # `torch.relu(x)`: no `inplace` parameter, an in-place twin `torch.relu_`
            return function_name in INPLACE_TWINS
        return module == "torch.nn.functional" and function_name in INPLACE_FUNCTIONS

    def _check_call(self, call: cst.Call, statement, earlier, values: FreshValues, target, is_direct: bool) -> None:
        qualified = self.ctx.resolve(call.func) or ""
        module, _, function_name = qualified.rpartition(".")
        twin = INPLACE_TWINS.get(function_name) if module == "torch" else None
        if twin is None:
            if module != "torch.nn.functional" or function_name not in INPLACE_FUNCTIONS:
                return
            argument, value = inplace_argument(call, INPLACE_FUNCTIONS[function_name])
            if value is not False or (argument is not None and _statement_has_comment(statement)):
                return
        after = values.fresh_input(call, statement, earlier, target, is_direct)
        if after is None:
            return
        # The layer that reads the result is not followed here: whether it keeps it is not known.
        effect = self._effect(function_name, forward_only=id(call) in self._no_grad_calls, next_keeps_input=False)
        if effect is None:
            return
        safe = inplace_fix_safety(function_name, call)
        if safe is None:
            return  # in place, its backward raises (a negative slope)
        if twin is not None:
            message = f"`torch.{function_name}` on {after} can run in place: `torch.{twin}` {effect}"
            # `from torch import relu`: the twin is not imported under that name, so no fix.
            renamed = call.with_changes(func=call.func.with_changes(attr=cst.Name(twin))) if type(call.func) is cst.Attribute else None
            fix = self.replace(call, renamed, f"Call `torch.{twin}`", safe=safe) if renamed is not None else None
        else:
            message = f"`F.{function_name}` on {after} can run in place: `inplace=True` {effect}"
            fix = self.replace(call, with_inplace(call, INPLACE_FUNCTIONS[function_name]), "Add `inplace=True`", safe=safe)
        self.report(call, message, fix)

    def _check_method(self, call: cst.Call, name: str, receiver: cst.BaseExpression, statement, earlier, values: FreshValues, target, is_direct: bool) -> None:
        """`h.relu()`: the Tensor-method form of `torch.relu(h)`, reported where that would be (the
        receiver a fresh value nothing reads after it), fixed to `h.relu_()`; only where the receiver
        is proven a tensor (analysis/tensor_values.py: another class's `relu()`, a micrograd `Value`'s,
        has no `relu_()`)."""
        if not proven_tensor(receiver, values):
            return
        after = values.fresh_input(call, statement, earlier, target, is_direct, source=receiver)
        if after is None:
            return
        effect = self._effect(name, forward_only=id(call) in self._no_grad_calls, next_keeps_input=False)
        safe = inplace_fix_safety(name, call) if effect is not None else None
        if safe is None:
            return
        twin = INPLACE_TWINS[name]
        message = f"`.{name}()` on {after} can run in place: `.{twin}()` {effect}"
        renamed = call.with_changes(func=call.func.with_changes(attr=cst.Name(twin)))  # type: ignore[attr-defined]
        self.report(call, message, self.replace(call, renamed, f"Call `.{twin}()`", safe=safe))

    def _report_module_activations(self) -> None:
        """`self.relu = nn.ReLU()` whose every call is on a fresh value nothing reads again, and
        which the file uses nowhere else (no other `.relu` at all: not passed on, not called by a
        method this rule does not follow, not reached through another object)."""
        for (class_name, attribute), (built, bindings, calls) in self._module_calls.items():
            # Another class's `self.<attribute>` is that class's module (analysis/attribute_owners.py).
            if False in calls or True not in calls or attribute_uses(self.ctx, class_name, attribute) != len(calls) + bindings:
                continue
            for layer in built:
                self._report_module_activation(attribute, layer)

    def _report_module_activation(self, attribute: str, layer) -> None:
        """One `self.<attribute> = nn.<Activation>(...)` whose every call is safe in place."""
        kind = layer.kind
        argument, value = inplace_argument(layer.call, INPLACE_MODULES[kind])
        if value is not False or (argument is not None and _explained(self.ctx.module, layer.call)):
            return  # `inplace=False  # why`: a choice the catalogue exempts only with a comment
        effect = self._effect(kind, forward_only=False, next_keeps_input=False)
        safe = inplace_fix_safety(kind, layer.call) if effect is not None else None
        if safe is None:
            return
        message = (
            f"`self.{attribute} = nn.{kind}(...)` is only called on fresh values that nothing reads again: "
            f"`inplace=True` {effect}"
        )
        fix = self.replace(layer.call, with_inplace(layer.call, INPLACE_MODULES[kind]), "Add `inplace=True`", safe=safe)
        self.report(layer.call, message, fix)


def _explained(module: cst.Module, call: cst.Call) -> bool:
    """Is there a comment in `call`, at the end of the statement that holds it, or on the line just
    before that statement?"""
    if _has_comment(call):
        return True
    for node in code_descendants(module):
        if type(node) is cst.SimpleStatementLine and any(n is call for n in descendants(node)):  # type: ignore[attr-defined]
            before = node.leading_lines[-1].comment if node.leading_lines else None  # type: ignore[attr-defined]
            return node.trailing_whitespace.comment is not None or before is not None or _has_comment(node)  # type: ignore[attr-defined]
    return True  # not found: stay silent


def _has_comment(node: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Comment) for n in descendants(node))


def _statement_has_comment(statement: cst.SimpleStatementLine) -> bool:
    return statement.trailing_whitespace.comment is not None or any(l.comment for l in statement.leading_lines)
