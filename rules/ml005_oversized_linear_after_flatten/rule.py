"""ML005 oversized-linear-after-flatten."""

from __future__ import annotations

from typing import Optional

import libcst as cst
from memlint.rules.ml005_oversized_linear_after_flatten.meta import META

from memlint.analysis import optimizers
from memlint.analysis.constants import Env, factors, fold, fold_int, literal_bool
from memlint.analysis.inventory import env_at, env_here, first_linear_after_flatten, inventory, layer_of, torch_nn_name
from memlint.analysis.kept_parts import never_runs
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.units import format_bytes

# Positional index of the arguments that change an optimizer's state (torch.optim's signatures).
_MOMENTUM_POSITION = {"SGD": 2, "RMSprop": 5}
_AMSGRAD_POSITION = {"Adam": 5, "AdamW": 5}


class OversizedLinearAfterFlatten(Rule):
    """
    ## What it does
    Finds an `nn.Linear` fed by a flattened spatial feature map whose weight count exceeds
    `max-linear-params`. The weight count of `nn.Linear(in_features, out_features)` is
    `in_features * out_features`; the default limit is 8,388,608.
    Evidence that the layer follows a flatten: it is the first Linear after `nn.Flatten()` in a
    `nn.Sequential` (with only dropout or activations in between); or the class's `forward`
    flattens (`torch.flatten(x, 1)`, `x.view(x.size(0), -1)`, `x.reshape(n, -1)`, `nn.Flatten`, or
    the flattened size written out after the batch dimension: `x.view(x.size(0), 8192)`,
    `x.reshape(x.shape[0], 128 * 8 * 8)`, `x.view(batch_size, 8192)`) and then calls the layer (or a Sequential that starts with it); or `in_features` is written as
    a product of channels and spatial sizes (`512 * 7 * 7`, `c * s ** 2`).

    Both sizes are constant-folded: literals, arithmetic, module-level constants, the function's
    own assignments and its parameters' defaults (`num_classes=1000`). Accepted limits (silence
    when unsure): sizes read from a config object, computed by a call or passed in by the caller
    are not folded, and the rule says nothing about them; a big layer fed by anything but a
    flatten (a vocabulary projection, an MLP) is not this rule's business.

    Not reported: a layer of a model class the file builds only to cut it (`analysis/kept_parts.py`):
    every instance is only loaded (`load_state_dict`), moved or put in a mode, and then handed to
    `create_feature_extractor` / `IntermediateLayerGetter` (whose nodes do not name the layer's
    attribute, or are not written out) or reduced to other attributes (`vgg.features`,
    `nn.Sequential(*list(vgg.features.children())[:k])`): a pretrained VGG kept for its features
    never runs or keeps its `Linear(512 * 7 * 7, 4096)`. Nor one that every instance the file
    builds loses to a `del` before anything runs it (`model = VGG(...)`, `model.load_state_dict(...)`,
    `del model.classifier`, `return model`: unet-pytorch's backbone). A class another linted file
    imports is not known to be only cut, nor every instance of it to lose the layer.

    The message counts the layer's fp32 weights and gradients, plus the state of the file's
    optimizer when the file builds exactly one kind (`memlint/analysis/optimizers.py`: SGD 0 B/parameter,
    with momentum 4, Adam 8, ...); with no optimizer, several kinds, or one whose settings cannot
    be read, it says nothing about optimizer state.

    ## Why is this bad?
    Flattening a `C x H x W` map multiplies the first classifier layer's input by the spatial size.
    That one layer then dominates the model: its weights, their gradients and the optimizer's state
    for them. Global pooling before the flatten (`nn.AdaptiveAvgPool2d(1)`) reduces `in_features`
    to `C` with little or no accuracy cost in modern architectures.

    ## Example
    ```python
    classifier = nn.Sequential(nn.Flatten(), nn.Linear(512 * 7 * 7, 4096), nn.ReLU(), nn.Linear(4096, 10))
    ```

    ## Use instead
    ```python
    classifier = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 4096), nn.ReLU(), nn.Linear(4096, 10))
    ```

    ## Fix safety
    No automatic fix: pooling or a narrower layer changes the architecture (and invalidates
    pretrained weights).

    ## Measured effect
    Arithmetic, not a measurement: `nn.Linear(512 * 7 * 7, 4096)` (torchvision's VGG) holds
    102,760,448 weights, 392 MiB in fp32 and 1.53 GiB with fp32 gradients and Adam's two moments
    (16 B/parameter); after `nn.AdaptiveAvgPool2d(1)` the same layer is `nn.Linear(512, 4096)`,
    2,097,152 weights (8 MiB).

    Fixture `ml005_oversized_linear.py`, `memlint confirm fixtures` (PyTorch 2.13.0+cpu, exact
    tensor-storage tracker; docs/measured-savings.md): `nn.Linear(256 * 8 * 8, 1024)` after
    `nn.Flatten()`, one SGD-with-momentum step, batch 8, versus `nn.AdaptiveAvgPool2d(1)` before
    the flatten: 201,554,108 B before, 3,795,096 B after (188.6 MiB, 98.1% saved).
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "none"

    VALID = [
        Valid(  # every instance loses its classifier to `del` before anything runs it (unet-pytorch's VGG16, issue 27)
            """
import torch
from torch import nn


class VGG(nn.Module):
    def __init__(self, features, num_classes=1000):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(True),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x):
        x = self.avgpool(self.features(x))
        x = torch.flatten(x, 1)
        return self.classifier(x)


def vgg16(pretrained, keep_head=False):
    model = VGG(nn.Sequential(nn.Conv2d(3, 512, 3), nn.ReLU(True)))
    if pretrained:
        model.load_state_dict(torch.load("vgg16.pth"))
    del model.avgpool
    del model.classifier
    return model
"""
        ),
        Valid(  # a layer built inside the loop, or before it, sees the width of its own iteration, not the last
            """
import torch.nn as nn
class Head(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        first = nn.Linear(width * 2 * 2, 64)
        layers = []
        for i in range(6):
            layers.append(nn.Linear(width * 2 * 2, 64))
            width = width * 4
        self.layers = nn.ModuleList(layers)
"""
        ),
        Valid(  # a pretrained VGG built only to load weights and cut to its features: its classifier never runs (SRGAN's ContentLoss, issue 27)
            """
import torch
from torch import nn
from torchvision import models
from torchvision.models.feature_extraction import create_feature_extractor


class _FeatureExtractor(nn.Module):
    def __init__(self, num_classes: int = 1000) -> None:
        super(_FeatureExtractor, self).__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 512, 3), nn.ReLU(True))
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(True),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


class ContentLoss(nn.Module):
    def __init__(self, weights_path, feature_nodes):
        super(ContentLoss, self).__init__()
        model = _FeatureExtractor()
        if weights_path == "":
            model = models.vgg19(weights="IMAGENET1K_V1")
        else:
            model.load_state_dict(torch.load(weights_path))
        self.feature_extractor = create_feature_extractor(model, feature_nodes)
        for p in self.feature_extractor.parameters():
            p.requires_grad = False
        self.feature_extractor.eval()

    def forward(self, sr, gt):
        return nn.functional.mse_loss(self.feature_extractor(sr)["x"], self.feature_extractor(gt)["x"])
"""
        ),
        Valid(  # the same, cut by keeping a slice of `vgg.features`
            """
import torch
from torch import nn


class VGG(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 512, 3), nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Linear(4096, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


class PerceptualLoss(nn.Module):
    def __init__(self, path, k=16):
        super().__init__()
        vgg = VGG()
        vgg.load_state_dict(torch.load(path))
        self.layers = nn.Sequential(*list(vgg.features.children())[:k]).eval()

    def forward(self, a, b):
        return (self.layers(a) - self.layers(b)).abs().mean()
"""
        ),
        Valid(  # global pooling first: small in_features
            """
from torch import nn
head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 4096))
"""
        ),
        Valid(  # a big in_features with a small product (below max-linear-params)
            """
from torch import nn
head = nn.Sequential(nn.Flatten(), nn.Linear(64 * 7 * 7, 128))
"""
        ),
        Valid(  # large, but not fed by a flatten: a vocabulary projection
            """
from torch import nn
lm_head = nn.Linear(4096, 50000)
"""
        ),
        Valid(  # cannot be folded: silent
            """
from torch import nn
def head(config):
    return nn.Sequential(nn.Flatten(), nn.Linear(config.channels * 7 * 7, config.hidden))
"""
        ),
        Valid(  # a user's own Linear is not torch's
            """
import torch
class Linear:
    def __init__(self, a, b):
        pass
layer = Linear(512 * 7 * 7, 4096)
"""
        ),
        Valid(  # the second Linear after a flatten is fed by the first, not by the map
            """
from torch import nn
head = nn.Sequential(nn.Flatten(), nn.Linear(512, 4096), nn.ReLU(), nn.Linear(4096, 4096))
"""
        ),
        Valid(  # a raised threshold
            """
from torch import nn
head = nn.Sequential(nn.Flatten(), nn.Linear(512 * 7 * 7, 4096))
""",
            config={"max-linear-params": 200_000_000},
        ),
    ]

    INVALID = [
        Invalid(  # the classifier is deleted only in a branch: where it is kept, it is fed the flattened map (issue 27)
            """
import torch
from torch import nn


class VGG(nn.Module):
    def __init__(self, features, num_classes=1000):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(True),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x):
        x = self.avgpool(self.features(x))
        x = torch.flatten(x, 1)
        return self.classifier(x)


def vgg16(pretrained, keep_head=False):
    model = VGG(nn.Sequential(nn.Conv2d(3, 512, 3), nn.ReLU(True)))
    if pretrained:
        model.load_state_dict(torch.load("vgg16.pth"))
    if not keep_head:
        del model.classifier
    return model
""",
            line=11,
            column=13,
        ),
        Invalid(  # the width a counted loop leaves behind: 512 channels after eight blocks
            """
import torch.nn as nn
class Discriminator(nn.Module):
    def __init__(self, n_channels=64, n_blocks=8):
        super().__init__()
        in_channels = 3
        blocks = list()
        for i in range(n_blocks):
            out_channels = (n_channels if i is 0 else in_channels * 2) if i % 2 is 0 else in_channels
            blocks.append(nn.Conv2d(in_channels, out_channels, 3, stride=1 if i % 2 is 0 else 2))
            in_channels = out_channels
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d((6, 6))
        self.fc1 = nn.Linear(out_channels * 6 * 6, 1024)
""",
            line=13,
            column=20,
        ),
        Invalid(  # the same width, named, in a Sequential's Linear: its environment is a bare Linear's
            """
import torch.nn as nn
class Discriminator(nn.Module):
    def __init__(self, n_channels=64, n_blocks=8):
        super().__init__()
        in_channels = 3
        blocks = list()
        for i in range(n_blocks):
            out_channels = (n_channels if i is 0 else in_channels * 2) if i % 2 is 0 else in_channels
            blocks.append(nn.Conv2d(in_channels, out_channels, 3, stride=1 if i % 2 is 0 else 2))
            in_channels = out_channels
        self.blocks = nn.Sequential(*blocks)
        features = out_channels * 6 * 6
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(features, 1024))
""",
            line=13,
            column=49,
        ),
        Invalid(  # `nn` from a star import, in a file that never writes the word torch (issue 27)
            """
from helpers import *
classifier = nn.Sequential(
    nn.Linear(512 * 7 * 7, 4096),
    nn.ReLU(True),
)
""",
            line=3,
            column=5,
        ),
        Invalid(  # `nn` from a star import of the project's helpers is torch's
            """
import torch
from helpers import *
classifier = nn.Sequential(
    nn.Linear(512 * 7 * 7, 4096),
    nn.ReLU(True),
)
""",
            line=4,
            column=5,
        ),
        Invalid(  # product evidence, torchvision's VGG classifier
            """
from torch import nn
classifier = nn.Sequential(
    nn.Linear(512 * 7 * 7, 4096),
    nn.ReLU(True),
)
""",
            line=3,
            column=5,
            message="nn.Linear(512 * 7 * 7, 4096) holds 102,760,448 weights: 392 MiB in fp32, 784 MiB with gradients; it is fed",
        ),
        Invalid(  # keyword arguments
            """
import torch.nn as nn
fc = nn.Linear(in_features=128 * 16 * 16, out_features=1024)
""",
            line=2,
            column=6,
            message="33,554,432 weights",
        ),
        Invalid(  # after nn.Flatten in a Sequential; sizes from module constants; aliases
            """
import torch.nn as tnn
from torch.nn import Linear as Dense
CHANNELS = 256
SPATIAL = 14 * 14
head = tnn.Sequential(tnn.Flatten(), tnn.Dropout(0.5), Dense(CHANNELS * SPATIAL, 1024))
""",
            line=5,
            column=56,
            message="51,380,224 weights",
        ),
        Invalid(  # forward flattens, then calls the layer; out_features from a constructor default
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self, num_classes=1000, width=2048):
        super().__init__()
        self.features = nn.Conv2d(3, 64, 3)
        self.fc = nn.Linear(64 * 28 * 28, width)
        self.out = nn.Linear(width, num_classes)
    def forward(self, x):
        x = self.features(x)
        x = x.view(x.size(0), -1)
        return self.out(self.fc(x))
""",
            line=7,
            column=19,
            message="nn.Linear(64 * 28 * 28, width)",
        ),
        Invalid(  # the flatten written with the literal size after the batch dimension (MCD_DA's svhn2mnist)
            """
import torch.nn as nn
import torch.nn.functional as F
class Feature(nn.Module):
    def __init__(self):
        super(Feature, self).__init__()
        self.conv3 = nn.Conv2d(64, 128, kernel_size=5, stride=1, padding=2)
        self.fc1 = nn.Linear(8192, 3072)
    def forward(self, x):
        x = F.relu(self.conv3(x))
        x = x.view(x.size(0), 8192)
        return F.relu(self.fc1(x))
""",
            line=7,
            column=20,
            message="nn.Linear(8192, 3072) holds 25,165,824 weights",
        ),
        Invalid(  # forward flattens with torch.flatten and feeds a Sequential (AlexNet)
            """
import torch
import torch.nn as nn
class AlexNetLike(nn.Module):
    def __init__(self, num_classes: int = 1000, dropout: float = 0.5) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout),
            nn.Linear(9216, 4096),
            nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )
    def forward(self, x):
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)
""",
            line=9,
            column=13,
            message="37,748,736 weights",
        ),
        Invalid(  # the file's optimizer is SGD with momentum: its state is counted, not Adam's
            """
import torch
from torch import nn
model = nn.Sequential(nn.Flatten(), nn.Linear(512 * 7 * 7, 4096))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
""",
            line=3,
            column=37,
            message="392 MiB in fp32, 1.15 GiB with gradients and the state of SGD with momentum (4 B/parameter)",
        ),
        Invalid(  # plain SGD keeps no state
            """
from torch import nn, optim
model = nn.Sequential(nn.Flatten(), nn.Linear(512 * 7 * 7, 4096))
optimizer = optim.SGD(model.parameters(), 0.1)
""",
            line=2,
            column=37,
            message="392 MiB in fp32, 784 MiB with gradients (SGD keeps no optimizer state)",
        ),
        Invalid(  # Adam, built after the model class
            """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(512 * 7 * 7, 4096)
    def forward(self, x):
        return self.fc(torch.flatten(x, 1))
net = Net()
opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
""",
            line=6,
            column=19,
            message="1.53 GiB with gradients and the state of AdamW (8 B/parameter)",
        ),
        Invalid(  # two kinds of optimizer, or one whose momentum cannot be read: no state is claimed
            """
import torch
from torch import nn
model = nn.Sequential(nn.Flatten(), nn.Linear(512 * 7 * 7, 4096))
if args.sgd:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=args.momentum)
else:
    optimizer = torch.optim.Adam(model.parameters())
""",
            line=3,
            column=37,
            message="392 MiB in fp32, 784 MiB with gradients; it is fed",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._reported: set[int] = set()
        self._pending: list[tuple[cst.Call, str, int]] = []  # (layer, how it is written, weights)
        # The optimizers the file builds: (name, state bytes per parameter), None when unreadable.
        self._optimizers: list[Optional[tuple[str, float]]] = []

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        self._note_optimizer(node)
        kind = torch_nn_name(ctx, node.func)
        if kind is None or ctx.resolve(node.func) is None:
            return
        if kind == "Linear":
            first = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "in_features"), None)
            if first is None and node.args and node.args[0].keyword is None and not node.args[0].star:
                first = node.args[0].value
            if first is not None and _spatial_product(first):
                self._consider(node, env_at(ctx, node))
        elif kind == "Sequential":
            # the widths a counted loop before the statement leaves (`ch *= 2` per block) fold here as
            # for a bare Linear: one environment for every layer built at this point
            env = env_at(ctx, node)
            layer = layer_of(ctx, node, env)
            if layer is not None:
                for linear in first_linear_after_flatten(layer.children, flattened_input=False):
                    self._consider(linear.call, env)

    def finish(self, facts) -> None:
        for described in inventory(self.ctx).values():
            for attribute in sorted(described.flatten_fed):
                layer = described.attributes.get(attribute)
                if layer is None:
                    continue
                if layer.kind == "Linear":
                    self._decide(layer.call, layer.in_features, layer.out_features)
                elif layer.kind == "Sequential":
                    for linear in first_linear_after_flatten(layer.children, flattened_input=True):
                        self._decide(linear.call, linear.in_features, linear.out_features)
        # Reported once the whole file is seen: the optimizer is usually built after the model.
        with_state = self._state_clause()
        for call, text, weights in self._pending:
            message = (
                f"{text} holds {weights:,} weights: {format_bytes(optimizers.WEIGHT_BYTES * weights)} in fp32, "
                f"{with_state(weights)}; it is fed a flattened feature map: pool first "
                "(`nn.AdaptiveAvgPool2d(1)` before the flatten) or use a narrower layer"
            )
            self.report(call, message)

    def _note_optimizer(self, call: cst.Call) -> None:
        qualified = self.ctx.resolve(call.func)
        if not qualified:
            return
        state = optimizers.lookup(qualified)
        if state is None:
            if _looks_like_optimizer(qualified):
                self._optimizers.append(None)  # an optimizer whose state memlint does not know
            return
        name = qualified.rsplit(".", 1)[1]
        momentum = _flag(call, "momentum", _MOMENTUM_POSITION.get(name), self._fold) if state.momentum_bytes else False
        amsgrad = _flag(call, "amsgrad", _AMSGRAD_POSITION.get(name), self._fold) if state.amsgrad_bytes else False
        if momentum is None or amsgrad is None:
            self._optimizers.append(None)
            return
        label = state.name + (" with momentum" if momentum else "") + (" with amsgrad" if amsgrad else "")
        extra = (state.momentum_bytes if momentum else 0) + (state.amsgrad_bytes if amsgrad else 0)
        self._optimizers.append((label, state.bytes_per_param + extra))

    def _fold(self, expr: cst.BaseExpression):
        return fold(expr, env_here(self.ctx))

    def _state_clause(self):
        """How the message counts training memory: weights and gradients, plus the optimizer's state
        when the file builds exactly one kind of optimizer that memlint knows."""
        kinds = set(self._optimizers)
        per_param = optimizers.WEIGHT_BYTES + optimizers.GRADIENT_BYTES
        if len(kinds) != 1 or None in kinds:
            return lambda weights: f"{format_bytes(per_param * weights)} with gradients"
        ((label, state_bytes),) = kinds
        if state_bytes == 0:
            return lambda weights: f"{format_bytes(per_param * weights)} with gradients ({label} keeps no optimizer state)"
        return lambda weights: (
            f"{format_bytes((per_param + state_bytes) * weights)} with gradients and the state of {label} "
            f"({state_bytes:g} B/parameter)"
        )

    def _consider(self, call: cst.Call, env: Env) -> None:
        arguments = {**{i: a.value for i, a in enumerate(call.args) if a.keyword is None}}
        arguments.update({a.keyword.value: a.value for a in call.args if a.keyword is not None})
        n_in = arguments.get("in_features", arguments.get(0))
        n_out = arguments.get("out_features", arguments.get(1))
        if n_in is None or n_out is None:
            return
        self._decide(call, fold_int(n_in, env), fold_int(n_out, env))

    def _decide(self, call: cst.Call, n_in: Optional[int], n_out: Optional[int]) -> None:
        if n_in is None or n_out is None or id(call) in self._reported:
            return
        weights = n_in * n_out
        if weights <= self.option("max-linear-params"):
            return
        if never_runs(self.ctx, call):
            return  # a part of a model the file builds only to cut it (its features kept, the classifier dropped)
        self._reported.add(id(call))
        code = self.ctx.module.code_for_node
        parts = [(f"{a.keyword.value}=" if a.keyword else "") + " ".join(code(a.value).split()) for a in call.args]
        text = f"nn.Linear({', '.join(parts)})"
        if len(text) > 70:
            text = text[:69] + "…"
        self._pending.append((call, text, weights))


def _flag(call: cst.Call, keyword: str, position: Optional[int], fold_value) -> Optional[bool]:
    """Whether an optimizer argument (`momentum=0.9`, `amsgrad=True`) is set: False when absent,
    None when it is there but not a literal memlint can read."""
    value = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        return None  # `SGD(params, **config)`: anything may be set
    if value is None and position is not None and len(positional) > position:
        value = positional[position].value
    if value is None:
        return False
    if (literal := literal_bool(value)) is not None:
        return literal
    number = fold_value(value)
    return None if number is None else number != 0


def _looks_like_optimizer(qualified: str) -> bool:
    """A constructor that builds an optimizer memlint has no state figure for: one that
    `optimizers.builds_optimizer` knows (`torch.optim.LBFGS`, `apex.optimizers.FusedAdam`), or, by
    the path it is imported from, one of another library (`mylib.optimizers.Lion`,
    `timm.optim.create_optimizer_v2`): for the message's state figure a wrong guess only costs the figure."""
    if optimizers.builds_optimizer(qualified):
        return True
    parts = qualified.lower().split(".")
    if "lr_scheduler" in parts or "swa_utils" in parts:
        return False
    return any(part in ("optim", "optimizer", "optimizers") for part in parts[:-1]) or "optimizer" in parts[-1]


def _spatial_product(expr: cst.BaseExpression) -> bool:
    """`512 * 7 * 7`, `c * h * w`, `c * s ** 2`: channels times a spatial size."""
    parts = factors(expr)
    if len(parts) >= 3:
        return True
    return len(parts) == 2 and any(
        isinstance(p, cst.BinaryOperation) and isinstance(p.operator, cst.Power) and fold_int(p.right) == 2 for p in parts
    )

