"""Fresh values: tensors nothing else holds and whose producer keeps nothing of them for backward,
so that an activation may overwrite them in place (ML003's `F.relu(self.bn(x))`).

A value is fresh when it is the output of a layer of the class whose output nobody else sees
(analysis/class_layers.py; also one of a ModuleList of them, `self.layers[i](x)`, or the loop
variable over one), of `+`, `-`, `*`, `/`, `@` (their backward reads only their operands), or of a
torch function that keeps nothing of its result (`torch.cat`, `F.gelu`, `torch.mm`:
analysis/saved.py).  A call's input is fresh where it is such a value directly, or a name bound to
one that nothing reads after the call: bound on the line before (also through an in-place sum, or in
every branch of an `if` just before), or further back where the call's statement ends the name's
life (analysis/reaching.py).  A module's own code (a script's training loop, outside its functions
and classes) is a function of its own here: its names are globals that any function of the file
may read, so every mention in the file counts against them, and a temporary (`nn.ReLU()(1.0 -
y_pred)`) is fresh there as anywhere.  Each answer comes with how a message names it ("the fresh output of
`self.conv`")."""

from __future__ import annotations

from typing import Iterator, Optional, Union

import libcst as cst

from memlint.analysis.class_layers import class_layers
from memlint.analysis.constants import fold
from memlint.analysis.exits import leaves_first
from memlint.analysis.module_lists import element_list, indexed_element
from memlint.analysis.producers import bound_value, producers_before
from memlint.analysis.project_facts import makes_unsaved_tensor
from memlint.analysis.reaching import reaching_binding
from memlint.analysis.saved import makes_fresh_tensor
from memlint.analysis.tables import FRESH_RESULT_METHODS, RESHAPE_METHODS
from memlint.analysis.walk import code_descendants, code_with_parents, self_attr

# Ops whose output is a new tensor that their backward never reads (it reads only the operands):
# an activation may overwrite it (`/` and `@` checked with PyTorch 2.13's saved tensors, also
# `1 / x`).  Not `**`: pow's backward for a tensor exponent reads its result.
_KEEP_NOTHING_OF_OUTPUT = frozenset({cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.MatrixMultiply})
_KEEP_NOTHING_IN_PLACE = frozenset({cst.AddAssign, cst.SubtractAssign})
_RESULT_NAMES = {
    cst.Add: "a fresh sum", cst.Subtract: "a fresh difference", cst.Multiply: "a fresh product",
    cst.Divide: "a fresh quotient", cst.MatrixMultiply: "a fresh matrix product",
}  # fmt: skip
# How many stages back `_binds_fresh` follows a chain of `name = self.<stage>(name)` lines.
_STAGE_CHAIN = 8
# Names never looked up as loop variables (the cheap test before a walk of the function).
_CALLABLE_BUILTINS = frozenset({"zip", "len", "range", "list", "tuple", "dict", "enumerate", "getattr", "isinstance"})


class FreshValues:
    """The fresh values of one function, asked while the traversal leaves it; or of a module's own
    code (`function` the module), asked while it leaves the module."""

    def __init__(self, ctx, function: Union[cst.FunctionDef, cst.Module]) -> None:
        self.ctx = ctx
        self.function = function
        self.layers = class_layers(ctx)  # (one per class: its answers do not depend on the method)
        # where the names of that code may be read: the function's body, or the whole module
        self.code: cst.CSTNode = function if type(function) is cst.Module else function.body
        self._leaving: dict[tuple[int, str], Optional[int]] = {}  # see _left_first

    def fresh(self, expr: cst.BaseExpression) -> bool:
        """A value nothing else holds and whose producer keeps nothing of it for backward."""
        if type(expr) is cst.BinaryOperation:
            return type(expr.operator) in _KEEP_NOTHING_OF_OUTPUT  # type: ignore[attr-defined]
        if type(expr) is cst.Subscript:  # `self.actnorm(x)[0]`: a fresh element of a layer's tuple
            taken = _taken_element(expr)
            return taken is not None and taken[1] in self.layers.fresh_output_elements().get(taken[0], ())
        if type(expr) is not cst.Call:
            return False
        func = expr.func  # type: ignore[attr-defined]
        if _reshaped_temporary(func) is not None:  # `self.linear(x).view(n, c)`: a view of a fresh value no name holds
            return self.fresh(func.value)  # type: ignore[attr-defined]
        if type(func) is cst.Subscript:  # `self.layers[i](x)`, `self.convs["squeeze"](x)`
            element = indexed_element(func)
            if element is not None and element in self.layers.layer_lists():
                return True
            return element is not None and element.depth == 1 and element.attribute in self.layers.layer_dicts()
        if type(func) is cst.Name and func.value not in _CALLABLE_BUILTINS and type(self.function) is cst.FunctionDef:  # `for l in self.convs: x = l(x)`, `bn = self.bns[i]`
            element = element_list(self.function, func.value, expr)  # type: ignore[attr-defined]
            if element is not None:
                return element in self.layers.layer_lists()
        if type(func) is cst.Attribute and func.attr.value in FRESH_RESULT_METHODS and self_attr(func.value) is not None:
            return self_attr(func.value) in self.layers.tensor_attributes()  # `self.weight.mm(x)`, a Parameter's
        attribute = self_attr(func)
        if attribute is not None:
            return attribute in self.layers.fresh_output_layers()
        # (a helper of the project returning `F.batch_norm(...)`: the project pass's `unsaved`)
        return makes_fresh_tensor(expr, self.ctx) or makes_unsaved_tensor(expr, self.ctx) is not None  # type: ignore[arg-type]

    def fresh_input(
        self, call: cst.Call, statement, earlier: list, target: Optional[str], is_direct: bool, source: Optional[cst.BaseExpression] = None
    ) -> Optional[str]:
        """`_fresh_input`, its description saying where the activation acts on a reshape of the value.
        `source`: the value the activation runs on where it is not the call's first argument (the
        receiver of a Tensor method, `h.relu()`: analysis/activations.py)."""
        found = self._fresh_input(call, statement, earlier, target, is_direct, source)
        if found is None:
            return None
        value = source if source is not None else call.args[0].value
        if _reshaped_name(value) is None or self.fresh(value):
            return found
        return f"{found}, reshaped by `.{value.func.attr.value}`"  # type: ignore[union-attr]

    def _left_first(self, statement: cst.If, name: str) -> Optional[int]:
        """Where the `if` leaves the function first (analysis/exits.py), how often it mentions
        `name` (reads on another path); None where it does not."""
        key = (id(statement), name)
        if key not in self._leaving:
            self._leaving[key] = _occurrences(statement, name) if leaves_first(statement, name) else None
        return self._leaving[key]

    def _fresh_input(
        self, call: cst.Call, statement, earlier: list, target: Optional[str], is_direct: bool, source: Optional[cst.BaseExpression] = None
    ) -> Optional[str]:
        """What makes the call's first argument a fresh value that nothing reads after it (its
        description for the message), or None: a temporary (`F.relu(self.bn(x))`, `F.relu(a + b)`),
        or a name bound to one on the line before (`x = self.conv(x)`, then `x = F.relu(x)`), also
        through an in-place sum on it (`out = self.bn2(...)`, `out += self.shortcut(x)`), that is not
        used again.  `earlier`: the statements of the block before `statement`; `target`: the name
        the statement binds the call's result to, where the call is its whole value (`is_direct`)."""
        if source is None:
            if not call.args or call.args[0].keyword or call.args[0].star:
                return None
            source = call.args[0].value
        if self.fresh(source):  # a temporary, also nested in another call
            return self.described(source)
        reshaped = _reshaped_name(source)
        if reshaped is not None:  # `F.relu(x.view(n, -1))`: the view's base is the name's value, rebound here or dead after
            source = reshaped
        if not isinstance(source, cst.Name) or _runs_repeatedly(statement, call):
            return None
        name = source.value  # (not the statement's own value: `target` is None, the name must occur twice)
        function = self.function
        # An `if` whose branch returns first (`if fake_relu: return FakeReLU.apply(out)`) is not on
        # the activation's path: its test only (analysis/exits.py); its mentions of the name are not
        # this path's reads.
        # Only an `if` can leave first, and each is judged once per name in the function (not once
        # per activation after it: a long forward of `if c: return`, `y = F.relu(h)` stays linear).
        passed = 0
        if any(type(s) is cst.If for s in earlier):
            left = [self._left_first(s, name) if type(s) is cst.If else None for s in earlier]
            if any(count is not None for count in left):
                passed = sum(count for count in left if count is not None)
                earlier = [s for s, count in zip(earlier, left) if count is None]

        def mentions() -> int:  # (a walk of the function: asked only where needed)
            return _occurrences(self.code, name) - passed

        previous = earlier[-1] if earlier else None
        producer = self._binds_fresh(earlier, len(earlier) - 1, name)
        if producer is not None:
            if target == name or mentions() == 2:
                return self.described(producer)
            # Rebound along the way (`d1 = self.up(x)`, `d1 = torch.cat([d1, skip], 1)`, then
            # `d2 = self.up2(F.relu(d1))`): fresh where this read is the name's last one.
            if _last_read(function, statement, name):
                return self.described(producer)
            # Bound elsewhere too (`x = self.conv(x)`, `x = self.bn(x)`, `return self.relu(x)`): fresh
            # where the activation's statement ends the name's life (else it is used again later).
            return self._reaching_fresh(statement, name, target, is_direct)
        if len(earlier) >= 2 and _adds_in_place(previous, name):
            producer = self._binds_fresh(earlier, len(earlier) - 2, name)  # `out = ...; out += y; F.relu(out)`
            if producer is None or (target != name and mentions() != 3 and not _last_read(function, statement, name)):
                return None
            return self.described(producer) + ", changed in place by `+=`"
        # Bound in each branch of an `if`/`else` just before (`h = self.embedding_pos_enc(p)` or
        # `h = self.embedding_h(h)`): fresh where every value it may hold is.
        # Also after a loop whose turns end binding it (`skip = 0`, then `for ...: skip = s + skip`):
        # a number on the path of no turn holds no tensor to overwrite (the call raises either way).
        joined = producers_before(earlier, len(earlier), name)
        if joined is None:
            return self._reaching_fresh(statement, name, target, is_direct)
        tensors = [value for value in joined.values if fold(value) is None]  # (a number, `0` or `-1.0`, holds no tensor)
        if not tensors or not all(self.fresh(value) for value in tensors):
            return None
        if target != name and mentions() != 1 + sum(_occurrences(s, name) for s in joined.statements):
            return None
        return " or ".join(dict.fromkeys(self.described(value) for value in tensors))

    def _reaching_fresh(self, statement, name: str, target: Optional[str], is_direct: bool) -> Optional[str]:
        """A name bound to a fresh value further back, with only reads that keep nothing of it in
        between (analysis/reaching.py: `h = h.div(s)`, `assert not torch.isnan(h).any()`, then
        `if self.concat: return F.elu(h)`), where the activation's statement ends the name's life:
        a `return` of the call, or `name = F.elu(name)`."""
        if not is_direct or not isinstance(statement, cst.SimpleStatementLine):
            return None
        ends = type(statement.body[0]) is cst.Return or target == name
        if not ends:
            return None
        reaching = reaching_binding(self.function, statement, name, self.ctx)
        if reaching is None or not self.fresh(reaching.value):
            return None
        return self.described(reaching.value)

    def described(self, value: cst.BaseExpression) -> str:
        """How a message names a fresh value (`described`), a call of a bare name being the loop
        variable over a ModuleList's layers where it is one, else a function of the project."""
        func = value.func if type(value) is cst.Call else None  # type: ignore[attr-defined]
        reshaped = _reshaped_temporary(func) if func is not None else None
        if reshaped is not None:
            return _reshaped_by(self.described(func.value), reshaped)  # type: ignore[union-attr]
        if type(func) is cst.Name and type(self.function) is cst.FunctionDef and func.value not in _CALLABLE_BUILTINS:  # type: ignore[attr-defined]
            element = element_list(self.function, func.value, value)  # type: ignore[attr-defined]
            if element is not None:
                held = "list" if element.attribute in self.layers.plain_lists else "ModuleList"
                return f"the fresh output of `{func.value}`, a layer of a {held}"  # type: ignore[attr-defined]
        return described(value)

    def _binds_fresh(self, earlier: list, index: int, name: str, depth: int = 0) -> Optional[cst.BaseExpression]:
        """The fresh value `earlier[index]` binds `name` to (`name = self.conv(x)`), or None.  Also
        `name = self.layer3(name)`, a stage of blocks that each return a fresh output
        (`ClassLayers.stage_layers`), where the line before binds `name` to a fresh value: the
        stage returns its last block's output, or, with no block, that value itself, which no other
        name holds (the chain followed back a few lines: `h = self.c_in(x)`, `h = self.layer1(h)`,
        ..., `h = self.layer3(h)`)."""
        if index < 0:
            return None
        value = bound_value(earlier[index], name)
        if value is None:
            return None
        if self.fresh(value):
            return value
        if depth < _STAGE_CHAIN and self._stage_of(value, name) and self._binds_fresh(earlier, index - 1, name, depth + 1) is not None:
            return value
        return None

    def _stage_of(self, value: cst.BaseExpression, name: str) -> bool:
        """`self.<stage>(name)`: a stage layer of the class called on `name` alone."""
        if type(value) is not cst.Call or len(value.args) != 1:  # type: ignore[attr-defined]
            return False
        arg = value.args[0]  # type: ignore[attr-defined]
        if arg.star or arg.keyword is not None or type(arg.value) is not cst.Name or arg.value.value != name:
            return False
        attribute = self_attr(value.func)  # type: ignore[attr-defined]
        return attribute is not None and attribute in self.layers.stage_layers()


def calls_run_by(small: cst.BaseSmallStatement) -> Iterator[cst.Call]:
    """The calls of a statement that run when it runs (not those in the body of a lambda)."""
    for node in [small, *code_descendants(small, skip=(cst.Lambda,))]:
        if type(node) is cst.Call:
            yield node


def _taken_element(expr: cst.Subscript) -> Optional[tuple[str, int]]:
    """`self.<attribute>(...)[n]`, a literal index n >= 0 -> (attribute, n); else None."""
    if len(expr.slice) != 1 or type(expr.slice[0].slice) is not cst.Index or type(expr.value) is not cst.Call:
        return None
    index = expr.slice[0].slice.value  # type: ignore[attr-defined]
    attribute = self_attr(expr.value.func)  # type: ignore[attr-defined]
    if type(index) is not cst.Integer or attribute is None:
        return None
    return attribute, int(index.value, 0)  # type: ignore[attr-defined]


def described(value: cst.BaseExpression) -> str:
    """How a message names a fresh value: "the fresh output of `self.conv`", "a fresh sum"."""
    if type(value) is cst.BinaryOperation:
        return _RESULT_NAMES[type(value.operator)]  # type: ignore[attr-defined]
    if type(value) is cst.Subscript:  # fresh() accepted it: `self.actnorm(x)[0]`
        taken = _taken_element(value)  # type: ignore[arg-type]
        return f"element {taken[1]} of the fresh output of `self.{taken[0]}`" if taken else "a fresh element"
    func = value.func  # type: ignore[attr-defined]
    reshaped = _reshaped_temporary(func)
    if reshaped is not None:  # fresh() accepted it: its receiver is fresh
        return _reshaped_by(described(func.value), reshaped)  # type: ignore[attr-defined]
    if self_attr(func) is None and type(func) not in (cst.Subscript, cst.Name):  # `torch.cat(...)`, `F.gelu(...)`, `utils.batch_norm(...)`
        return f"the fresh result of `{cst.Module([]).code_for_node(func)}`"
    if type(func) is cst.Subscript:
        element = indexed_element(func)  # fresh() accepted it: never None here
        return f"the fresh output of a layer of `self.{element.attribute if element else '?'}`"
    if type(func) is cst.Name:  # a function of the project (FreshValues.described tells a ModuleList's layer)
        return f"the fresh result of `{func.value}`"  # type: ignore[attr-defined]
    return f"the fresh output of `self.{self_attr(func)}`"


def _reshaped_by(inner: str, method: str) -> str:
    """A message's name of a reshaped value, a chain of one method said once (`.view(-1).view(n, c)`)."""
    said = f", reshaped by `.{method}`"
    return inner if inner.endswith(said) else inner + said


# Receivers whose value no name holds: a reshape of one is fresh where it is.
_TEMPORARIES = (cst.Call, cst.BinaryOperation, cst.Subscript)


def _reshaped_temporary(func: cst.BaseExpression) -> Optional[str]:
    """The method of `<temporary>.view` / `.reshape` / `.flatten` (the `func` of a call), or None.
    An activation in place on the view overwrites the temporary's tensor (or, where the reshape
    copies, the copy's): nothing else holds it, and the view keeps nothing for backward (checked
    with PyTorch 2.13: `F.silu(F.linear(x, w).view(n, -1), inplace=True)` gives the gradients of the
    out-of-place one).  Not `.expand`, whose elements share memory (in place raises)."""
    if type(func) is not cst.Attribute or func.attr.value not in RESHAPE_METHODS:  # type: ignore[attr-defined]
        return None
    return func.attr.value if type(func.value) in _TEMPORARIES else None  # type: ignore[attr-defined]


def _reshaped_name(source: cst.BaseExpression) -> Optional[cst.Name]:
    """`x` of `x.view(n, -1)` / `x.reshape(...)` / `x.flatten(1)`: an activation in place on the
    view overwrites `x`'s tensor (a reshape may copy it: then nothing else), which is fresh where
    `x` is; the view's arguments must not mention `x` (`_occurrences` counts each mention)."""
    if type(source) is not cst.Call:
        return None
    func = source.func  # type: ignore[attr-defined]
    if type(func) is not cst.Attribute or func.attr.value not in RESHAPE_METHODS or type(func.value) is not cst.Name:
        return None
    if any(_occurrences(arg, func.value.value) for arg in source.args):  # type: ignore[attr-defined]
        return None
    return func.value  # type: ignore[return-value]


# Code inside a statement that may run many times (or later) for one run of it: a comprehension's
# element runs once per item, a lambda's body once per call, a `while` test once per turn.
_REPEATED = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Lambda)


def _runs_repeatedly(statement, call: cst.Call) -> bool:
    """Does `call` sit in a part of `statement` that may run more than once per run of it
    (`[head(h.relu()) for head in self.heads]`, a lambda, a `while` test)?  A name bound outside
    that part is then read again by each later run: an activation in place on it overwrites the
    value the next run reads, and the tensor the first run's backward needs."""
    if type(statement) is cst.While:
        return True
    for node, parents in code_with_parents(statement):
        if node is call:
            return any(type(parent) in _REPEATED for parent in parents)
    return False


def _adds_in_place(statement, name: str) -> bool:
    """`name += y` / `name -= y`: the value stays the one bound before, changed in place by an op
    whose backward reads nothing of it."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    return (
        isinstance(small, cst.AugAssign)
        and isinstance(small.target, cst.Name)
        and small.target.value == name
        and type(small.operator) in _KEEP_NOTHING_IN_PLACE
    )


def _last_read(function: Union[cst.FunctionDef, cst.Module], statement, name: str) -> bool:
    """Is `statement`, a line of the function's own body (no loop around it runs it again), its
    only mention of `name` and the name's last one: no later line, no nested function or lambda
    (which may run later), no `global`/`nonlocal` (others may read it) mentions it?  For a module,
    a line of its own statements, and no function or class of the file mentions it."""
    if type(function) is cst.Module:
        body, code = function.body, function
    else:
        body = function.body.body if type(function.body) is cst.IndentedBlock else ()  # type: ignore[attr-defined]
        code = function.body
    index = next((i for i, line in enumerate(body) if line is statement), None)
    if index is None or _occurrences(statement, name) != 1:
        return False
    if any(_occurrences(line, name) for line in body[index + 1 :]):
        return False
    for node in code_descendants(code):
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Global, cst.Nonlocal) and _occurrences(node, name):
            return False
    return True


def _occurrences(node: cst.CSTNode, name: str) -> int:
    return sum(1 for n in code_descendants(node) if type(n) is cst.Name and n.value == name)
