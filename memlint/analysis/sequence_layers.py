"""What a layer listed in a sequence builds (an `nn.Sequential`'s elements, a list unpacked into
one, layers added one after another): the torch.nn class behind wrappers, initialisers, factories
and the file's own module classes, or a norm or fresh-output class the file names otherwise; and
which in-place-capable activation class an element builds, also through a local name chosen between
classes (`ReLU = nn.ReLU if onnx_compatible else nn.ReLU6`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from memlint.analysis.chosen_classes import chosen_classes
from memlint.analysis.fresh_forwards import fresh_output_classes
from memlint.analysis.initialisers import built_layer
from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.norm_layers import norm_built
from memlint.analysis.tables import INPLACE_MODULES
from memlint.analysis.wrapper_classes import owned_layer, wrapped_layer


@dataclass
class LayerBefore:
    """The layer an element follows: its torch.nn class ("BatchNorm2d" for a norm the file names
    otherwise), how a message names it, and the file's class whose `forward` returns a fresh tensor
    where that is what it is."""

    kind: Optional[str]
    described: str
    fresh_class: Optional[str] = None


def activation_class(ctx, element: cst.Call) -> Optional[tuple[str, tuple[str, ...]]]:
    """The in-place-capable torch.nn class `element` builds, and every class it may be where a local
    name chooses between several (analysis/chosen_classes.py; () where it is the one class); None
    where it builds none, or where the choices do not all take `inplace` at the same position."""
    kind = torch_nn_name(ctx, element.func)
    kinds: tuple[str, ...] = ()
    if kind is None and type(element.func) is cst.Name:
        kinds = chosen_classes(ctx, element.func, ctx.function_node) or ()
        if len(kinds) < 2 or not all(k in INPLACE_MODULES for k in kinds):
            return None
        if len({INPLACE_MODULES[k] for k in kinds}) != 1:
            return None  # the fix puts `inplace=True` where every one of them takes it
        kind = kinds[0]
    if kind not in INPLACE_MODULES:
        return None  # (before unwrapping the layer ahead, which may look the file's functions up)
    return kind, kinds


def layer_before(ctx, previous: cst.BaseExpression) -> Optional[LayerBefore]:
    """What the element `previous` (a call, or a name the scope binds to one layer call) builds."""
    if isinstance(previous, cst.Name):
        previous = layer_named(ctx, previous.value)  # `conv2d = nn.Conv2d(...)`, then `[conv2d, nn.ReLU()]`
        if previous is None:
            return None
    owner = previous.func.value if type(previous.func) is cst.Name and owned_layer(ctx, previous) is not None else None  # type: ignore[attr-defined]
    previous = unwrapped(ctx, previous)  # type: ignore[arg-type]
    before = torch_nn_name(ctx, previous.func)  # type: ignore[attr-defined]
    text = f"`nn.{before}`" if owner is None else f"`{owner}` (which returns its `nn.{before}`'s output)"
    if before is None:  # `norm_layer(c)`, `BatchNorm(planes)`: a norm the file names otherwise
        norm = norm_built(ctx, previous, ctx.function_node)
        if norm is not None:
            return LayerBefore("BatchNorm2d", norm.described)  # every norm keeps its input only
        if type(previous.func) is cst.Name and previous.func.value in fresh_output_classes(ctx):  # type: ignore[attr-defined]
            fresh_class = previous.func.value  # type: ignore[attr-defined]  # `FusedDownsample(...)`, whose forward returns a fresh tensor
            return LayerBefore(None, f"`{fresh_class}` (whose `forward` returns a fresh tensor)", fresh_class)
    return LayerBefore(before, text)


def layer_kind(ctx, layer: cst.Call) -> Optional[str]:
    """The torch.nn class a layer call builds; "BatchNorm2d" for a norm the file names otherwise
    (`norm_layer(c)`: every norm keeps its input for backward, which is what the name stands for here)."""
    kind = torch_nn_name(ctx, unwrapped(ctx, layer).func)
    if kind is None and norm_built(ctx, layer, ctx.function_node) is not None:
        return "BatchNorm2d"
    return kind


def layer_named(ctx, name: str) -> Optional[cst.Call]:
    """The one layer call the enclosing function (or the module) binds `name` to, by its own
    assignments only (the semantic model's constructed fact); None where it binds anything else."""
    scope = ctx.function_node or ctx.module
    built = ctx.model.constructed(scope).get(name, ())
    return built[0] if len(built) == 1 else None


def unwrapped(ctx, layer: cst.Call) -> cst.Call:
    """The layer inside initialisers and reparameterisations that return it:
    `layer_init(nn.Conv2d(...))`, `init_(nn.Linear(...))`, `weight_norm(nn.Linear(...))`, and
    the layer a factory of the file returns (`conv1x1(...)` returning `nn.Conv2d(...)`), and the
    layer a module class of the file forwards to (`SpectralNorm(nn.Conv2d(...))`: wrapper_classes)."""
    layer = built_layer(ctx, layer)
    if torch_nn_name(ctx, layer.func) is not None:
        return layer
    inner = wrapped_layer(ctx, layer)
    if isinstance(inner, cst.Call):
        return built_layer(ctx, inner)
    owned = owned_layer(ctx, layer)  # `EqualConv2d(...)` returning its own conv's output
    return owned if owned is not None else layer
