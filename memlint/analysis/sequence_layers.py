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
from memlint.analysis.class_layers import ClassLayers
from memlint.analysis.fresh_forwards import fresh_output_classes
from memlint.analysis.initialisers import built_layer
from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.norm_layers import norm_built
from memlint.analysis.tables import FRESH_OUTPUT_LAYERS, INPLACE_MODULES, OUTPUT_NOT_SAVED
from memlint.analysis.walk import code_descendants, self_attr
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
    """What the element `previous` (a call, or a name the scope binds to layer calls only, or
    `self.<attribute>` the class keeps only for this place: ClassLayers.sequence_only_layer) builds."""
    attribute = self_attr(previous)
    if attribute is not None:
        held = _class_layers(ctx).sequence_only_layer(attribute) if ctx.in_module_class else None
        return LayerBefore(held.kind, f"`self.{attribute}` (an `nn.{held.kind}`)") if held is not None else None
    if not isinstance(previous, (cst.Call, cst.Name)):
        return None  # (`self.encoder.bn`, `nn.Identity`: what another object holds is not known here)
    if isinstance(previous, cst.Name):
        built = layers_named(ctx, previous.value)  # `conv2d = nn.Conv2d(...)`, then `[conv2d, nn.ReLU()]`
        if len(built) > 1:
            return _any_of(ctx, built)
        if not built:
            return None
        previous = built[0]
    return _built_by(ctx, previous)  # type: ignore[arg-type]


def _class_layers(ctx) -> ClassLayers:
    """The layers of the class the traversal is in, asked once per class and file."""
    return ctx.memo(("class-layers", ctx.class_name), lambda: ClassLayers(ctx))  # type: ignore[return-value]


def _any_of(ctx, built: tuple[cst.Call, ...]) -> Optional[LayerBefore]:
    """A name bound to one of several layers (`if self.maml: bn1 = BatchNorm2d_fw(64)` / `else: bn1 =
    nn.BatchNorm2d(64)`): what it holds is one of them, so it counts only where each does; the one
    that asks most of the caller (a torch class outside `OUTPUT_NOT_SAVED`) stands for them all."""
    each = [_built_by(ctx, call) for call in built]
    if any(b is None or (b.kind not in FRESH_OUTPUT_LAYERS and b.fresh_class is None) for b in each):
        return None
    described = " or ".join(dict.fromkeys(b.described for b in each))  # type: ignore[union-attr]
    weakest = next((b for b in each if b.fresh_class is None and b.kind not in OUTPUT_NOT_SAVED), each[0])  # type: ignore[union-attr]
    return LayerBefore(weakest.kind, described, weakest.fresh_class)  # type: ignore[union-attr]


def _built_by(ctx, previous: cst.Call) -> Optional[LayerBefore]:
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


def activation_named(ctx, name: str) -> Optional[cst.Call]:
    """The activation call the enclosing function (or the module) binds `name` to, where the scope
    mentions `name` in that binding and one other place only (ResNet's stem: `relu = nn.ReLU()`,
    then `trunk = [conv1, bn1, relu, pool1]`): the module runs nowhere but at that place, so whether
    it may run in place is decided there."""
    built = layers_named(ctx, name)
    if len(built) != 1 or torch_nn_name(ctx, built[0].func) not in INPLACE_MODULES:
        return None  # (the cheap tests before a walk of the scope)
    scope = ctx.function_node or ctx.module
    mentions = sum(1 for n in code_descendants(scope) if type(n) is cst.Name and n.value == name)  # type: ignore[attr-defined]
    return built[0] if mentions == 2 else None


def layers_named(ctx, name: str) -> tuple[cst.Call, ...]:
    """Every layer call the enclosing function (or the module) binds `name` to, by its own
    assignments only, where it binds it to nothing else (the semantic model's constructed fact)."""
    scope = ctx.function_node or ctx.module
    return tuple(ctx.model.constructed(scope).get(name, ()))


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
