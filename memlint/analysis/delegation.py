"""Who runs a model, and who puts it in eval mode, on a caller's behalf: facts the evaluation context
(evaluation.py) needs to follow a model across a call of the file's own code.

- `helper_runs(call, receiver, ctx)`: after `X.eval()`, does `call` run X through code of the file?
  A module-level function handed X (`get_sample_image(G, n)` whose body runs `G(z)`) or reading
  the module's global X (`get_sample_image()` whose body runs the global `G`), or a method of the
  enclosing class called through `self` whose body runs `self.model` (`self._process_one_batch(x)`
  after `self.model.eval()`: Informer2020's `vali` / `test`).  The helper must be defined once,
  undecorated, switch no grad mode of its own (no `no_grad` / `enable_grad` / `set_grad_enabled`,
  no backward, no `torch.autograd.grad`) and not rebind the model's name: then the model runs with
  the caller's grad mode.  `self_helper_runs_model(call, ctx)` asks the same of a method helper
  for any model attribute of `self` (a region that a function's name opens covers every model).
- `mode_helper_call(statement, ctx)`: `self.net_mode(train=False)` (Beta-VAE's solver), a method of
  the enclosing class that, for the literal argument given, certainly reaches `self.net.eval()`
  (a statement of its body, or of the branch of `if train:` that the argument selects): that call.
- `computes_gradients(node, ctx)`: backward, `torch.autograd.grad`, `torch.func.*` inside `node`, or a
  run of a model whose `forward` computes gradients (MAML-style test-time adaptation).
- `binds(node, name)`: does a function (or a module statement) bind `name`?
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from memlint.analysis import tables, values
from memlint.analysis.bindings import bound_by, erring_names, own_scope
from memlint.analysis.constants import literal_bool
from memlint.analysis.literal_tests import literal_key, outcome_of_test
from memlint.analysis.model import MODULE_RETURNING
from memlint.analysis.model_wrappers import REPLICA_APPLYING_FUNCTIONS, REPLICATING_FUNCTIONS
from memlint.analysis.naming import method_runs_module, named_like_model
from memlint.analysis.walk import code_children, code_descendants, held_name

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Calls that compute gradients: a region that makes them is no evaluation (saliency, attacks).
# Not the rest of torch.autograd: `Variable(x, volatile=True)` (a no-op wrapper since PyTorch 0.4),
# `profiler`, `set_detect_anomaly` compute nothing.
_GRADIENT_FUNCTIONS = ("torch.autograd.functional.", "torch.func.", "functorch.")
# Names that turn gradients off or on, or run backward, inside a helper: its grad mode is its own.
_GRAD_SWITCHES = frozenset({"no_grad", "inference_mode", "enable_grad", "set_grad_enabled", "backward"})
_TOP_FUNCTIONS = "delegation.top-functions"
_CLASS_METHODS = "delegation.class-methods"


def helper_runs(call: cst.Call, receiver: str, ctx: "Context") -> bool:
    """Does `call` run the model put in eval mode (`receiver`, the code of what `.eval()` was called
    on) through a helper of the file: a module-level function handed it or reading it as a global,
    or a method of the enclosing class that runs `self....` (see the module docstring)?"""
    func = call.func
    if type(func) is cst.Name:
        return _function_runs(call, receiver, ctx)
    if type(func) is cst.Attribute and _is_self(func.value) and receiver.startswith("self."):
        method = _own_method(ctx, func.attr.value)
        return method is not None and _body_runs(method, lambda c: _code(ctx, c.func) == receiver, receiver, ctx, call)
    return False


def self_helper_runs_model(call: cst.Call, ctx: "Context") -> bool:
    """Is `call` `self.helper(...)`, a method of the enclosing class whose body runs a model held by
    `self` (`self.model(x)`, `self.net.encoder(x)`: an attribute of self that is an nn.Module by
    the analysis or by its name)?"""
    func = call.func
    if not (type(func) is cst.Attribute and _is_self(func.value)):
        return False
    method = _own_method(ctx, func.attr.value)
    return method is not None and _body_runs(method, lambda c: _runs_self_model(c, ctx), "self", ctx, call)


def self_layers_helper_runs(call: cst.Call, ctx: "Context") -> bool:
    """In a method of an nn.Module: is `call` `self.helper(x, ...)`, fed data, a method of the class
    whose body runs the module's own layers (`self.start_conv(x)`, `self.filter_convs[i](x)`), with
    the caller's grad mode (see `_body_runs`)?  After `self.eval()` that runs the module: pytorch-
    wavenet's `generate_fast` drives `self.wavenet(input, ...)`, the body of its forward."""
    func = call.func
    if not (type(func) is cst.Attribute and _is_self(func.value)) or not any(a.keyword is None and not a.star and type(a.value) in _DATA for a in call.args):
        return False
    method = _own_method(ctx, func.attr.value)
    return method is not None and _body_runs(method, lambda c: _runs_own_layer(c, ctx), "self", ctx, call)


# What can be a batch handed to a helper: a name, an attribute, an element, a call's result.
_DATA = (cst.Name, cst.Attribute, cst.Subscript, cst.Call)


def _runs_own_layer(call: cst.Call, ctx: "Context") -> bool:
    """`self.conv(x)` or `self.convs[i](x)`: a call of a layer the module holds (valued a module, not
    a loss), or of an element of a container of layers (`nn.ModuleList`)."""
    func = call.func
    if type(func) is cst.Subscript:
        func = func.value
    if type(func) is not cst.Attribute or not _is_self(func.value) or ctx.resolve(func) is not None:
        return False
    value = values.evaluate(func, ctx)
    return value.kind is values.Kind.MODULE and not value.is_loss


def mode_helper_call(statement: cst.CSTNode, ctx: "Context") -> Optional[cst.Call]:
    """`self.net_mode(train=False)` as a statement of its own: the `X.eval()` (or `X.train()`) call
    of the method's body that this literal argument certainly reaches first (None when the body
    reaches none by statements of its own and `if flag:` / `if not flag:` branches alone)."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:  # type: ignore[attr-defined]
        return None
    small = statement.body[0]  # type: ignore[attr-defined]
    call = small.value if type(small) is cst.Expr else None
    if type(call) is not cst.Call or type(call.func) is not cst.Attribute or not _is_self(call.func.value):
        return None
    method = _own_method(ctx, call.func.attr.value)
    if method is None or len(call.args) != 1 or call.args[0].star:
        return None
    params = [p.name.value for p in method.params.params]
    argument = call.args[0]
    parameter = argument.keyword.value if argument.keyword is not None else (params[1] if len(params) > 1 else None)
    flag = literal_bool(argument.value)
    if parameter not in params or flag is None:
        return None
    if binds_in_body(method, parameter):
        return None
    return _reached_mode(method.body, parameter, flag)


def _reached_mode(block: cst.BaseSuite, parameter: str, value: bool) -> Optional[cst.Call]:
    """The first `X.eval()` / `X.train()` statement-call a block certainly runs given `parameter ==
    value`, following `if parameter:` / `if not parameter:` branches (and nothing else)."""
    if not isinstance(block, cst.IndentedBlock):
        return None
    for statement in block.body:
        found = eval_call_shape(statement) or train_call_shape(statement)
        if found is not None:
            return found
        if type(statement) is not cst.If and any(type(n) is cst.Return for n in [statement, *code_descendants(statement)]):
            return None
        if type(statement) is cst.If:
            test = statement.test  # type: ignore[attr-defined]
            negated = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
            name = test.expression if negated else test
            if type(name) is not cst.Name or name.value != parameter:
                if any(type(n) is cst.Return for n in code_descendants(statement)):
                    return None  # (`if self.frozen: return` may leave before the mode call)
                continue
            taken = statement.body if value != negated else statement.orelse  # type: ignore[attr-defined]
            if type(taken) is cst.Else:
                taken = taken.body
            if isinstance(taken, cst.IndentedBlock):
                found = _reached_mode(taken, parameter, value)
                if found is not None:
                    return found
    return None


def eval_call_shape(statement: cst.CSTNode) -> Optional[cst.Call]:
    """The `.eval()` / `.train(False)` call of a statement that is only that (`model.eval()`,
    `model = model.cuda().eval()`), whatever its receiver is."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    call = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    while isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in _AFTER_THE_MODE:
        call = call.func.value  # `model.eval().to(device)`, `model.cuda().eval().half()`, `model.eval().apply(add_hooks)`
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
        return None
    method = call.func.attr.value
    is_eval = (method == "eval" and not call.args) or (
        method == "train"
        and len(call.args) == 1
        and (call.args[0].keyword is None or call.args[0].keyword.value == "mode")
        and isinstance(call.args[0].value, cst.Name)
        and call.args[0].value.value == "False"
    )
    return call if is_eval else None


# Module methods that return the module itself (the chain `model.cuda().eval().half()` is `model`;
# `eval` / `train` are the mode calls themselves, looked for in between).
KEEPS_THE_MODULE = MODULE_RETURNING - {"eval", "train"}
# What may follow the mode call in a statement that is only that call's chain: those, and
# `Module.apply(fn)`, which runs `fn` on every submodule and returns the module (deep-person-reid's
# `model.eval().apply(add_hooks)`: the mode call ran first, on `model`)
_AFTER_THE_MODE = KEEPS_THE_MODULE | {"apply"}


def train_call_shape(statement: cst.CSTNode) -> Optional[cst.Call]:
    """`X.train()` / `X.train(True)` as a statement of its own."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1 or type(statement.body[0]) is not cst.Expr:  # type: ignore[attr-defined]
        return None
    call = statement.body[0].value  # type: ignore[attr-defined]
    if type(call) is not cst.Call or type(call.func) is not cst.Attribute or call.func.attr.value != "train":
        return None
    if call.args and not (type(call.args[0].value) is cst.Name and call.args[0].value.value == "True"):
        return None
    return call


def binds_in_body(function: cst.FunctionDef, name: str) -> bool:
    """Does the function's body (not its parameters) rebind `name`?"""
    return any(binds(statement, name) for statement in (function.body.body if isinstance(function.body, cst.IndentedBlock) else ()))


def top_function(ctx: "Context", name: str) -> Optional[cst.FunctionDef]:
    """The module-level function `name` of the file (None where it is defined more than once)."""
    return ctx.memo(_TOP_FUNCTIONS, lambda: _top_functions(ctx.module)).get(name)  # type: ignore[union-attr, return-value]


def _function_runs(call: cst.Call, receiver: str, ctx: "Context") -> bool:
    handed = _handed_parameter(call, receiver, ctx)
    if handed is None:
        return False
    definition, parameter = handed
    replicated = _replicates_and_applies(definition, parameter, ctx)
    return _body_runs(definition, lambda c: (type(c.func) is cst.Name and c.func.value == parameter) or c is replicated, parameter, ctx)


def helper_runs_through_methods(call: cst.Call, receiver: str, ctx: "Context", runs_method: Callable[[cst.Call, str], bool]) -> bool:
    """Does `call`, a module-level function of the file handed the model put in eval mode
    (`receiver`) or reading it as a global, run it through a method of what it holds
    (`greedy_decode(model, src, ...)` whose body runs `model.encode(src, mask)`: `runs_method(c,
    parameter)` decides), with the caller's grad mode: no grad switch, no gradient computation, no
    rebinding of the parameter in its body (`_body_runs`)?"""
    if type(call.func) is not cst.Name:
        return False
    handed = _handed_parameter(call, receiver, ctx)
    if handed is None:
        return False
    definition, parameter = handed
    return _body_runs(definition, lambda c: runs_method(c, parameter), parameter, ctx)


def _handed_parameter(call: cst.Call, receiver: str, ctx: "Context") -> Optional[tuple[cst.FunctionDef, str]]:
    """The module-level function `call` calls and the name its body knows `receiver` by: the
    parameter the call hands it to (never bound again in the body), or the global itself where the
    call does not hand it and the function binds no such name."""
    func = call.func
    if values.own_definition(func, ctx) != "function":
        return None
    definition = top_function(ctx, func.value)  # type: ignore[attr-defined]
    if definition is None:
        return None
    params = definition.params.params
    parameter = None
    for position, argument in enumerate(call.args):
        if argument.star or _code(ctx, argument.value) != receiver:
            continue
        if argument.keyword is not None:
            parameter = argument.keyword.value
        elif position < len(params):
            parameter = params[position].name.value
        break
    if parameter is None:
        # `get_sample_image()` reading the module's `G` (a plain name the helper binds nowhere)
        if not receiver.isidentifier() or binds(definition, receiver):
            return None
        parameter = receiver
    elif binds_in_body(definition, parameter):
        return None
    return definition, parameter


def _replicates_and_applies(definition: cst.FunctionDef, parameter: str, ctx: "Context") -> Optional[cst.Call]:
    """The `torch.nn.parallel.replicate(parameter, ...)` call of a helper that also calls
    `torch.nn.parallel.parallel_apply`: the body of torch's own `data_parallel`, written out
    (wavenet_vocoder's `data_parallel_workaround(model, inputs)`) runs the module it replicates."""
    replicated, applied = None, False
    for node in code_descendants(definition.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is not cst.Call or type(node.func) not in (cst.Name, cst.Attribute):  # type: ignore[attr-defined]
            continue
        final = node.func.attr.value if type(node.func) is cst.Attribute else node.func.value  # type: ignore[attr-defined]
        if final not in ("replicate", "parallel_apply"):  # (cheap first: the name)
            continue
        qualified = ctx.resolve(node.func)  # type: ignore[attr-defined]
        if qualified in REPLICA_APPLYING_FUNCTIONS:
            applied = True
        elif qualified in REPLICATING_FUNCTIONS and node.args and _code(ctx, node.args[0].value) == parameter:  # type: ignore[attr-defined]
            replicated = node
    return replicated if applied else None


def _body_runs(
    definition: cst.FunctionDef, runs: Callable[[cst.Call], bool], name: str, ctx: "Context", call: Optional[cst.Call] = None
) -> bool:
    """Does the helper's body (not its nested scopes) make a call that `runs` accepts, with no grad
    switch of its own, no gradient computation, and no rebinding of `name` (the model's name)?
    For a method called as `call`, the branches of `if flag:` / `if not flag:` that its literal
    arguments rule out do not run (`self._run_one_epoch(epoch, cross_valid=True)` skips the
    `if not cross_valid:` block that backpropagates: Speech-Transformer's solver)."""
    if definition.decorators or definition.asynchronous is not None:
        return False
    dead = _ruled_out_branches(definition, call) if call is not None else set()
    if dead and defined_in_other_class(definition.name.value, ctx):
        dead = set()  # (a subclass's override, which `self` may run, need not have those branches)
    found = False
    for node in _live(definition.body, dead, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        kind = type(node)
        if kind is cst.Name and node.value in _GRAD_SWITCHES:  # type: ignore[attr-defined]
            return False
        if kind is cst.Attribute and node.attr.value in _GRAD_SWITCHES:  # type: ignore[attr-defined]
            return False
        if kind is cst.AssignTarget and _code(ctx, node.target) == name:  # type: ignore[attr-defined]
            return False
        if kind is cst.Call and not found:
            found = runs(node)  # type: ignore[arg-type]
    if not dead:
        return found and not computes_gradients(definition, ctx)
    return found and not any(computes_gradients(node, ctx) for node in _live(definition.body, dead, ()) if type(node) is cst.Call)


def _live(block: cst.CSTNode, dead: set[int], skip: tuple) -> list[cst.CSTNode]:
    """The nodes under `block`, less those under a node of `dead` (ids) or of a kind in `skip`."""
    found: list[cst.CSTNode] = []
    stack = list(reversed(code_children(block)))
    while stack:
        node = stack.pop()
        if id(node) in dead or isinstance(node, skip):
            continue
        found.append(node)
        stack.extend(reversed(code_children(node)))
    return found


def _ruled_out_branches(method: cst.FunctionDef, call: cst.Call) -> set[int]:
    """Ids of the blocks of `if` statements of the method that cannot run for the call's literal
    arguments (or the parameters' literal defaults), where the body never rebinds the parameter:
    `if not cross_valid:` for `cross_valid=True`, `if phase == 'train':` for `'val'`, the `else`
    of `if mode in ("val", "test"):` for `"val"` (literal_tests.outcome_of_test)."""
    # (positional-only parameters come first; a static method called through self has no self)
    params = [*method.params.posonly_params, *method.params.params]
    if not _static(method):
        params = params[1:]
    if any(argument.star for argument in call.args):
        return set()
    given: dict[str, cst.BaseExpression] = {}
    for position, argument in enumerate(call.args):
        if argument.keyword is not None:
            given[argument.keyword.value] = argument.value
        elif position < len(params):
            given[params[position].name.value] = argument.value
    known: dict[str, tuple[str, object]] = {}
    for param in params:
        value = given.get(param.name.value, param.default)
        literal = literal_key(value) if value is not None else None
        if literal is not None and not binds_in_body(method, param.name.value):
            known[param.name.value] = literal
    dead: set[int] = set()
    if not known:
        return dead
    for node in code_descendants(method.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is not cst.If:
            continue
        holds = outcome_of_test(node.test, known)  # type: ignore[attr-defined]
        if holds is True:  # the `else` (or `elif`) cannot run
            if node.orelse is not None:  # type: ignore[attr-defined]
                dead.add(id(node.orelse))  # type: ignore[attr-defined]
        elif holds is False:
            dead.add(id(node.body))  # type: ignore[attr-defined]
    return dead


def defined_in_other_class(method: str, ctx: "Context") -> bool:
    """Does a class of the file other than the enclosing one define `method` (an override of a
    subclass, or a sibling's: silence when unsure which one `self` runs)?"""
    frame = next((f for f in reversed(ctx.frames) if f.kind == "class"), None)
    owners = ctx.memo("delegation.method-owners", lambda: _method_owners(ctx.module))
    return any(owner is not (frame.node if frame else None) for owner in owners.get(method, ()))  # type: ignore[union-attr]


def _method_owners(module: cst.Module) -> dict[str, list[cst.ClassDef]]:
    """Method name -> the classes of the file (at any depth) that define it."""
    owners: dict[str, list[cst.ClassDef]] = {}
    for node in code_descendants(module):
        if type(node) is cst.ClassDef and isinstance(node.body, cst.IndentedBlock):
            for statement in node.body.body:
                if type(statement) is cst.FunctionDef:
                    owners.setdefault(statement.name.value, []).append(node)
    return owners


def _static(method: cst.FunctionDef) -> bool:
    return any(type(d.decorator) is cst.Name and d.decorator.value == "staticmethod" for d in method.decorators)


def _runs_self_model(call: cst.Call, ctx: "Context") -> bool:
    """`self.model(x)` / `self.net.encoder(x)`: a call of an attribute of self that is a module; in
    a method of an nn.Module, `self.set_forward(x)`, a method of self fed data whose name says it
    runs the module (`naming.method_runs_module`: CloserLookFewShot's `MetaTemplate.correct`)."""
    func = call.func
    if type(func) is not cst.Attribute:
        return False
    if _is_self(func.value) and ctx.in_module_class and _runs_self_by_method(call, ctx):
        return True
    holder = func
    if not _is_self(func.value):
        # `self.net.encoder(x)`, `self.net.forward(x)`: a submodule or the forward pass, not a
        # method such as `self.D.load_state_dict(...)`
        if type(func.value) is not cst.Attribute or not (func.attr.value == "forward" or named_like_model(func.attr.value)):
            return False
        holder = func.value
    if not _is_self(holder.value) or ctx.resolve(func) is not None:  # type: ignore[attr-defined]
        return False
    value = values.evaluate(holder, ctx)
    if value.kind is values.Kind.MODULE:
        return not value.is_loss
    return value.kind is values.Kind.UNKNOWN and named_like_model(holder.attr.value)


def _runs_self_by_method(call: cst.Call, ctx: "Context") -> bool:
    """`self.set_forward(x)` in an nn.Module: a method (not a submodule the class assigns) whose name
    says it runs the module, fed data."""
    func = call.func
    name = func.attr.value  # type: ignore[attr-defined]
    if not method_runs_module(name, ctx.project.model_methods) or ctx.resolve(func) is not None:
        return False
    if values.evaluate(func, ctx).kind is not values.Kind.UNKNOWN:
        return False  # (`self.fc_score(x)` with `self.fc_score = nn.Linear(...)`: a layer, asked elsewhere)
    return any(type(a.value) in _DATA for a in call.args if a.keyword is None and not a.star)


def own_method(ctx: "Context", name: str) -> Optional[cst.FunctionDef]:
    """The method `name` of the class whose method the traversal is in (defined once, undecorated)."""
    return _own_method(ctx, name)


def _own_method(ctx: "Context", name: str) -> Optional[cst.FunctionDef]:
    """The method `name` of the class whose method the traversal is in (defined once, undecorated)."""
    frame = next((f for f in reversed(ctx.frames) if f.kind == "class"), None)
    if frame is None or not isinstance(frame.node, cst.ClassDef):
        return None
    methods = ctx.memo((_CLASS_METHODS, id(frame.node)), lambda: _methods(frame.node))  # type: ignore[union-attr]
    method = methods.get(name)  # type: ignore[union-attr]
    return None if method is None or method.decorators else method


def _methods(node: cst.ClassDef) -> dict[str, Optional[cst.FunctionDef]]:
    """The class's methods by name (None for a name defined more than once)."""
    return _defined_once(node.body.body if isinstance(node.body, cst.IndentedBlock) else ())


def _top_functions(module: cst.Module) -> dict[str, Optional[cst.FunctionDef]]:
    """Module-level functions by name (None for a name defined more than once)."""
    return _defined_once(module.body)


def _defined_once(statements) -> dict[str, Optional[cst.FunctionDef]]:
    found: dict[str, Optional[cst.FunctionDef]] = {}
    for statement in statements:
        if type(statement) is cst.FunctionDef:
            name = statement.name.value  # type: ignore[attr-defined]
            found[name] = None if name in found else statement  # type: ignore[assignment]
    return found


def _is_self(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "self"


def _code(ctx: "Context", node: cst.CSTNode) -> str:
    return "".join(ctx.module.code_for_node(node).split())


def computes_gradients(node: cst.CSTNode, ctx: "Context") -> bool:
    """Backward, `torch.autograd.grad`, `torch.func.*` inside `node`, or a run of a model whose
    `forward` computes gradients itself (the semantic model's `runs_gradient_forward`, from the
    project pass: a test-time-adapting learner of another file)."""
    for inner in code_descendants(node):
        if type(inner) is not cst.Call:
            continue
        if ctx.model.runs_gradient_forward(inner):
            return True
        func = inner.func
        if isinstance(func, cst.Attribute) and func.attr.value in tables.BACKWARD_METHODS:
            return True
        qualified = ctx.resolve(func)
        if qualified is not None and (qualified in tables.AUTOGRAD_FUNCTIONS or qualified.startswith(_GRADIENT_FUNCTIONS)):
            return True
    return False


def binds(node: cst.CSTNode, name: str, module_level: bool = False) -> bool:
    """Does `node` (a function, or with `module_level` a statement of the module) bind `name`, erring
    towards bound (`bindings.bound_by`, read with `erring_names`: a helper that may rebind the model is
    no evidence): a parameter, an assignment or loop target, `with ... as`, an import, a `global` /
    `nonlocal` declaration, a definition?  In a function, nested functions count too (silence when
    unsure), not the function's own name, nor what classes and lambdas in it bind."""
    if module_level:
        nodes = own_scope(node)
    else:
        nodes = code_descendants(node, skip=(cst.ClassDef, cst.Lambda))
        if type(node) not in (cst.FunctionDef, cst.ClassDef):
            nodes = (node, *nodes)
    return any(name in erring_names(target) for inner in nodes for target in bound_by(inner, parameters=True, declarations=True))


def modules_handed_to_backpropagated_call(assign: cst.Assign, ctx: "Context") -> Optional[tuple[bool, list[str]]]:
    """A value the model's evidence says is backpropagated (`loss.backward()` later), computed by a
    call it is the result of (`loss = loss_registry[kind](model, x, t)`): the modules handed to that
    call run in it, whatever the callee is (a loss helper of another file, reached through a dict:
    ddim's `Diffusion.train`, TRADES' `trades_loss(model=model, ...)`).  (True, []) where an
    argument is valued a module; (False, names) for the held names of the arguments, which the
    asker may learn are modules later (`model.train()` further down); None where the assignment is
    no such call.  Only `=` assignments: the model's history evidence is kept for them alone (an
    `x += f(model)` or an annotated binding rebinds what came before, model.py)."""
    if type(assign.value) is not cst.Call or not ctx.model.history_at(assign):
        return None
    handed = [arg.value for arg in assign.value.args if not arg.star]
    if any(ctx.value_of(value).kind is values.Kind.MODULE for value in handed):
        return True, []
    return False, [name for name in map(held_name, handed) if name is not None and name != "self"]
