"""Could an expression carry autograd history, by the rules of `memlint.analysis.values`?

An over-approximation on CPython's AST: it answers False only where the analysis certainly gives
no history: literals and displays, graph-free methods (`.item()`, `.detach()`), calls of the
file's own classes and functions or of names imported from outside torch, `torch.nn` layer
constructors, and names or `self` attributes every assignment of which is such a value.  History
starts at model calls, `self(...)`, functional losses and torch operations on such values; any
call not ruled out above counts as a possible start.
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from memlint.analysis import call_rules, evidence, tables
from memlint.analysis.naming import dotted, named_like_model
from memlint.prescreen.source import Source, root_name, subtree

# Never history: literals, displays, comparisons, lambdas, comprehensions (values.evaluate).
NO_HISTORY = (ast.Constant, ast.JoinedStr, ast.Tuple, ast.List, ast.Dict, ast.Set, ast.Compare, ast.BoolOp,
              ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)  # fmt: skip
_BUILTIN_RESULTS = frozenset({"list", "dict", "set", "float", "int", "bool", "round", "len", "str", "repr", "format"})

# `match` patterns that bind names (Python 3.10+; an older interpreter's AST has none).
_MATCH_CAPTURES = (ast.MatchAs, ast.MatchStar) if hasattr(ast, "MatchAs") else ()
_MATCH_MAPPINGS = (ast.MatchMapping,) if hasattr(ast, "MatchMapping") else ()


class History:
    def __init__(self, source: Source) -> None:
        self.values: dict[str, list[ast.AST]] = {}  # name, or ".attr" for self.attr -> assigned values
        self.imports: dict[str, list[Optional[str]]] = {}  # name -> qualified paths (None: relative)
        self.definitions: set[str] = set()  # names of the file's functions and classes
        # Parameters the analysis may value as a module: `self`, annotated ones, methods' first.
        self.module_params: set[str] = {"self"}
        # Names bound in other ways than by an assignment, a loop target, a plain parameter, an
        # import or a definition (`del`, `except ... as`, `global`, match captures): not followed.
        self.other_bindings: set[str] = set()
        # Names some function takes as a parameter or some loop binds: in that scope they are not
        # the file's definition or import of that name (`def net(X): ...` and, in another function,
        # `def evaluate(data, net): net(X)`, whose `net` is whatever the caller passes).
        self.shadowing: set[str] = {node.arg for node in source.nodes(ast.arg)}  # type: ignore[attr-defined]
        targets_seen: set[int] = set()
        for node in source.nodes(ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            for target in targets:
                targets_seen.update(id(n) for n in subtree(target))  # (only names are looked up in it)
                if node.value is not None:  # `x: int` binds nothing  # type: ignore[attr-defined]
                    for key, value in _pairs_bound_by(target, node.value):  # type: ignore[attr-defined]
                        self.values.setdefault(key, []).append(value)
        for item in source.nodes(ast.withitem):
            if item.optional_vars is not None:  # type: ignore[attr-defined]
                targets_seen.update(id(n) for n in subtree(item.optional_vars))  # type: ignore[attr-defined]
                for key in _keys_bound_by(item.optional_vars):  # type: ignore[attr-defined]
                    self.values.setdefault(key, []).append(item.context_expr)  # type: ignore[attr-defined]
        for loop in source.nodes(ast.For, ast.AsyncFor, ast.comprehension):
            for node in subtree(loop.target):  # type: ignore[attr-defined]  # valued "unknown"
                targets_seen.add(id(node))
                if isinstance(node, ast.Name):
                    self.shadowing.add(node.id)
        for node in source.nodes(ast.Name):
            if not isinstance(node.ctx, ast.Load) and id(node) not in targets_seen:  # type: ignore[attr-defined]
                self.other_bindings.add(node.id)  # type: ignore[attr-defined]
        for node in source.nodes(ast.ExceptHandler, *_MATCH_CAPTURES):
            if node.name:  # type: ignore[attr-defined]
                self.other_bindings.add(node.name)  # type: ignore[attr-defined]
        for node in source.nodes(*_MATCH_MAPPINGS):
            if node.rest:  # type: ignore[attr-defined]
                self.other_bindings.add(node.rest)  # type: ignore[attr-defined]
        for node in source.nodes(ast.Global, ast.Nonlocal):
            self.other_bindings.update(node.names)  # type: ignore[attr-defined]
        for node in source.nodes(ast.arg):
            if node.annotation is not None:  # type: ignore[attr-defined]
                self.module_params.add(node.arg)  # type: ignore[attr-defined]
        for node in source.nodes(ast.ClassDef):
            for method in node.body:  # type: ignore[attr-defined]
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    first = [*method.args.posonlyargs, *method.args.args][:1]
                    self.module_params.update(a.arg for a in first)
        for node in source.nodes(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            self.definitions.add(node.name)  # type: ignore[attr-defined]
        for node in source.nodes(ast.Import):
            for alias in node.names:  # type: ignore[attr-defined]
                local = alias.asname or alias.name.partition(".")[0]
                self.imports.setdefault(local, []).append(alias.name if alias.asname else local)
        for node in source.nodes(ast.ImportFrom):
            for alias in node.names:  # type: ignore[attr-defined]
                qualified = None if node.level else f"{node.module}.{alias.name}"  # type: ignore[attr-defined]
                self.imports.setdefault(alias.asname or alias.name, []).append(qualified)
        self.functional_losses = source.names_for(tables.FUNCTIONAL_LOSSES)
        # The project pass's callees that return history, as written here (memlint/pipeline/project.py).
        project = source.project
        self.project_calls: frozenset[str] = project.history_calls if project is not None else frozenset()
        self.project_methods = frozenset(m.rpartition(".")[2] for m in project.history_methods) if project is not None else frozenset()
        # The project's callees, as written here, whose result carries an argument's history
        # (FileView.history_through): loosened to any argument.
        self.through_calls = frozenset(t.rpartition(":")[0] for t in project.history_through) if project is not None else frozenset()
        # Names backward is called on anywhere in the file, and the other names of a tuple assignment
        # from a call that binds one (memlint/analysis/model.py gives those bindings history).
        self.backpropagated = _backpropagated(source) if source.mentions("backward", "autograd") else frozenset()
        # Names (and "self.<attr>"s) the model finds hold a model: a module's method and a call.
        self.module_evidence = evidence.file_module_names(source)
        self._settled: dict[str, bool] = {}  # name or ".attr" -> may it carry history
        self._open: set[str] = set()  # the keys being settled now, and those of them found to carry
        self._carrying: set[str] = set()

    def possible(self, expr: ast.AST) -> bool:
        if isinstance(expr, NO_HISTORY):
            return False
        if isinstance(expr, ast.UnaryOp):
            return not isinstance(expr.op, ast.Not) and self.possible(expr.operand)
        if isinstance(expr, ast.BinOp):
            return self.possible(expr.left) or self.possible(expr.right)
        if isinstance(expr, ast.IfExp):
            return self.possible(expr.body) or self.possible(expr.orelse)
        if isinstance(expr, ast.Subscript):
            return self.possible(expr.value)
        if isinstance(expr, ast.Name):
            return self._assigned_value_possible(expr.id)
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == "self":
                return self._assigned_value_possible("." + expr.attr)
            return not self._only_imported(root_name(expr)) and self.possible(expr.value)
        if isinstance(expr, ast.Call):
            return self._call_possible(expr)
        return True  # await, yield, starred, ...: not followed

    def _assigned_value_possible(self, key: str) -> bool:
        if key in self.backpropagated:
            return True
        if key in self._settled:
            return self._settled[key]
        if key in self._open:
            return key in self._carrying
        self._settle(key)
        return self._settled[key]

    def _settle(self, key: str, rounds: int = 12) -> None:
        """Decide `key` and every key its assigned values read, transitively: the least set of them
        that may carry history, given that set (history needs a source, so a name that only ever
        receives its own value, `x = f(x)`, does not start it), grown from nothing until it no
        longer changes."""
        pending, self._open = [key], set()
        while pending:
            current = pending.pop()
            if current not in self._open and current not in self._settled:
                self._open.add(current)
                pending.extend(k for value in self.values.get(current, ()) for k in _keys_read_by(value))
        self._carrying = set()
        for _ in range(rounds):
            grown = {k for k in self._open - self._carrying if any(self.possible(v) for v in self.values.get(k, ()))}
            if not grown:
                break
            self._carrying |= grown
        else:
            self._carrying = set(self._open)  # not settled: all of them may (a loosening)
        self._settled.update((k, k in self._carrying) for k in self._open)
        self._open, self._carrying = set(), set()

    def _call_possible(self, call: ast.Call) -> bool:
        func = call.func
        if self.through_calls and dotted(func) in self.through_calls and self._arguments_possible(call):
            return True  # `l2_norm(emb)`: a project function returning its argument's history
        if isinstance(func, ast.Name):
            return self._name_call_possible(func.id, call)
        if isinstance(func, ast.Attribute):
            return self._method_call_possible(func, call)
        return True

    def _name_call_possible(self, name: str, call: ast.Call) -> bool:
        if name in self.functional_losses or call_rules.named_like_model_or_loss(name):
            return True
        if name in self.project_calls or name in self.module_evidence:
            return True  # a project function that returns a model's output, or a model by evidence
        if name in self.values or name in self.other_bindings or name in self.module_params:
            return True  # may be bound to a module
        if self._only_imported(name):
            if all(path is None or not path.startswith("torch") for path in self.imports[name]):
                return False  # imported from outside torch (or relatively): not followed, no history
            return self._torch_call_possible(call)
        if name in self.imports:
            return True  # imported and also defined here
        # The file's own class or function (not named like a loss), a builtin, a plain parameter
        # or a loop variable: the analysis sees no model in it.
        return False

    def _method_call_possible(self, func: ast.Attribute, call: ast.Call) -> bool:
        root = root_name(func)
        if self.project_calls or self.project_methods:
            if root == "self" and isinstance(func.value, ast.Name) and func.attr in self.project_methods:
                return True  # `self.step(x)` where the project says that method returns history
            if dotted(func) in self.project_calls:
                return True  # `utils.compute_loss(...)`, likewise
        if self._only_imported(root):
            paths = [self._qualified(path, func) for path in self.imports[root]]  # type: ignore[index]
            if all(path is not None and not path.startswith("torch") for path in paths):
                return False  # a function of a module from outside torch
            if all(path is not None and call_rules.torch_call(path) == call_rules.MODULE for path in paths):
                return False  # `nn.Linear(...)`: a module, not a tensor
            return func.attr in self.functional_losses or self._torch_call_possible(call)
        if dotted(func) in self.module_evidence:
            return True  # `self.G(z)` with `self.G.eval()` somewhere: a model by evidence
        if self._may_resolve(root):
            return True  # through an alias of an import: torch decides
        method = func.attr
        if method in tables.GRAPH_FREE_METHODS:
            return False  # `.item()`, `.detach()`, `.size()` on a value
        if method == "forward" or call_rules.named_like_model_or_loss(method):
            return True  # `model.forward(x)`, `trainer.model(x)`, `self.criterion(out, y)`
        if isinstance(func.value, ast.Name) and func.value.id == "self" and "." + method in self.values:
            return True  # `self.fc(x)` with `self.fc = ...` assigned: may be a module
        return self.possible(func.value)  # a tensor method keeps its receiver's history

    def _may_resolve(self, root: Optional[str]) -> bool:
        """Could `root.<...>` name something through an import (so that torch decides the result)?"""
        if root is None:
            return False
        return root in self.imports or any(isinstance(v, (ast.Name, ast.Attribute)) for v in self.values.get(root, ()))

    def may_run_model(self, call: ast.Call) -> bool:
        """Could `evaluation.is_model_call` hold for `call`?"""
        func = call.func
        if dotted(func) in self.module_evidence:
            return True  # `G(z)`, `self.G(z)` with `G.eval()` somewhere: a model by evidence
        if isinstance(func, ast.Subscript):
            # `self.networks["G"](z)` with `self.networks[key].parameters()` somewhere: an entry of a
            # container of models by evidence (evidence.entries_key); no other subscript runs one
            held = dotted(func.value)
            return held is not None and evidence.entries_key(held) in self.module_evidence
        if isinstance(func, ast.Name):
            name = func.id
            if name in evidence.MODULE_RUNNING_FUNCTIONS and call.args:
                return True  # `data_parallel(netG, inputs, gpus)` imported from torch.nn.parallel
            # A name the file also assigns (`encode = pair.gen_a.encode`, beside a method `encode`) may
            # be that value where it is called: only a name bound by nothing but definitions resolves to them.
            defined_only = name in self.definitions and name not in self.imports and name not in self.values and name not in self.other_bindings
            resolved = self._only_imported(name) or defined_only
            if resolved and name not in self.shadowing:
                return False  # resolves to an import, or a class / function of this file
            return named_like_model(name) or name in self.values or name in self.other_bindings or name in self.module_params
        if not isinstance(func, ast.Attribute):
            return False
        if func.attr == "forward" or named_like_model(func.attr):
            return True
        if func.attr in evidence.MODULE_RUNNING_FUNCTIONS and call.args:
            return True  # `nn.parallel.data_parallel(netG, inputs, gpus)` runs `netG` (model_wrappers)
        root = root_name(func)
        if self._only_imported(root) and root not in self.shadowing and all(path is not None for path in self.imports[root]):  # type: ignore[index]
            return False  # resolves to something imported
        # `self.head(x)`, and `model._encoder(x)` where a class of the file assigns `self._encoder`
        # (evaluation._runs_model asks inventory.held_layer: the instance's class holds a layer there)
        return isinstance(func.value, ast.Name) and "." + func.attr in self.values

    def _torch_call_possible(self, call: ast.Call) -> bool:
        """A torch function: history only from a loss or from its arguments."""
        name = call.func.id if isinstance(call.func, ast.Name) else call.func.attr  # type: ignore[attr-defined]
        if name in self.functional_losses:
            return True
        return self._arguments_possible(call)

    def _arguments_possible(self, call: ast.Call) -> bool:
        return any(self.possible(a) for a in call.args) or any(self.possible(k.value) for k in call.keywords)

    def names_model_or_loss(self, name: str) -> bool:
        """Is `name` taken for a model or a loss by its name, by evidence, as a functional loss, or
        as a project callee that returns history?"""
        return (
            name in self.functional_losses or call_rules.named_like_model_or_loss(name)
            or name in self.module_evidence or name in self.project_calls or name in self.through_calls
        )  # fmt: skip

    def only_imported(self, name: Optional[str]) -> bool:
        """Is `name` bound only by imports (a module or a function from elsewhere, never a model of the file)?"""
        return self._only_imported(name)

    def _only_imported(self, name: Optional[str]) -> bool:
        return name is not None and name in self.imports and name not in self.other_bindings and name not in self.values and name not in self.definitions

    @staticmethod
    def _qualified(path: Optional[str], func: ast.Attribute) -> Optional[str]:
        if path is None:
            return None
        parts = []
        node: ast.AST = func
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        return ".".join([path, *reversed(parts)])


def _backpropagated(source: Source) -> frozenset[str]:
    """The names the semantic model may find backpropagated, and their tuple siblings
    (evidence.backpropagated_names, loosened: flow-insensitive, every name of the operand)."""
    return evidence.backpropagated_names(source.nodes(ast.Call), source.nodes(ast.Assign), loose=True)


def _keys_read_by(expr: ast.AST) -> Iterator[str]:
    """The names and `self` attributes (".attr") `History.possible(expr)` may look up."""
    for node in subtree(expr):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            yield "." + node.attr


def _pairs_bound_by(target: ast.AST, value: ast.AST) -> list[tuple[str, ast.AST]]:
    """(key, value it receives): `a, b = x, y` binds `a` to `x` and `b` to `y` (as the analysis's
    Context does); any other shape binds every key of the target to the whole value."""
    if (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, (ast.Tuple, ast.List))
        and len(target.elts) == len(value.elts)
        and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))
    ):
        return [pair for t, v in zip(target.elts, value.elts) for pair in _pairs_bound_by(t, v)]
    return [(key, value) for key in _keys_bound_by(target)]


def _keys_bound_by(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return ["." + target.attr]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [key for element in target.elts for key in _keys_bound_by(element)]
    if isinstance(target, ast.Starred):
        return _keys_bound_by(target.value)
    return []
