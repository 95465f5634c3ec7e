"""A static inventory of the `nn.Module` classes a file defines: the layers each `__init__` builds
(with constant-folded sizes and parameter counts), and which layers `forward` feeds a flattened
feature map.  ML005 and ML006 read it; `inventory(ctx)` builds it once per file.

Everything is best-effort and errs towards "unknown": a parameter count is None as soon as one
layer's size cannot be folded, a layer is built by a call memlint does not know, or layers are
built in a loop or behind a condition.  Rules stay silent on None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.bindings import alternatives
from memlint.analysis.constants import Env, after_counted_loops, fold, fold_int, function_env, literal_bool, module_env
from memlint.analysis.initialisers import built_layer, resolve_global, unwrapped_layer
from memlint.analysis.iteration import named_like_batch_size
from memlint.analysis.walk import code_descendants, nested_blocks, self_attr

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# torch.nn layers without parameters (their count is 0).
PARAMETER_FREE = frozenset(
    {
        "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Hardtanh", "Hardswish",
        "Hardsigmoid", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Softplus", "Softsign", "Tanhshrink",
        "Threshold", "RReLU", "GLU", "LogSigmoid", "Hardshrink", "Softshrink", "Softmin",
        "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
        "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
        "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
        "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "Flatten", "Unflatten", "Identity",
        "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle",
        "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
        "ReplicationPad1d", "ReplicationPad2d", "ChannelShuffle",
    }
)  # fmt: skip
CONTAINERS = frozenset({"Sequential", "ModuleList"})


@dataclass
class Layer:
    call: cst.Call
    kind: Optional[str]  # "Linear" for torch.nn layers, "local:Block" for a class of this file, None
    params: Optional[int]
    children: list["Layer"] = field(default_factory=list)  # of a Sequential / ModuleList, in order
    in_features: Optional[int] = None  # Linear only
    out_features: Optional[int] = None


@dataclass
class ModuleClass:
    name: str
    node: cst.ClassDef
    attributes: dict[str, Layer] = field(default_factory=dict)  # self.<attr> = <layer> in __init__
    param_count: Optional[int] = None
    forward: Optional[cst.FunctionDef] = None
    flatten_fed: set[str] = field(default_factory=set)  # attrs forward calls on a flattened tensor
    # self.<attr> = <layer> in a branch of an `if` in __init__ (`if pos_enc: self.embed = nn.Linear(...)
    # else: self.embed = nn.Embedding(...)`): what the attribute holds where it exists; kept apart
    # from `attributes`, whose layers are known to exist (their parameters counted)
    conditional: dict[str, Layer] = field(default_factory=dict)
    # every layer the branches bind to an attribute, in source order (`if leaky: self.act =
    # nn.LeakyReLU(0.1)` / `else: self.act = nn.ReLU()`): `conditional` holds the last of them; a rule
    # that must hold for whatever the attribute is asks for all
    branches: dict[str, list[Layer]] = field(default_factory=dict)
    # the attributes a binding of which is a conditional expression whose every branch builds a
    # layer (`self.act = nn.Hardswish() if act else nn.Identity()`): `branches` holds each branch's
    # layer (one binding, several layers), `conditional` none of them
    chosen: set[str] = field(default_factory=set)


def inventory(ctx: "Context") -> dict[str, ModuleClass]:
    """The nn.Module classes defined at the top level of the file, by name."""
    return _builder(ctx).classes_described()


def held_layer(func: cst.Attribute, ctx: "Context") -> Optional[Layer]:
    """`model._encoder`, where the scope (or, for a global, the module) binds `model` only to
    instances of one module class of the file (`model = Model(...).to(device)`: the model's
    `constructed` fact) whose `__init__` assigns `self._encoder` a layer (`Encoder(...)`,
    `nn.Conv2d(...)`, also in a branch of an `if`): that layer; None where the analysis cannot tell.
    The attribute's name then need not say it is a model: the class's code does."""
    receiver = func.value
    if type(receiver) is not cst.Name:
        return None
    classes = inventory(ctx)
    if not classes:
        return None
    scope = ctx.function_node or ctx.module
    calls = ctx.model.constructed(scope).get(receiver.value)
    if not calls and scope is not ctx.module and ctx.binds_at_module_level(receiver.value):
        calls = ctx.model.constructed(ctx.module).get(receiver.value)  # the module's `model`, not a parameter shadowing it
    owners = {c.func.value for c in calls or () if type(c.func) is cst.Name}  # type: ignore[attr-defined]
    if len(owners) != 1:
        return None  # (two classes, or a factory: which attributes it has is not known)
    described = classes.get(owners.pop())
    if described is None:
        return None
    return described.attributes.get(func.attr.value) or described.conditional.get(func.attr.value)


def layer_of(ctx: "Context", call: cst.Call, env: Env) -> Optional[Layer]:
    """What a layer constructor call builds (None when it is not one memlint knows)."""
    builder = _builder(ctx)
    functions = [f.node for f in ctx.frames if f.kind == "function" and isinstance(f.node, cst.FunctionDef)]
    builder.scopes.append(functions)  # the functions the traversal is in: their names hide the file's factories
    try:
        return builder.layer(call, env)
    finally:
        builder.scopes.pop()


def env_here(ctx: "Context") -> Env:
    """Names foldable at the current point of the traversal: module constants, and the current
    function's defaults and single assignments."""
    builder = _builder(ctx)
    function = ctx.function_node
    if function is None:
        return builder.module_env
    return ctx.memo(("fold-env", id(function)), lambda: function_env(function, builder.module_env))  # type: ignore[return-value]


def env_at(ctx: "Context", node: cst.CSTNode) -> Env:
    """`env_here`, plus what the counted loops of the function that come before `node`'s statement
    leave behind (`constants.after_counted_loops`): a width a constructor's loop doubles block by
    block means its last value to a layer built after the loop, and nothing inside it."""
    env = env_here(ctx)
    function = ctx.function_node
    if function is None or not isinstance(function.body, cst.IndentedBlock):
        return env
    body = function.body.body
    if not any(isinstance(statement, cst.For) for statement in body):
        return env
    for index, statement in enumerate(body):
        if statement is node or any(inner is node for inner in code_descendants(statement)):
            after = after_counted_loops(body, env, index)
            return {**env, **after} if after else env
    return env


def _builder(ctx: "Context") -> "_Builder":
    # Keyed by the module-level imports seen: asked before `import torch.nn as nn` (a notebook's
    # later cell), the classes after it would stay unknown to every later ask.
    return ctx.memo(("inventory", ctx.module_imports), lambda: _Builder(ctx))  # type: ignore[return-value]


def torch_nn_name(ctx: "Context", expr: cst.BaseExpression) -> Optional[str]:
    """"Linear" for `nn.Linear`, `torch.nn.Linear`, `from torch.nn import Linear as L` (module level);
    also for a library's subclass of it that builds and runs the same (`torchmeta.modules.MetaLinear`:
    tables.LIBRARY_TORCH_SUBCLASSES)."""
    qualified = resolve_global(ctx, expr)
    if qualified and not qualified.startswith("torch."):
        qualified = tables.LIBRARY_TORCH_SUBCLASSES.get(qualified)
    if qualified and qualified.startswith("torch.nn.") and qualified.count(".") >= 2:
        last = qualified.rsplit(".", 1)[1]
        if last[:1].isupper() and not qualified.startswith("torch.nn.functional."):
            return last
    return None


def is_flatten(expr: cst.BaseExpression, ctx: "Context", flat_layers: frozenset[str] = frozenset()) -> bool:
    """`torch.flatten(x, 1)`, `x.flatten(1)`, `x.view(x.size(0), -1)`, `x.reshape(n, -1)`, `self.flatten(x)`;
    also the flattened size written out after the batch dimension (`x.view(x.size(0), 8192)`,
    `x.reshape(batch_size, 128 * 8 * 8)`: `keeps_batch_dimension`), the same flatten."""
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    qualified = resolve_global(ctx, func)
    if qualified in ("torch.flatten", "torch.nn.functional.flatten"):
        return len(expr.args) >= 2 and fold(expr.args[1].value) == 1
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method == "flatten":
            return len(expr.args) == 1 and fold(expr.args[0].value) == 1
        if method in ("view", "reshape") and len(expr.args) == 2 and all(a.keyword is None and not a.star for a in expr.args):
            size = fold(expr.args[1].value)
            if size == -1:
                return True
            return type(size) is int and size > 0 and keeps_batch_dimension(expr.args[0].value)
        if isinstance(func.value, cst.Name) and func.value.value == "self" and method in flat_layers:
            return True
    return False


def keeps_batch_dimension(expr: cst.BaseExpression) -> bool:
    """A reshape's first size that is the batch size: a tensor's first dimension (`x.size(0)`,
    `x.size()[0]`, `x.shape[0]`) or a name that says so (`batch_size`, `self.batch_size`, `bs`:
    `naming.BATCH_STRIDE`).  Shared in shape with the ML005 screen's `_keeps_batch_dimension`."""
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "size":
        return len(expr.args) == 1 and fold(expr.args[0].value) == 0
    if type(expr) is cst.Subscript and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
        if fold(expr.slice[0].slice.value) != 0:
            return False
        holder = expr.value
        if type(holder) is cst.Attribute and holder.attr.value == "shape":
            return True
        return type(holder) is cst.Call and type(holder.func) is cst.Attribute and holder.func.attr.value == "size" and not holder.args
    return named_like_batch_size(expr)


class _Builder:
    def __init__(self, ctx: "Context") -> None:
        self.ctx = ctx
        self.module_env = module_env(ctx.module)
        self.classes: dict[str, cst.ClassDef] = {}
        self.result: dict[str, ModuleClass] = {}
        self._active: set[str] = set()
        # `_local_params` memoised: a class built in many places (or classes building each other,
        # `self.a = Block(n)`, `self.b = Block(n)`, each Block building two more) was described again
        # at every construction, exponentially in the nesting.  Keyed by the class and the code of
        # the call's arguments (what `_bind_call` binds), with the classes the count reached: the
        # recursion guard below answers by `_active`, so a count is reused only where none of them is
        # being described (then it is what describing again would give).
        self._param_counts: dict[tuple[str, Optional[tuple]], tuple[Optional[int], frozenset[str]]] = {}
        self._reaching: list[set[str]] = []  # for each count being computed, the classes it reached so far
        # The functions around the call being read, innermost last (a constructor being described,
        # or the traversal's): a name one of them binds (`def __init__(self, d, Linear=nn.Identity)`)
        # is not the file's factory of that name.
        self.scopes: list[list[cst.FunctionDef]] = []

        notebook = ctx.model.notebook  # a marimo notebook's cells hold its top-level classes
        cells = notebook.top_level(ctx.module) if notebook is not None else ()
        for statement in (*ctx.module.body, *cells):
            if isinstance(statement, cst.ClassDef) and self._is_module_class(statement):
                self.classes[statement.name.value] = statement
        self._described = False

    def classes_described(self) -> dict[str, ModuleClass]:
        if not self._described:
            self._described = True
            for name in self.classes:
                self.result[name] = self._describe(name)
        return self.result

    def _is_module_class(self, node: cst.ClassDef) -> bool:
        if node.name.value in self.ctx.project.module_classes:
            return True  # its nn.Module base is a class of another file (pytorch-template's BaseModel)
        for base in node.bases:
            qualified = resolve_global(self.ctx, base.value)
            if qualified in tables.MODULE_BASES or torch_nn_name(self.ctx, base.value):
                return True
            if isinstance(base.value, cst.Name) and base.value.value in self.classes:
                return True
        return False

    # ------------------------------------------------------------------ one class

    def _describe(self, name: str, args: Optional[cst.Call] = None) -> ModuleClass:
        node = self.classes[name]
        described = ModuleClass(name, node)
        methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}
        described.forward = methods.get("forward")
        init = methods.get("__init__")
        count: Optional[int] = self._base_params(node)
        if init is not None:
            env = function_env(init, self.module_env)
            if args is not None:
                env = _bind_call(init, args, env)
            self.scopes.append([init])
            try:
                init_count = self._init_layers(init, env, described)
            finally:
                self.scopes.pop()
            count = None if count is None or init_count is None else count + init_count
        described.param_count = count
        if described.forward is not None:
            described.flatten_fed = self._flatten_fed(described)
        return described

    def _base_params(self, node: cst.ClassDef) -> Optional[int]:
        total = 0
        for base in node.bases:
            qualified = resolve_global(self.ctx, base.value)
            if isinstance(base.value, cst.Name) and base.value.value in self.classes:
                inner = self._local_params(base.value.value, None)
                if inner is None:
                    return None
                total += inner
            elif qualified not in tables.MODULE_BASES and torch_nn_name(self.ctx, base.value) != "Module":
                return None  # nn.Sequential subclasses, frameworks' own bases: not followed
        return total

    def _conditional_layers(self, statement: cst.BaseCompoundStatement, env: Env, described: ModuleClass) -> None:
        """`self.<attr> = <layer>` lines in the branches of an `if`, or in the blocks of a `try` (its
        body, handlers, `else` and `finally`: YOLOP's `try: self.act = ...` / `except: self.act =
        nn.Identity()`; whichever ran last, the attribute holds one of the layers they bind), nested
        `if`s and `try`s too; not loops: an attribute bound in a loop may be bound many times."""
        for block in nested_blocks(statement):
            for inner in block:
                if isinstance(inner, (cst.If, cst.Try)):
                    self._conditional_layers(inner, env, described)
                if not isinstance(inner, cst.SimpleStatementLine):
                    continue
                for small in inner.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and self_attr(small.targets[0].target) is not None:
                        if isinstance(small.value, cst.IfExp):
                            self._chosen_layers(small.targets[0].target.attr.value, small.value, env, described)  # type: ignore[attr-defined]
                            continue
                        layer = self.layer(small.value, env) if isinstance(small.value, cst.Call) else None
                        if layer is not None:
                            described.conditional[small.targets[0].target.attr.value] = layer  # type: ignore[attr-defined]
                            described.branches.setdefault(small.targets[0].target.attr.value, []).append(layer)  # type: ignore[attr-defined]

    def _chosen_layers(self, attribute: str, value: cst.IfExp, env: Env, described: ModuleClass) -> None:
        """`self.act = nn.Hardswish() if act else nn.Identity()`: where every branch of the
        conditional expression (nested ones too) builds a layer, the attribute may hold each."""
        layers = [self.layer(choice, env) if isinstance(choice, cst.Call) else None for choice in alternatives(value)]
        if all(layer is not None for layer in layers):
            described.branches.setdefault(attribute, []).extend(layers)  # type: ignore[arg-type]
            described.chosen.add(attribute)

    def _init_layers(self, init: cst.FunctionDef, env: Env, described: ModuleClass) -> Optional[int]:
        total: Optional[int] = 0
        local_calls = {k: v for k, v in env.items() if isinstance(v, cst.Call)}
        for statement in init.body.body if isinstance(init.body, cst.IndentedBlock) else ():
            if not isinstance(statement, cst.SimpleStatementLine):
                if _assigns_self(statement):
                    total = None  # layers built in a loop or behind a condition: not counted
                    if isinstance(statement, (cst.If, cst.Try)):
                        self._conditional_layers(statement, env, described)
                continue
            for small in statement.body:
                if isinstance(small, (cst.Assign, cst.AnnAssign)):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    attrs = [t.attr.value for t in targets if self_attr(t) is not None]
                    if not attrs or small.value is None:
                        continue
                    value = small.value
                    if isinstance(value, cst.Name) and value.value in local_calls:
                        value = local_calls[value.value]
                    if isinstance(value, cst.IfExp):
                        for attr in attrs:
                            self._chosen_layers(attr, value, env, described)
                    layer = self.layer(value, env) if isinstance(value, cst.Call) else None
                    if layer is not None:
                        for attr in attrs:
                            described.attributes[attr] = layer
                    if isinstance(value, cst.Call):
                        params = layer.params if layer is not None else self._non_module_call(value)
                        total = None if total is None or params is None else total + params
                elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    call = small.value
                    func = call.func
                    if isinstance(func, cst.Attribute) and func.attr.value in ("add_module", "register_parameter"):
                        value = call.args[1].value if len(call.args) == 2 else None
                        if isinstance(value, cst.Name) and value.value == "None":
                            continue  # `register_parameter("bias", None)`: nothing
                        layer = self.layer(value, env) if isinstance(value, cst.Call) else None
                        total = None if total is None or layer is None or layer.params is None else total + layer.params
        return total

    def _non_module_call(self, call: cst.Call) -> Optional[int]:
        """Parameters held by a call that is not a layer: 0 when it is a plain Python builtin."""
        func = call.func
        if isinstance(func, cst.Name) and func.value in ("int", "float", "bool", "str", "len", "list", "dict", "tuple", "set"):
            return 0
        qualified = resolve_global(self.ctx, func)
        if qualified and qualified.startswith("torch.") and not qualified.startswith("torch.nn."):
            return 0  # torch.zeros(...) buffers, torch.device(...): not parameters
        return None

    # ------------------------------------------------------------------ one layer constructor

    def layer(self, call: cst.Call, env: Env) -> Optional[Layer]:
        func = call.func
        kind = torch_nn_name(self.ctx, func)
        if kind is not None:
            return self._torch_layer(kind, call, env)
        if resolve_global(self.ctx, func) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return Layer(call, "Parameter", _tensor_elements(call, env, self.ctx))
        if isinstance(func, cst.Name) and func.value in self.classes:
            return Layer(call, f"local:{func.value}", self._local_params(func.value, call))
        inner = unwrapped_layer(self.ctx, call)  # `layer_init(nn.Conv2d(...))` builds the Conv2d
        if inner is not call:
            return self.layer(inner, env)
        return self._factory_built(call)

    def _factory_built(self, call: cst.Call) -> Optional[Layer]:
        """A factory of the file whose every `return` builds one torch.nn class (`conv1x1(i, o)`
        returning `nn.Conv2d(...)`, fairseq's `Linear(i, o)` returning `m = nn.Linear(...)` once its
        weights are initialised: initialisers.built_layer): a layer of that class, its sizes not
        folded (the returned call's arguments are the factory's parameters).  Not an activation (an
        `inplace=` fix belongs in the factory, not at this call), a container or a parameter."""
        built = built_layer(self.ctx, call, self.scopes[-1] if self.scopes else None)
        if built is call:
            return None
        kind = torch_nn_name(self.ctx, built.func)
        if kind is None or kind in tables.INPLACE_MODULES or kind in CONTAINERS or kind == "Parameter":
            return None
        return Layer(call, kind, None)

    def _local_params(self, name: str, call: Optional[cst.Call]) -> Optional[int]:
        if self._reaching:
            self._reaching[-1].add(name)
        if name in self._active:  # recursive construction: give up
            return None
        key = (name, None if call is None else _arguments_key(call))
        known = self._param_counts.get(key)
        if known is not None and known[1].isdisjoint(self._active):
            if self._reaching:
                self._reaching[-1].update(known[1])
            return known[0]
        reached = {name}
        self._active.add(name)
        self._reaching.append(reached)
        try:
            count = self._describe(name, call).param_count
        finally:
            self._reaching.pop()
            self._active.discard(name)
        if self._reaching:
            self._reaching[-1].update(reached)
        if reached.isdisjoint(self._active):  # no guard answered for a class outside this one
            self._param_counts[key] = (count, frozenset(reached))
        return count

    def _torch_layer(self, kind: str, call: cst.Call, env: Env) -> Layer:
        layer = Layer(call, kind, None)
        args = _arguments(call)

        def arg(position: int, keyword: str, default: Optional[cst.BaseExpression] = None):
            return args.get(keyword, args.get(position, default))

        def number(position: int, keyword: str, default: Optional[int] = None) -> Optional[int]:
            expr = arg(position, keyword)
            return default if expr is None else fold_int(expr, env)

        def flag(position: int, keyword: str, default: bool) -> Optional[bool]:
            expr = arg(position, keyword)
            if expr is None:
                return default
            if (literal := literal_bool(expr)) is not None:
                return literal
            bound = env.get(expr.value) if isinstance(expr, cst.Name) else None
            return None if bound is None else literal_bool(bound)

        if kind in PARAMETER_FREE:
            layer.params = 0
        elif kind == "Linear":
            n_in, n_out, bias = number(0, "in_features"), number(1, "out_features"), flag(2, "bias", True)
            layer.in_features, layer.out_features = n_in, n_out
            if None not in (n_in, n_out, bias):
                layer.params = n_in * n_out + (n_out if bias else 0)
        elif kind.startswith(("Conv", "ConvTranspose")) and kind[-2:] in ("1d", "2d", "3d"):
            dims = int(kind[-2])
            n_in, n_out = number(0, "in_channels"), number(1, "out_channels")
            # Conv(in, out, kernel, stride, padding, dilation, groups, bias) and ConvTranspose(in, out,
            # kernel, stride, padding, output_padding, groups, bias): groups and bias are 6th and 7th in both
            groups = number(6, "groups", 1)
            bias = flag(7, "bias", True)
            kernel = _kernel_elements(arg(2, "kernel_size"), dims, env)
            if None not in (n_in, n_out, groups, bias, kernel) and groups:
                layer.params = n_in // groups * n_out * kernel + (n_out if bias else 0)
        elif kind in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"):
            n, affine = number(0, "num_features"), flag(3, "affine", True)
            if n is not None and affine is not None:
                layer.params = 2 * n if affine else 0
        elif kind in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"):
            n, affine = number(0, "num_features"), flag(3, "affine", False)
            if n is not None and affine is not None:
                layer.params = 2 * n if affine else 0
        elif kind == "GroupNorm":
            n, affine = number(1, "num_channels"), flag(3, "affine", True)
            if n is not None and affine is not None:
                layer.params = 2 * n if affine else 0
        elif kind in ("LayerNorm", "RMSNorm"):
            shape = arg(0, "normalized_shape")
            n = _shape_elements(shape, env) if shape is not None else None
            affine = flag(2, "elementwise_affine", True)
            if n is not None and affine is not None:
                layer.params = (2 if kind == "LayerNorm" else 1) * n if affine else 0
        elif kind == "Embedding":
            n, d = number(0, "num_embeddings"), number(1, "embedding_dim")
            if n is not None and d is not None:
                layer.params = n * d
        elif kind == "MultiheadAttention":
            e = number(0, "embed_dim")
            if e is not None and "kdim" not in args and "vdim" not in args and flag(3, "bias", True):
                layer.params = 4 * e * e + 4 * e
        elif kind in CONTAINERS:
            layer.children, layer.params = self._container(call, env)
        return layer

    def _container(self, call: cst.Call, env: Env) -> tuple[list[Layer], Optional[int]]:
        children: list[Layer] = []
        total: Optional[int] = 0
        elements: list[cst.BaseExpression] = []
        multiplier = 1
        for argument in call.args:
            value = argument.value
            if argument.star == "*" and isinstance(value, (cst.List, cst.Tuple)):
                elements.extend(e.value for e in value.elements)
            elif argument.star == "" and isinstance(value, (cst.List, cst.Tuple)):
                elements.extend(e.value for e in value.elements)
            elif argument.star == "" and isinstance(value, cst.ListComp):
                repeats = _range_count(value.for_in, env)
                if repeats is None or value.for_in.inner_for_in is not None:
                    return children, None
                elements.append(value.elt)
                multiplier = repeats
            elif argument.star == "" and _is_ordered_dict(value, self.ctx):
                pairs = value.args[0].value.elements if value.args and isinstance(value.args[0].value, (cst.List, cst.Tuple)) else []  # type: ignore[union-attr]
                for pair in pairs:
                    if isinstance(pair.value, cst.Tuple) and len(pair.value.elements) == 2:
                        elements.append(pair.value.elements[1].value)
                    else:
                        return children, None
            elif argument.star == "" and argument.keyword is None:
                elements.append(value)
            else:
                return children, None
        for element in elements:
            child = self.layer(element, env) if isinstance(element, cst.Call) else None
            if child is None:
                total = None
                continue
            children.append(child)
            total = None if total is None or child.params is None else total + child.params
        return children, (None if total is None else total * multiplier)

    # ------------------------------------------------------------------ forward

    def _flatten_fed(self, described: ModuleClass) -> set[str]:
        """Attributes forward calls on a value that a flatten produced (directly or through dropout /
        activations)."""
        flat_layers = frozenset(a for a, l in described.attributes.items() if l.kind == "Flatten")
        passthrough = frozenset(a for a, l in described.attributes.items() if l.params == 0 and l.kind != "Flatten")
        fed: set[str] = set()
        flat_names: set[str] = set()

        def feeds(expr: cst.BaseExpression) -> bool:
            if isinstance(expr, cst.Name):
                return expr.value in flat_names
            if is_flatten(expr, self.ctx, flat_layers):
                return True
            if isinstance(expr, cst.Call) and self_attr(expr.func) in passthrough and expr.args:
                return feeds(expr.args[0].value)
            return False

        def note_calls(expr: cst.CSTNode) -> None:
            from memlint.analysis.walk import code_descendants

            for node in [expr, *code_descendants(expr)]:
                if type(node) is cst.Call and node.args and self_attr(node.func) is not None:
                    if feeds(node.args[0].value):
                        fed.add(self_attr(node.func))  # type: ignore[arg-type]

        def scan(statements) -> None:
            for statement in statements:
                if isinstance(statement, cst.SimpleStatementLine):
                    for small in statement.body:
                        note_calls(small)
                        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                            name = small.targets[0].target.value
                            (flat_names.add if feeds(small.value) else flat_names.discard)(name)
                else:
                    for block in nested_blocks(statement):
                        scan(block)

        forward = described.forward
        if forward is not None and isinstance(forward.body, cst.IndentedBlock):
            scan(forward.body.body)
        return fed


def first_linear_after_flatten(layers: list[Layer], *, flattened_input: bool) -> list[Layer]:
    """The Linear layers of a Sequential that receive a flattened map: the first one after an
    `nn.Flatten()` (or after the start, when the Sequential's input is flattened), with only
    parameter-free layers (dropout, activations) in between."""
    found: list[Layer] = []
    flat = flattened_input
    for layer in layers:
        if layer.kind == "Flatten":
            flat = True
        elif layer.kind == "Linear" and flat:
            found.append(layer)
            flat = False
        elif layer.params != 0:
            flat = False
    return found


# ---------------------------------------------------------------------------- helpers


def _arguments(call: cst.Call) -> dict:
    """Positional arguments by index and keyword arguments by name (no */** unpacking)."""
    result: dict = {}
    position = 0
    for argument in call.args:
        if argument.star:
            result["*"] = argument.value
            continue
        if argument.keyword is not None:
            result[argument.keyword.value] = argument.value
        else:
            result[position] = argument.value
            position += 1
    return result


def _arguments_key(call: cst.Call) -> tuple:
    """What `_bind_call` reads of `call`, as a key: each argument's keyword, star and code."""
    return tuple(
        (argument.keyword.value if argument.keyword is not None else None, argument.star, _CODE.code_for_node(argument.value))
        for argument in call.args
    )


_CODE = cst.Module(body=[])


def _bind_call(function: cst.FunctionDef, call: cst.Call, env: Env) -> dict:
    """`Block(64, hidden=128)` against `def __init__(self, channels, hidden=256)`."""
    bound = dict(env)
    params = [p for p in [*function.params.posonly_params, *function.params.params]][1:]  # skip self
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        for p in params:
            bound.pop(p.name.value, None)
        return bound
    for param, argument in zip(params, positional):
        bound[param.name.value] = argument.value
    for argument in call.args:
        if argument.keyword is not None:
            bound[argument.keyword.value] = argument.value
    return bound


def _kernel_elements(expr: Optional[cst.BaseExpression], dims: int, env: Env) -> Optional[int]:
    if expr is None:
        return None
    if isinstance(expr, (cst.Tuple, cst.List)):
        sizes = [fold_int(e.value, env) for e in expr.elements]
        return None if None in sizes else math.prod(sizes)  # type: ignore[arg-type]
    size = fold_int(expr, env)
    return None if size is None else size**dims


def _shape_elements(expr: cst.BaseExpression, env: Env) -> Optional[int]:
    if isinstance(expr, (cst.Tuple, cst.List)):
        sizes = [fold_int(e.value, env) for e in expr.elements]
        return None if None in sizes else math.prod(sizes)  # type: ignore[arg-type]
    return fold_int(expr, env)


def _tensor_elements(call: cst.Call, env: Env, ctx: "Context") -> Optional[int]:
    """`nn.Parameter(torch.zeros(a, b))` -> a * b."""
    if not call.args or not isinstance(call.args[0].value, cst.Call):
        return None
    inner = call.args[0].value
    qualified = resolve_global(ctx, inner.func)
    if qualified not in ("torch.zeros", "torch.ones", "torch.randn", "torch.rand", "torch.empty"):
        return None
    sizes = [a.value for a in inner.args if a.keyword is None]
    if len(sizes) == 1 and isinstance(sizes[0], (cst.Tuple, cst.List)):
        return _shape_elements(sizes[0], env)
    folded = [fold_int(s, env) for s in sizes]
    return None if not folded or None in folded else math.prod(folded)  # type: ignore[arg-type]


def _range_count(comp: cst.CompFor, env: Env) -> Optional[int]:
    iterable = comp.iter
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range":
        if len(iterable.args) == 1:
            return fold_int(iterable.args[0].value, env)
    return None


def _is_ordered_dict(expr: cst.BaseExpression, ctx: "Context") -> bool:
    return isinstance(expr, cst.Call) and resolve_global(ctx, expr.func) in (
        "collections.OrderedDict",
        "typing.OrderedDict",
    )


def _assigns_self(statement: cst.CSTNode) -> bool:
    from memlint.analysis.walk import code_descendants

    for node in code_descendants(statement):
        if isinstance(node, cst.AssignTarget) and self_attr(node.target) is not None:
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
            "add_module", "register_parameter", "append", "extend",
        ):  # fmt: skip
            return True
    return False


def single_module_classes(ctx: "Context") -> tuple[cst.ClassDef, ...]:
    """The module-level classes of the file defined once, on `nn.Module` alone (memoised): the
    classes whose `forward` a fact may read as the only code an instance runs."""
    return ctx.memo("single-module-classes", lambda: _single_module_classes(ctx))  # type: ignore[return-value]


def _single_module_classes(ctx: "Context") -> tuple[cst.ClassDef, ...]:
    defined: dict[str, int] = {}
    candidates: list[cst.ClassDef] = []
    for statement in ctx.module.body:
        if type(statement) is cst.ClassDef:
            defined[statement.name.value] = defined.get(statement.name.value, 0) + 1
            if len(statement.bases) == 1 and torch_nn_name(ctx, statement.bases[0].value) == "Module":
                candidates.append(statement)
    return tuple(c for c in candidates if defined[c.name.value] == 1)
