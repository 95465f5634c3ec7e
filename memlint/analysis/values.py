"""What an expression evaluates to, as far as memory is concerned.

A small, flow-sensitive abstraction: is the value a tensor, a number, a module; does it carry
autograd history (`graph`), and is it known to be a 0-d tensor (`scalar`: a torch loss with a mean
or sum reduction, `.mean()`, `.sum()`; not a guess from a name, since `.item()` on a loss of
`reduction="none"` raises).  `graph is None` means the analysis cannot tell, and rules stay silent then.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Union

import libcst as cst

from memlint.analysis import call_rules, tables
from memlint.analysis.bindings import binds, target_names
from memlint.analysis.built_models import builds_model
from memlint.analysis.naming import looks_like_class_name
from memlint.analysis.project_facts import history_passed, returns_history
from memlint.analysis.submodules import is_submodule, is_submodule_source
from memlint.analysis.walk import dotted_name, nested_blocks
from memlint.pipeline.tree import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context


class Kind(enum.Enum):
    UNKNOWN = "unknown"
    NUMBER = "number"  # a Python number, string or bool
    TENSOR = "tensor"
    MODULE = "module"  # an nn.Module instance (or a loss function): calling it runs a model
    FUNCTION = "function"  # a function or class defined in this file
    CONTAINER = "container"  # a list, dict or set built here (its elements are not tracked)
    OTHER = "other"  # anything else we know is not a tensor (or, with graph None, cannot tell)


@dataclass(frozen=True)
class Value:
    kind: Kind
    graph: Optional[bool] = None
    scalar: bool = False
    # For MODULE values: the call result is a loss (by its name or class); with `scalar`, calling it
    # certainly returns a 0-d tensor (a torch loss module reducing by mean or sum).
    is_loss: bool = False


UNKNOWN = Value(Kind.UNKNOWN)
NUMBER = Value(Kind.NUMBER, graph=False, scalar=True)
OTHER = Value(Kind.OTHER, graph=False)
FUNCTION = Value(Kind.FUNCTION, graph=False)
MODULE = Value(Kind.MODULE, graph=False)
LOSS_MODULE = Value(Kind.MODULE, graph=False, is_loss=True)
REDUCING_LOSS_MODULE = Value(Kind.MODULE, graph=False, scalar=True, is_loss=True)
CONTAINER = Value(Kind.CONTAINER)
# A list whose every element is a tensor known to carry no history (`[F.softmax(torch.randn(b, c))
# for _ in range(n)]`): what a loop over it, or an index into it, binds has none either.
GRAPH_FREE_TENSORS = Value(Kind.CONTAINER, graph=False)
# `None`: equal to OTHER for every question but "is this accumulator started as None" (`is NONE`).
NONE = Value(Kind.OTHER, graph=False)
# Another name for something we cannot see (`decode = self.wp_decode`): not a guess that it is a model.
OPAQUE = Value(Kind.OTHER)

_CONTAINER_DISPLAYS = (cst.List, cst.Dict, cst.Set)
_DISPLAYS = frozenset({cst.List, cst.Tuple, cst.Dict, cst.Set})
_CONTAINER_BUILDERS = frozenset({"list", "dict", "set"})
_CONTAINER_FACTORIES = frozenset({"collections.defaultdict", "collections.OrderedDict", "collections.deque"})

_NUMBER_BUILTINS = frozenset({"float", "int", "bool", "round", "len", "str", "repr", "format"})


def tensor(graph: Optional[bool], scalar: bool = False) -> Value:
    return Value(Kind.TENSOR, graph=graph, scalar=scalar)


def evaluate(expr: cst.BaseExpression, ctx: "Context") -> Value:
    """Abstract value of `expr` in the current state of `ctx`."""
    # Concrete libcst node classes have no subclasses, so `type(expr) is X` answers isinstance
    # without going through ABCMeta (the costliest part of this function when written with isinstance).
    kind = type(expr)
    if kind is cst.Name:
        if expr.value in ("True", "False", "None"):
            return NONE if expr.value == "None" else OTHER
        return ctx.lookup_value(expr.value)
    if kind is cst.Attribute:
        return _attribute(expr, ctx)
    if kind is cst.Call:
        return _call(expr, ctx)
    if kind in _LITERALS:
        return NUMBER
    if kind is cst.Subscript:
        base = evaluate(expr.value, ctx)
        if base.kind is Kind.TENSOR or base.graph:
            return tensor(base.graph)
        if base == GRAPH_FREE_TENSORS:
            return tensor(False)  # an element, or a slice, of a list of tensors without history
        if base.kind in (Kind.CONTAINER, Kind.UNKNOWN, Kind.MODULE) and is_submodule(expr, ctx):
            return MODULE  # `all_block[i]` of a list filled from `model.children()`
        return UNKNOWN
    if kind is cst.BinaryOperation:
        if type(expr.operator) is cst.Multiply and (type(expr.left) is cst.List or type(expr.right) is cst.List):
            return CONTAINER  # `[0] * n`, `n * [0.0]`: a list repeated, as a list display is a list
        combined = _combine(evaluate(expr.left, ctx), evaluate(expr.right, ctx))
        if combined.graph and ctx.grad_mode.records_graph is False:
            return tensor(False, scalar=combined.scalar)  # arithmetic under no_grad makes a new tensor without history
        return combined
    if kind is cst.UnaryOperation:
        if type(expr.operator) is cst.Not:
            return OTHER
        return evaluate(expr.expression, ctx)
    if kind is cst.Comparison or kind is cst.BooleanOperation:
        return OTHER if not _is_tensor_comparison(expr, ctx) else tensor(False)
    if kind is cst.IfExp:
        return _join(evaluate(expr.body, ctx), evaluate(expr.orelse, ctx))
    if kind is cst.List or kind is cst.ListComp or kind is cst.GeneratorExp:
        return _list_of(expr, ctx)
    if kind in _CONTAINER_DISPLAY_TYPES:
        return CONTAINER
    return UNKNOWN  # containers, comprehensions, lambdas, awaits: not tracked


def _list_of(expr: cst.BaseExpression, ctx: "Context") -> Value:
    """A list display or comprehension: GRAPH_FREE_TENSORS where every element is a tensor without
    history.  A comprehension's element may not mention its own targets (the valuation would read
    the names of the enclosing scope instead), except through `.detach()` and the like."""
    if type(expr) is cst.List:
        elements = [e.value for e in expr.elements]
        if elements and all(type(e) is not cst.StarredElement and _graph_free_tensor(evaluate(e, ctx)) for e in elements):
            return GRAPH_FREE_TENSORS
        return CONTAINER
    element = expr.elt  # type: ignore[attr-defined]
    free = _graph_free_tensor(evaluate(element, ctx))
    if free and (not _comprehension_targets(expr) & _free_names(element) or _detaches(element)):
        return GRAPH_FREE_TENSORS
    return CONTAINER if type(expr) is cst.ListComp else UNKNOWN


def _graph_free_tensor(value: Value) -> bool:
    return value.kind is Kind.TENSOR and value.graph is False


def _comprehension_targets(comprehension: cst.CSTNode) -> set:
    targets: set = set()
    clause = comprehension.for_in  # type: ignore[attr-defined]
    while clause is not None:
        targets.update(target_names(clause.target))
        clause = clause.inner_for_in
    return targets


def _free_names(node: cst.CSTNode) -> set:
    """The names `node` reads, less the targets of the comprehensions inside it
    (`torch.LongTensor([random.randint(0, 4) for _ in range(5)])` reads no `_`)."""
    nodes = (node, *code_descendants(node))
    names = {n.value for n in nodes if type(n) is cst.Name}
    for inner in nodes:
        if type(inner) in (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp):
            names -= _comprehension_targets(inner)
    return names


def _detaches(element: cst.BaseExpression) -> bool:
    """`x.detach()`, `x.detach().cpu()`: no history whatever `x` is."""
    while type(element) is cst.Call and type(element.func) is cst.Attribute:  # type: ignore[attr-defined]
        if element.func.attr.value in ("detach", "item", "tolist", "numpy"):  # type: ignore[attr-defined]
            return True
        element = element.func.value  # type: ignore[attr-defined]
    return False


def iterated(iterable: cst.BaseExpression, ctx: "Context") -> "Union[Value, tuple]":
    """What a `for` over `iterable` binds to its target, where a list of tensors without history
    settles it (`for out in self.outputs`): `zip(a, b)` and `enumerate(a)` give a tuple, one value
    per element of the target.  UNKNOWN otherwise."""
    if type(iterable) is cst.Call and type(iterable.func) is cst.Name and ctx.is_builtin(iterable.func.value):  # type: ignore[attr-defined]
        name = iterable.func.value  # type: ignore[attr-defined]
        args = iterable.args  # type: ignore[attr-defined]
        if name == "zip" and args and all(a.keyword is None and not a.star for a in args):
            return tuple(iterated(a.value, ctx) for a in args)
        if name == "enumerate" and len(args) == 1:
            return (NUMBER, iterated(args[0].value, ctx))
        return UNKNOWN
    if evaluate(iterable, ctx) == GRAPH_FREE_TENSORS:
        return tensor(False)
    return MODULE if is_submodule_source(iterable, ctx) else UNKNOWN  # `for block in model.children()`


_LITERALS = frozenset(
    {cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString}
)
_CONTAINER_DISPLAY_TYPES = frozenset(_CONTAINER_DISPLAYS)


def element_of(value: Value) -> Value:
    """Value bound by unpacking `value` (`loss, logits = model(x)`)."""
    if value.graph:
        return tensor(True)
    if value.graph is False and value.kind in (Kind.TENSOR, Kind.CONTAINER):
        return tensor(False)  # a tensor's rows, or an element of GRAPH_FREE_TENSORS
    return UNKNOWN


def _is_tensor_comparison(expr: cst.BaseExpression, ctx: "Context") -> bool:
    if isinstance(expr, cst.Comparison):
        return evaluate(expr.left, ctx).kind is Kind.TENSOR
    return False


def _combine(left: Value, right: Value) -> Value:
    if left.graph or right.graph:
        scalar = all(v.scalar for v in (left, right) if v.graph is not False or v.kind is Kind.TENSOR)
        return tensor(True, scalar=scalar)
    if left.graph is False and right.graph is False:
        if left.kind is Kind.NUMBER and right.kind is Kind.NUMBER:
            return NUMBER
        return tensor(False, scalar=left.scalar and right.scalar)
    return UNKNOWN


def _join(a: Value, b: Value) -> Value:
    if a == b:
        return a
    if a.graph and b.graph:
        return tensor(True, scalar=a.scalar and b.scalar)
    if a.graph is False and b.graph is False:
        return tensor(False) if Kind.TENSOR in (a.kind, b.kind) else OTHER
    return UNKNOWN


def _attribute(expr: cst.Attribute, ctx: "Context") -> Value:
    attr = expr.attr.value
    if type(expr.value) is cst.Name and expr.value.value == "self":
        value = ctx.lookup_self_attribute(attr)
        if value.kind is Kind.TENSOR and ctx.model.module_evidence(f"self.{attr}"):
            # `self.network = config.network_fn()` reads as a model-named callee's output, but the
            # file calls `self.network(x)` and gives it `.parameters()` or `.load_state_dict()`, which
            # no tensor has: the factory built a model.
            return MODULE
        return value
    if ctx.resolve(expr) is not None:  # torch.float32, np.pi, ...: a module attribute, not a tensor
        return OTHER
    base = evaluate(expr.value, ctx)
    if attr in tables.GRAPH_FREE_ATTRIBUTES:
        return tensor(False) if attr in ("data", "grad") and base.kind is Kind.TENSOR else OTHER
    if base.kind is Kind.MODULE:
        return MODULE  # a submodule: model.encoder
    if base.graph:  # a field of a model's output: outputs.loss, outputs.logits
        return tensor(True)  # `outputs.loss`: what the model computed it as is not visible here
    return UNKNOWN


def alias_value(expr: cst.BaseExpression, ctx: "Context") -> Value:
    """What a name bound to another name or attribute holds (`net = self.net`, `decode = self.wp_decode`)."""
    value = evaluate(expr, ctx)
    if value.kind is not Kind.UNKNOWN or type(expr) not in _NAME_OR_ATTRIBUTE:
        return value
    if _looks_like_model(expr, ctx):
        return MODULE if not tables.LOSS_NAME.match(_last_name(expr)) else LOSS_MODULE
    return OPAQUE


_NAME_OR_ATTRIBUTE = frozenset({cst.Name, cst.Attribute})


def _last_name(expr: cst.BaseExpression) -> str:
    return expr.value if isinstance(expr, cst.Name) else expr.attr.value  # type: ignore[union-attr]


def _call(call: cst.Call, ctx: "Context") -> Value:
    func = call.func
    kind = type(func)
    qualified = ctx.resolve(func)
    project = ctx.project
    if (project.history_calls or project.history_methods) and returns_history(call, ctx):
        return _model_output(ctx)  # a project function that returns a model's output
    if project.history_through:
        if any(evaluate(passed, ctx).graph for passed in history_passed(call, ctx)):
            return _model_output(ctx)  # `l2_norm(emb)`: a project function returning its argument's history
    if qualified in _CONTAINER_FACTORIES:
        return CONTAINER
    if qualified is not None:
        return _torch_call(qualified, call, ctx)
    if kind is cst.Name and func.value in _CONTAINER_BUILDERS and ctx.is_builtin(func.value):
        return CONTAINER
    if kind is cst.Attribute:
        method = func.attr.value
        if method in tables.GATHERING_METHODS and len(call.args) == 1 and type(call.args[0].value) not in _DISPLAYS:
            # `accelerator.gather(preds)`: the values of every process, as they were (in one process,
            # the tensor itself)
            return evaluate(call.args[0].value, ctx)
        receiver = evaluate(func.value, ctx)
        if method in tables.GRAPH_FREE_METHODS:
            if method == "detach":
                return tensor(False, scalar=receiver.scalar)
            return NUMBER if method in ("item", "tolist", "size", "dim", "numel") else OTHER
        if receiver.kind is Kind.MODULE:
            if method in tables.MODULE_RETURNING:  # model.to(device), model.eval(): the module itself
                return receiver
            return _model_output(ctx, scalar=receiver.scalar) if method == "forward" else UNKNOWN
        if receiver.kind is Kind.TENSOR or receiver.graph is not None:
            preserve = tables.GRAPH_PRESERVING_METHODS.get(method)
            if method == "type" and call.args:
                preserve = "same"  # `t.type(torch.FloatTensor)`: a cast, with t's history (`t.type()` is a string)
            if preserve is None:
                return UNKNOWN
            if preserve == "same":
                scalar = receiver.scalar
            else:
                scalar = bool(preserve) and not call.args
            return tensor(receiver.graph, scalar=scalar)
    if kind is cst.Name and func.value in _NUMBER_BUILTINS and ctx.is_builtin(func.value):
        return NUMBER
    if kind is cst.Name and func.value in ctx.module_classes and ctx.lookup_value(func.value).kind in (Kind.FUNCTION, Kind.UNKNOWN):
        return LOSS_MODULE if func.value.endswith("Loss") else MODULE  # an nn.Module class of this file
    callee = evaluate(func, ctx) if kind in _NAME_OR_ATTRIBUTE or kind is cst.Subscript else UNKNOWN
    if callee.kind is Kind.MODULE and kind is cst.Name and names_a_module_class(func.value, ctx):
        return callee  # `Model(envs)` with `Model: nn.Module`: the annotation names a class; this builds one
    if callee.kind is Kind.MODULE:
        if callee.is_loss and graph_free_arguments(call, ctx):
            return tensor(False, scalar=callee.scalar)  # `criterion(pred.detach(), y)`: a loss of values without history
        return _model_output(ctx, scalar=callee.scalar)
    if kind is cst.Name and func.value == "self" and ctx.in_module_class:
        return _model_output(ctx)
    own = own_definition(func, ctx) if callee.kind in (Kind.UNKNOWN, Kind.FUNCTION) else None
    if own is not None:
        # The file's own function, method or class: judged by what it is, never by its name
        # (`get_criterion_callback` builds a callback, `test_model` returns a float).  What its body
        # returns is the project pass's answer (`returns_history`, above).
        if own == "class":
            return PLAIN_OBJECT  # an instance of a class that is not an nn.Module: no autograd in sight
        name = func.value if kind is cst.Name else func.attr.value  # type: ignore[union-attr]
        if call_rules.is_loss_name(name) and _args_graph(call, ctx):
            return tensor(True)  # a hand-written loss of tensors that carry history (its shape unknown)
        if own == "function" and call_rules.is_loss_name(name) and graph_free_arguments(call, ctx):
            return tensor(False)  # a module-level loss of detached tensors and numbers (not a method: `self` may hold a model)
        return UNKNOWN
    if callee.kind in (Kind.UNKNOWN, Kind.FUNCTION) and _looks_like_model(func, ctx):
        if builds_model(call, ctx):
            return MODULE  # `model = net(pretrained=True)` then `model.eval()`: a factory named like a model
        name = func.value if kind is cst.Name else func.attr.value  # type: ignore[union-attr]
        is_loss = call_rules.is_loss_name(name)
        if callee.kind is Kind.FUNCTION and not is_loss:
            return UNKNOWN  # a local helper named like a model: we can see it is not one
        if is_loss and not _on_self(func) and graph_free_arguments(call, ctx):
            return tensor(False)  # `criterion(pred.detach().cpu(), y.cpu())`: a loss of values without history
        return _model_output(ctx)  # named like a loss: not known to be 0-d
    return UNKNOWN


def names_a_module_class(name: str, ctx: "Context") -> bool:
    """Is `name` (capitalised, valued a module) a class rather than an instance?  A parameter
    annotated `nn.Module` (`Model: nn.Module`) holds a class by convention; a name an assignment
    bound to a module (`G = Generator()`, `D = Discriminator().cuda()`) holds an instance, whatever
    its case; so does a name the file gives a module's method (`G.eval()`)."""
    if not looks_like_class_name(name) or ctx.model.module_evidence(name):
        return False  # (`G.eval()`, `G.parameters()` somewhere: an instance)
    return ctx.is_param(name) or ctx.lookup_value(name).kind is not Kind.MODULE


def own_definition(func: cst.BaseExpression, ctx: "Context") -> Optional[str]:
    """Is `func` a function ("function"), a method of the enclosing class ("method") or a plain class
    ("class", not an nn.Module) defined in this file, as far as the file shows?  Module-level
    definitions count before their `def` is reached (functions run after the module has loaded:
    `test_model` called in `train` and defined below it)."""
    definitions = ctx.memo(_DEFINITIONS, lambda: _definitions(ctx.module))
    if type(func) is cst.Name:
        name = func.value
        value = ctx.lookup_value(name)
        if value.kind is Kind.FUNCTION or (value.kind is Kind.UNKNOWN and ctx.resolve(func) is None and ctx.binds_at_module_level(name)):
            found = definitions.get(name)  # type: ignore[union-attr]
            if found == "class":
                return "class" if _plain_class(name, definitions, ctx) else None
            if found == "function" or (found is None and value.kind is Kind.FUNCTION):
                return "function"
        return None
    if type(func) is cst.Attribute and type(func.value) is cst.Name and (func.value.value == "self" or _class_parameter(func.value.value, ctx)):  # type: ignore[union-attr]
        class_name = ctx.class_name
        if class_name is not None and func.attr.value in definitions.get(("methods", class_name), ()):  # type: ignore[union-attr]
            return "method"
    return None


def _class_parameter(name: str, ctx: "Context") -> bool:
    """Is `name` the class a `@classmethod` receives (its first parameter, `cls`), as the code at
    this point sees it?  `cls.helper(model)` there calls the class's own method `helper`, as
    `self.helper(model)` does in a plain method: no model, whatever the method is named."""
    for frame in reversed(ctx.frames):
        if frame.kind != "function":
            return False
        if name not in frame.names:
            continue
        method = frame.node
        if frame.key is None or frame.key[0] != "method" or type(method) is not cst.FunctionDef:
            return False  # (bound by a nested function: not the class)
        parameters = method.params.posonly_params or method.params.params  # type: ignore[union-attr]
        classmethod = any(type(d.decorator) is cst.Name and d.decorator.value == "classmethod" for d in method.decorators)  # type: ignore[union-attr]
        return classmethod and bool(parameters) and parameters[0].name.value == name and not _rebinds(method, name, ctx)
    return False


_REBINDS = "values.rebinds"


def _rebinds(method: cst.FunctionDef, name: str, ctx: "Context") -> bool:
    """Does the method's body rebind `name`?  Asked once per method and name: a classmethod making
    hundreds of `cls.helper(...)` calls would otherwise walk its whole body for each."""
    found = ctx.memo(_REBINDS, dict)
    key = (id(method), name)
    if key not in found:
        found[key] = binds(method.body, name)
    return found[key]


_DEFINITIONS = "values.definitions"
PLAIN_OBJECT = Value(Kind.OTHER, graph=False)


def _definitions(module: cst.Module) -> dict:
    """Module-level `def` / `class` names ("function" / "class"; a name defined both ways, or twice
    as different kinds, is left out), each class's bases as written, and each class's methods."""
    found: dict = {}
    clashes: set[str] = set()

    def note(name: str, what: str) -> None:
        if found.get(name, what) != what:
            clashes.add(name)
        found[name] = what

    def scan(statements, top: bool) -> None:
        for statement in statements:
            kind = type(statement)
            if kind is cst.FunctionDef and top:
                note(statement.name.value, "function")
            elif kind is cst.ClassDef:
                name = statement.name.value
                if top:
                    note(name, "class")
                found[("bases", name)] = [_written(base.value) for base in statement.bases if base.keyword is None]
                methods = found.setdefault(("methods", name), set())
                body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else ()
                methods.update(s.name.value for s in body if type(s) is cst.FunctionDef)
                scan(body, False)
            elif kind in (cst.If, cst.Try, cst.With, cst.TryStar):
                for block in nested_blocks(statement):
                    scan(block, top)

    scan(module.body, True)
    for name in clashes:
        found.pop(name, None)
    return found


def _written(expr: cst.BaseExpression) -> Optional[str]:
    if type(expr) is cst.Name:
        return expr.value  # type: ignore[union-attr]
    if type(expr) is cst.Attribute:
        inner = _written(expr.value)  # type: ignore[union-attr]
        return f"{inner}.{expr.attr.value}" if inner else None  # type: ignore[union-attr]
    return None


def _plain_class(name: str, definitions: dict, ctx: "Context", depth: int = 0) -> bool:
    """A class of this file whose bases are all `object` or plain classes of this file: no
    nn.Module anywhere up its hierarchy (a base the file imports might be one)."""
    if depth > 8 or name in ctx.module_classes or name in ctx.project.module_classes:
        return False
    for base in definitions.get(("bases", name), [None]):
        if base == "object":
            continue
        if base is None or definitions.get(base) != "class" or not _plain_class(base, definitions, ctx, depth + 1):
            return False
    return True


def _looks_like_model(func: cst.BaseExpression, ctx: "Context") -> bool:
    """`model(x)`, `criterion(out, y)`, `self.net(x)`, `trainer.model(x)` when we cannot see the binding."""
    kind = type(func)
    if kind is cst.Name:
        name = func.value
    elif kind is cst.Attribute:
        receiver = func.value
        # `importlib.import_module(...)`: a function of an imported module, not a model.
        if ctx.resolve(receiver) is not None:
            return False
        name = func.attr.value
    else:
        return False
    return call_rules.named_like_model_or_loss(name) or ctx.model.module_evidence(dotted_name(func))


def _model_output(ctx: "Context", *, scalar: bool = False) -> Value:
    return tensor(ctx.grad_mode.records_graph, scalar=scalar)


def graph_free_arguments(call: cst.Call, ctx: "Context") -> bool:
    """Is every argument of a loss call known to carry no autograd history: a tensor without it
    (`.detach()`, `.cpu()` of a detached value, `.data`, a factory without `requires_grad`) or a
    number?  A loss computes from its arguments alone, so its result then has none either.  A
    module, a container, a `*args` or a value the analysis cannot see may hold or be a model: no."""
    if not call.args:
        return False
    for arg in call.args:
        if arg.star:
            return False
        value = evaluate(arg.value, ctx)
        if value.graph is not False or value.kind not in (Kind.TENSOR, Kind.NUMBER):
            return False
    return True


def _on_self(func: cst.BaseExpression) -> bool:
    """`self.compute_loss(...)`: a method, which may run the model it is bound to."""
    return type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self"  # type: ignore[attr-defined]


def _args_graph(call: cst.Call, ctx: "Context") -> Optional[bool]:
    values = [evaluate(arg.value, ctx) for arg in call.args if arg.keyword is None]
    if any(v.graph for v in values):
        return True
    if values and all(v.graph is False for v in values):
        return False
    return None


def scalar_reduction(call: cst.Call) -> bool:
    """Does a torch loss (`nn.MSELoss(...)`, `F.mse_loss(...)`) reduce to a 0-d tensor: no
    `reduction=`, or a literal "mean" or "sum" (the deprecated `reduce=` / `size_average=` and
    any other value may keep one element per sample)?"""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("reduce", "size_average"):
            return False
        if arg.keyword is not None and arg.keyword.value == "reduction":
            value = arg.value
            return type(value) is cst.SimpleString and value.evaluated_value in ("mean", "sum")  # type: ignore[attr-defined]
    return True


def _requires_grad(call: cst.Call) -> bool:
    """A `requires_grad=` other than a literal `False`."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "requires_grad":
            return not (type(arg.value) is cst.Name and arg.value.value == "False")  # type: ignore[attr-defined]
    return False


def number_like(factory: str, call: cst.Call) -> bool:
    """A 0-d or one-element tensor made to hold a running number: `torch.tensor(0.0)`,
    `torch.zeros(1)`, `torch.zeros(())` (not `torch.randn(1, 4, 64, 64)`)."""
    positional = [arg.value for arg in call.args if arg.keyword is None]
    if len(positional) != 1:
        return False
    value = positional[0]
    if type(value) is cst.UnaryOperation:
        value = value.expression  # type: ignore[attr-defined]
    if factory in ("tensor", "as_tensor", "scalar_tensor"):
        return type(value) in (cst.Integer, cst.Float)
    if factory in ("zeros", "ones", "empty"):
        if type(value) in (cst.Tuple, cst.List):
            return not value.elements or (len(value.elements) == 1 and _is_one(value.elements[0].value))  # type: ignore[attr-defined]
        return _is_one(value)
    return False


def _is_one(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Integer and expr.evaluated_value == 1  # type: ignore[attr-defined]


def _torch_call(qualified: str, call: cst.Call, ctx: "Context") -> Value:
    """A call of torch's `qualified`, as call_rules.torch_call classes it (the rule the project
    pass's summaries and the screens read too)."""
    if qualified in tables.VARIABLE_CLASSES and call.args and call.args[0].keyword is None:
        # `Variable(t)`: a no-op wrapper since PyTorch 0.4, t itself (with `requires_grad=True`, a leaf
        # whose results will carry history)
        value = evaluate(call.args[0].value, ctx)
        return tensor(None) if _requires_grad(call) or value.kind is not Kind.TENSOR else tensor(value.graph, scalar=value.scalar)
    kind = call_rules.torch_call(qualified)
    if kind is None:
        return UNKNOWN
    module, _, name = qualified.rpartition(".")
    if kind == call_rules.MODULE:
        if name.endswith("Loss"):
            return REDUCING_LOSS_MODULE if scalar_reduction(call) else LOSS_MODULE
        return MODULE
    if kind == call_rules.LOSS:
        first = evaluate(call.args[0].value, ctx) if call.args else UNKNOWN
        reduced = scalar_reduction(call)
        graph = False if first.graph is False else ctx.grad_mode.records_graph
        return tensor(graph, scalar=reduced)
    if kind == call_rules.FRESH:
        # a factory (`torch.tensor(0.0)`: maybe a running number), a legacy constructor
        # (`torch.FloatTensor(3)`), indices or comparisons (`torch.argmax(probs, dim=1)`)
        if _requires_grad(call):
            return tensor(None)  # `torch.randn(3, requires_grad=True)`: a leaf whose results will carry history
        return tensor(False, scalar=number_like(name, call))
    if module == "torch.nn.functional":
        return tensor(_args_graph(call, ctx))
    graph = _args_graph(call, ctx)
    single = len(call.args) == 1 and name in ("sum", "mean", "norm", "prod")
    return tensor(graph, scalar=single)
