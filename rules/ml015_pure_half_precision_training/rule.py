"""ML015 pure-half-precision-training."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.call_edits import dotted
from memlint.analysis.precision_api import ADAM_FAMILY, FLOAT16_DTYPES, cast_target, keeps_master_weights, keyword, mixed_precision_call
from memlint.analysis.optimized import optimized_models, strip_moves
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml015_pure_half_precision_training.meta import META

class PureHalfPrecisionTraining(Rule):
    """
    ## What it does
    Finds a model cast to float16 and trained by an Adam-family optimizer with no loss scaling. The
    cast (`model.half()`, `model.to(torch.float16)`, `model = Net().cuda().half()`) is reported when
    the model's parameters are then given to an Adam-family optimizer (`Adam`, `AdamW`, `NAdam`,
    `RAdam`, `Adamax`, `SparseAdam`, resolved through imports) in a file that uses no `GradScaler`
    and no autocast.

    The model is matched by name: the expression cast (`model`, `self.model`, or the name the cast
    result is assigned to) must be the one whose `.parameters()` the optimizer receives, directly or
    through a function of the file that returns its argument's parameters
    (`Adam(get_trainable_params(model))`, `memlint/analysis/optimized.py`), or the model is an
    instance of a project class that builds an Adam-family optimizer over its own parameters
    (`self.optim = optim.Adam(params=self.parameters())` in BigGAN's `Generator`, found by the
    project pass: `FileView.adam_classes`; a name every class of the project so called shares). When the optimizer gets a
    variable holding the parameters, or the file uses autocast, a GradScaler, or a framework's
    mixed-precision wrapper (`accelerator.autocast()`), nothing is reported; nor when the file wraps the
    optimizer or model in a wrapper that keeps float32 master weights (apex's `FP16_Optimizer`,
    `amp.initialize`, `network_to_half`, and the copies projects vendor: the optimizer then steps
    float32 weights and the loss is scaled, which is mixed precision).

    ## Why is this bad?
    With float16 weights the optimizer updates them in float16: updates smaller than the weight's
    precision (about 1e-3 relative) are rounded away, Adam's `eps=1e-8` underflows to zero in
    float16 (so a zero second moment divides by zero), and small gradients flush to zero without a
    loss scaler. Training stalls or diverges. Mixed precision (autocast with float32 master weights
    and a GradScaler) gets most of the memory saving, on activations, without these failures; bf16
    has float32's exponent range and needs no scaler.

    ## Example
    ```python
    model = Net().cuda().half()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    ```

    ## Use instead
    ```python
    model = Net().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Fix safety
    No automatic fix: moving to autocast changes the training loop in several places.

    ## Measured effect
    Not measured by memlint's fixtures: pure fp16 halves weights, gradients and Adam state compared
    with fp32 (2+2+4 instead of 4+4+8 bytes per parameter), which is why it is tempting; autocast
    keeps fp32 model state and shrinks activations instead.
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "none"

    VALID = [
        Valid(  # a GradScaler in the file: mixed precision is managed
            """
import torch
model = Net().cuda().half()
optimizer = torch.optim.Adam(model.parameters())
scaler = torch.amp.GradScaler("cuda")
"""
        ),
        Valid(  # SGD has no eps to underflow (the source article's observation)
            """
import torch
model.cuda().half()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
"""
        ),
        Valid(  # another model is cast (an inference teacher)
            """
import torch
teacher = load_teacher().half()
optimizer = torch.optim.AdamW(student.parameters())
"""
        ),
        Valid(  # a project's own Adam
            """
import torch
from myopt import Adam
model = Net().half()
optimizer = Adam(model.parameters())
"""
        ),
        Valid(  # apex's FP16_Optimizer keeps fp32 master weights and scales the loss (transformer-xl's train.py)
            """
import torch.optim as optim
from apex.fp16_utils import FP16_Optimizer
model = MemTransformerLM(n_token)
if args.fp16:
    model = model.half()
optimizer = optim.Adam(model.parameters(), lr=args.lr)
if args.fp16:
    optimizer = FP16_Optimizer(optimizer, static_loss_scale=args.static_loss_scale)
"""
        ),
        Valid(  # an EMA copy built without its optimizer (`if no_optim: return` before it: BigGAN's G_ema)
            """
import torch
from torch import nn, optim
class Generator(nn.Module):
    def __init__(self, lr, no_optim=False):
        super().__init__()
        self.net = nn.Linear(8, 8)
        if no_optim:
            return
        self.optim = optim.Adam(params=self.parameters(), lr=lr)
G_ema = Generator(1e-4, **{"no_optim": True}).cuda()
G_ema = G_ema.half()
"""
        ),
    ]

    INVALID = [
        Invalid(  # the model's class builds its own Adam (BigGAN: G.optim is built in Generator.__init__)
            """
import torch
from torch import nn, optim
class Generator(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.net = nn.Linear(8, 8)
        self.optim = optim.Adam(params=self.parameters(), lr=lr)
G = Generator(1e-4).cuda()
if fp16:
    G = G.half()
""",
            line=10,
            column=9,
            message="`Generator`",
        ),
        Invalid(  # the source article's recipe, with Adam
            """
import torch.optim as optim
from torchvision.models import resnet18
myNet = resnet18().cuda()
myNet.cuda().half()
optimizer_adam = optim.Adam(myNet.parameters(), lr=1e-3)
""",
            line=4,
            column=1,
            message="Adam",
        ),
        Invalid(
            """
import torch
class Trainer:
    def setup(self):
        self.model = build().to(torch.float16)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
""",
            line=4,
            column=22,
        ),
        Invalid(  # the parameters handed through a helper of the file (DALLE-pytorch's train_dalle.py)
            """
import torch
from torch.optim import Adam
def get_trainable_params(model):
    return [params for params in model.parameters() if params.requires_grad]
dalle = DALLE(vae=vae)
if args.fp16:
    dalle = dalle.half()
dalle = dalle.cuda()
opt = Adam(get_trainable_params(dalle), lr=3e-4)
""",
            line=7,
            column=13,
            message="Adam",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._casts: list[tuple[cst.Call, set[str]]] = []
        self._optimized: dict[str, str] = {}  # model expression -> optimizer class
        self._mixed = False
        self._assigned: Optional[str] = None
        # name -> the class its instance was built from and the call (`G = model.Generator(**config)`)
        self._built: dict[str, tuple[str, cst.Call]] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        self._assigned = dotted(target) if target is not None else None
        if self._assigned:
            built = strip_moves(node.value)
            written = dotted(built.func) if isinstance(built, cst.Call) else ""
            last = written.rpartition(".")[2] if written else ""
            if last[:1].isupper():
                self._built[self._assigned] = (last, built)  # type: ignore[assignment]

    def leave_Assign(self, node: cst.Assign) -> None:
        self._assigned = None

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        func = node.func
        qualified = ctx.resolve(func)
        # any sign of a mixed set-up silences a pure-half finding: autocast, a GradScaler, apex's amp /
        # FP16_Optimizer, and more loosely any apex fp16 utility or any object's `.autocast()`
        loose_autocast = isinstance(func, cst.Attribute) and func.attr.value == "autocast"
        if mixed_precision_call(node, ctx) or keeps_master_weights(node, ctx) or loose_autocast:
            self._mixed = True
            return
        if qualified in ADAM_FAMILY:
            params = node.args[0].value if node.args and node.args[0].keyword is None else None
            params_arg = keyword(node, "params")
            params = params_arg.value if params_arg is not None else params
            if params is not None:
                for model in optimized_models(params, ctx.module):
                    self._optimized[model] = qualified.rsplit(".", 1)[1]
            return
        if isinstance(func, cst.Attribute) and cast_target(node, ctx) in FLOAT16_DTYPES:
            names = set()
            receiver = strip_moves(func.value)
            if isinstance(receiver, (cst.Name, cst.Attribute)):
                names.add(dotted(receiver))
            if self._assigned:
                names.add(self._assigned)
            names.discard("")
            if names:
                self._casts.append((node, names))

    def _owns_adam(self, name: str, owners: dict[str, tuple[str, ...]]) -> bool:
        """Was `name` built by a class in `owners` without a truthy argument that skips its optimizer
        (`model.Generator(**{**config, "no_optim": True})`, BigGAN's EMA copy)?"""
        built = self._built.get(name)
        if built is None or built[0] not in owners:
            return False
        return not any(_passes_true(built[1], skip) for skip in owners[built[0]])

    def finish(self, facts) -> None:
        if self._mixed:
            return
        owners = {name: tuple(filter(None, skips.split(","))) for name, skips in self.ctx.project.adam_classes}
        for node, names in self._casts:
            optimizer = next((self._optimized[n] for n in names if n in self._optimized), None)
            if optimizer is None:
                # an instance of a project class that builds its own Adam over its parameters
                # (BigGAN's `G = model.Generator(**config)`, whose __init__ sets `self.optim`)
                owner = next((self._built[n][0] for n in sorted(names) if self._owns_adam(n, owners)), None)
                optimizer = f"the Adam its class `{owner}` builds" if owner is not None else None
            if optimizer is None:
                continue
            model = sorted(names)[0]
            self.report(
                node,
                f"`{model}` is cast to float16 and trained with {optimizer} without autocast or a GradScaler: "
                "fp16 weights lose small updates, Adam's eps (1e-8) underflows and small gradients flush to "
                'zero; keep fp32 weights and use torch.autocast with torch.amp.GradScaler("cuda"), or bf16',
            )



def _passes_true(call: cst.Call, parameter: str) -> bool:
    """Does `call` give `parameter` a true constant: `parameter=True`, or `**{..., "parameter": True}`?"""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == parameter:
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
        if arg.star == "**" and isinstance(arg.value, cst.Dict):
            for element in arg.value.elements:
                if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == parameter:
                    return isinstance(element.value, cst.Name) and element.value.value == "True"
    return False
