"""The shared analysis state, updated as the engine's single traversal walks a file.

Rules read it (`ctx.resolve(node)`, `ctx.grad_mode`, `ctx.in_loop`, `ctx.holds_graph(expr)`) but never
change it.  The engine calls `on_visit` before the rules see a node and `on_leave` after them, so a
rule looking at an assignment sees the names as they were before that assignment ran.
"""

from __future__ import annotations

import builtins
import re

import enum
from dataclasses import dataclass, field
from typing import Callable, Optional, Union

import libcst as cst

from memlint.analysis import picked_functions, returned_elements, tables, values
from memlint.analysis.bindings import declared_global_values, target_names
from memlint.analysis.call_edits import dotted
from memlint.analysis.constants import literal_bool
from memlint.analysis.model import SemanticModel
from memlint.analysis.values import Value
from memlint.analysis.walk import nested_blocks
from memlint.pipeline.project import EMPTY_VIEW, FileView, key_string
from memlint.pipeline.tree import code_children, index_code_nodes

FunctionKey = tuple  # ("func", name) or ("method", class_name, name)
# A `global` statement somewhere in the text (the cheap test before a walk for them; not the word in
# a comment or `global_step`).
_GLOBAL_STATEMENT = re.compile(r"(?:^|;)[ \t]*global[ \t]+\w", re.MULTILINE)
Loop = Union[cst.For, cst.While]


class GradMode(enum.Enum):
    ENABLED = "enabled"
    DISABLED = "disabled"
    UNKNOWN = "unknown"  # e.g. torch.set_grad_enabled(is_training)

    @property
    def records_graph(self) -> Optional[bool]:
        return {GradMode.ENABLED: True, GradMode.DISABLED: False}.get(self)


@dataclass
class Binding:
    value: Value
    qualified: Optional[str] = None  # what an import or an alias of one refers to: "torch.nn"
    # Where it was bound by assigning another name (`amp_cm = torch.cuda.amp.autocast`), not by an
    # import (then empty), the expressions it was assigned from (that `torch.cuda.amp.autocast`;
    # every `global` binding's value): the name `qualified` is written there, and a use of this one
    # only repeats it.  A rule that reports the name where it is written asks whether it reported
    # these before it treats a use of the alias as already reported.
    written_at: tuple[cst.BaseExpression, ...] = ()


# The bindings of torch's conventional names in a file that star-imports them from elsewhere, when
# the project pass cannot tell what its star imports bring (tables.STAR_IMPORT_CONVENTION): used
# without a binding of their own, they are taken to be torch's (Context._lookup).
_FROM_STAR = {name: Binding(values.OTHER, qualified=qualified) for name, qualified in tables.STAR_IMPORT_CONVENTION.items()}


@dataclass
class Frame:
    """One scope: the module, a class body or a function body."""

    kind: str  # "module" | "class" | "function"
    node: cst.CSTNode
    key: Optional[FunctionKey] = None
    class_name: Optional[str] = None  # the class a method belongs to, or the class of a class body
    names: dict[str, Binding] = field(default_factory=dict)
    params: set[str] = field(default_factory=set)
    grad: list[GradMode] = field(default_factory=lambda: [GradMode.ENABLED])
    # Parallel to `grad`: does that mode come from the callers (no decorator, hook, `with` or
    # `set_grad_enabled` statement of this frame set it)? Only then do the callers' no_grad reach it.
    grad_inherited: list[bool] = field(default_factory=lambda: [True])
    loops: list[Loop] = field(default_factory=list)
    # Conditions entered inside this frame, with the loop depth at which each was entered.
    conditions: list[tuple[cst.CSTNode, int]] = field(default_factory=list)
    handlers: list[cst.ExceptHandler] = field(default_factory=list)
    # For each name, the loop it was last (re)bound in, or None when bound outside any loop.
    bound_in_loop: dict[str, Optional[Loop]] = field(default_factory=dict)
    # For each name, its value when it was last bound by `=` (augmented assignments do not count).
    initial_values: dict[str, Value] = field(default_factory=dict)
    # Names bound to a pick out of a literal of functions (`fn = [f, g][i]`: False) or to the literal
    # itself (`fns = [f, g]`: True), with the literal's names (picked_functions.py).
    picks: dict[str, tuple[tuple[cst.Name, ...], bool]] = field(default_factory=dict)


@dataclass(frozen=True)
class CallSite:
    """A call of a function defined in this file, and the context it was called from."""

    callee: FunctionKey
    callers: tuple[FunctionKey, ...]  # enclosing functions, outermost first
    grad: GradMode
    in_loop: bool
    # Inside the innermost loop, behind an `if` (periodic or opt-in) or in an exception handler.
    conditional: bool
    loop: Optional[Loop] = None  # the innermost loop around the call, when there is one
    # The function defined inside another one that a bare-name call reaches by the scopes, as bound
    # when the call is seen (`def mix` in `train`, then `mix(x)` in `train`'s loop); None for any
    # other call (a parameter, a lambda or an import of that name; a module-level function).
    nested: Optional[cst.FunctionDef] = field(default=None, compare=False)
    # The call itself (a direct call seen by the traversal; None for a pick out of a literal): a
    # rule that found the calls choosing a helper's evaluation branch asks their grad mode here.
    node: Optional[cst.Call] = field(default=None, compare=False)


@dataclass
class FileFacts:
    """What is known once the whole file has been seen (for conditions that look ahead)."""

    defined: set[FunctionKey]
    call_sites: dict[FunctionKey, list[CallSite]]
    no_grad_functions: set[FunctionKey]
    loop_called_functions: set[FunctionKey]
    # Calls that may reach a function picked out of a literal of functions (`[f, g][i](x)`,
    # picked_functions.py): only "every call runs without gradients" counts them.
    picked_sites: dict[FunctionKey, list[CallSite]] = field(default_factory=dict)
    # Keys of functions defined only inside other functions (`def mix` in `train`), and the ids of
    # those definitions whose name their function binds again (`mix = ...` after it): a call of
    # such a key reaches it only where `CallSite.nested` says so (`reaches`).
    nested_only: frozenset = frozenset()
    rebound_nested: frozenset = frozenset()

    def reaches(self, site: CallSite) -> bool:
        """Does the call reach the function its key names?  For a function defined inside another,
        only a call that sees its definition by the scopes does (not a namesake parameter, lambda
        or import in another function, nor a star import's)."""
        if site.callee not in self.nested_only:
            return True
        return site.nested is not None and id(site.nested) not in self.rebound_nested


class Context:
    def __init__(self, module: cst.Module, project: Optional[FileView] = None, text: Optional[str] = None) -> None:
        self.module = module
        self.text = text  # the text `module` was parsed from (libcst prints it back unchanged); None where not given
        index_code_nodes(module)  # the analysis searches parts of the file many times: slices of one pre-order list
        # The facts that need the whole file first (model.py): found once, asked by rules and here.
        # What the project pass (memlint/pipeline/project.py) knows about this file's functions, classes and
        # callees from the other files linted with it (and from this file's own summary).
        self.project = project if project is not None else EMPTY_VIEW
        # The facts that need the whole file first (model.py): found once, asked by rules and here.
        switches, factories = self.project.gradient_switch_map()
        self.model = SemanticModel(
            module, text, project_meters=self.project.meter_classes, gradient_classes=self.project.gradient_classes,
            gradient_switches=switches, gradient_factories=factories,
            model_runner_calls=frozenset(written for written, work in self.project.update_calls if "model" in work.split(",")),
        )
        self.frames: list[Frame] = [Frame("module", module)]
        self.module_classes: dict[str, cst.ClassDef] = {}  # nn.Module subclasses defined in the file
        self.class_attributes: dict[str, dict[str, Value]] = {}  # class -> self.<attr> -> value
        self.no_grad_decorators: set[str] = set()
        # class -> methods its framework base class runs under no_grad (HF pipelines' `_forward`)
        self.framework_no_grad_methods: dict[str, frozenset[str]] = {}
        self.defined_functions: set[FunctionKey] = set()
        # id(binding) -> (binding, def) for each function defined inside another (`CallSite.nested`);
        # the keys so defined, the keys defined elsewhere, and the defs whose name is bound again.
        self._nested_defs: dict[int, tuple[Binding, cst.FunctionDef]] = {}
        self._nested_keys: set[FunctionKey] = set()
        self._outer_keys: set[FunctionKey] = set()
        self._rebound_nested: set[int] = set()
        # id(orelse) -> its loop, for a `for`/`while` with an `else:`, which runs once, after the loop
        self._loop_elses: dict[int, Loop] = {}
        self.call_sites: dict[FunctionKey, list[CallSite]] = {}
        # Calls of a function picked out of a literal (`infer_fn = [infer_basic, infer_mirror][level]`,
        # then `infer_fn(x)`): each name of the literal may be the one called (picked_functions.py).
        self.picked_sites: dict[FunctionKey, list[CallSite]] = {}
        self._picks_bound = False  # has any frame bound a name to such a pick (most files: none)
        # Each name bound to a pick or a literal of functions: (its frame, the name, whether it holds
        # the literal, the functions it may reach); and the calls through such a name: (its frame, the
        # name, the sites), kept only where the scope's evidence holds (`_settle_picks`, at the end).
        self._pick_bindings: list[tuple[Frame, str, bool, tuple[FunctionKey, ...]]] = []
        self._named_picks: list[tuple[Frame, str, list[CallSite]]] = []
        # Functions a name without that evidence may reach: no proof that every call is without grad.
        self.picks_blocked: set[FunctionKey] = set()
        self._import_fallbacks = import_fallbacks(module)
        self._ambiguous = _module_names_bound_twice(module, self._import_fallbacks)
        # `from utils import *` where utils imports torch: `torch` is then used without an import of
        # its own (`@torch.no_grad()`); an unbound `torch` in such a file is taken to be torch.
        self._star_import = any(
            isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar)
            for statement in module.body if isinstance(statement, cst.SimpleStatementLine)
            for small in statement.body
        )  # fmt: skip
        # What the star imports bring, where the project pass followed every one of them to the
        # project's files (their torch imports, FileView.star_torch), else the convention.
        self._from_star = _FROM_STAR if self.project.star_torch is None else {
            name: Binding(values.OTHER, qualified=qualified) for name, qualified in self.project.star_torch
        }
        # A marimo notebook's globals: what the cell that defines each name binds it to (an import,
        # a class, a function; notebooks.py), for the cells that take it as a parameter and for the
        # module-level view of names (`module_binding`).  The same Binding objects in both places.
        notebook = self.model.notebook
        self._notebook_globals: dict[str, Binding] = {} if notebook is None else {
            name: Binding(values.OTHER if export.kind == "import" else values.FUNCTION, qualified=export.qualified)
            for name, export in notebook.exports.items()
        }
        self._facts: Optional[FileFacts] = None
        self._memo: dict[object, object] = {}
        self._may_declare_globals = text is None or _GLOBAL_STATEMENT.search(text) is not None
        # Module-level imports seen so far: an analysis that resolves names at module level
        # (the inventory of nn.Module classes) is rebuilt once more are seen, so that what it says
        # does not depend on which rule asked first (a notebook imports `torch.nn` after its first cells).
        self.module_imports = 0
        # id(expr) -> (expr, what resolve(expr) answered), and (id(node), question) -> (node, answer)
        # for `remember`: every rule resolves the callee of every call.  Only this object's handlers
        # change what names mean, so each of them empties both (but `_visit_call`, which binds nothing).
        self._resolved: dict[int, tuple[cst.CSTNode, Optional[str]]] = {}
        self._answers: dict[tuple[int, str], tuple[cst.CSTNode, object]] = {}
        visit_handlers: dict[type, Callable[[cst.CSTNode], None]] = {
            cst.FunctionDef: self._visit_function,
            cst.ClassDef: self._visit_class,
            cst.For: self._visit_for,
            cst.While: self._visit_loop,
            cst.With: self._visit_with,
            cst.If: self._visit_if,
            cst.ExceptHandler: self._visit_handler,
            cst.Else: self._visit_else,
            cst.Call: self._visit_call,
            cst.Expr: self._visit_expression_statement,
        }
        leave_handlers: dict[type, Callable[[cst.CSTNode], None]] = {
            cst.FunctionDef: self._leave_frame,
            cst.ClassDef: self._leave_frame,
            cst.For: self._leave_loop,
            cst.While: self._leave_loop,
            cst.With: self._leave_with,
            cst.If: self._leave_if,
            cst.ExceptHandler: self._leave_handler,
            cst.Else: self._leave_else,
            cst.Import: self._leave_import,
            cst.ImportFrom: self._leave_import_from,
            cst.Assign: self._leave_assign,
            cst.AnnAssign: self._leave_ann_assign,
            cst.AugAssign: self._leave_aug_assign,
        }
        self.visit_handlers = {cls: self._forgetting_names(h) for cls, h in visit_handlers.items()}
        self.visit_handlers[cst.Call] = self._visit_call  # it only records the call site
        self.leave_handlers = {cls: self._forgetting_names(h) for cls, h in leave_handlers.items()}

    def _forgetting_names(self, handler: Callable[[cst.CSTNode], None]) -> Callable[[cst.CSTNode], None]:
        """`handler`, emptying the caches before (what rules cached) and after (what the handler
        cached before it rebound a name)."""
        resolved, answers = self._resolved, self._answers

        def run(node: cst.CSTNode) -> None:
            resolved.clear()
            answers.clear()
            handler(node)
            resolved.clear()
            answers.clear()

        return run

    def remember(self, question: str, node: cst.CSTNode, answer: Callable[[], object]) -> object:
        """`answer()`, computed once for all the rules that ask `question` about `node` while the
        names in scope stay as they are (until the next handler of this object that binds a name,
        enters or leaves a scope, a loop, a condition or a `with`).  For questions whose answer
        depends on nothing else than the node and those names."""
        key = (id(node), question)
        known = self._answers.get(key)
        if known is not None and known[0] is node:  # the cache holds node, so its id is not reused
            return known[1]
        result = answer()
        self._answers[key] = (node, result)
        return result

    # ------------------------------------------------------------------ queries for rules

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    @property
    def grad_mode(self) -> GradMode:
        return self.frame.grad[-1]

    @property
    def grad_inherited(self) -> bool:
        """Does the current code run in the grad mode its callers set: no enclosing function (up to
        the module) sets one by a decorator, a `with torch.enable_grad():` or a
        `torch.set_grad_enabled(True)` statement. Only then does a caller's `no_grad` reach it."""
        return all(f.grad_inherited[-1] for f in self.frames if f.kind == "function")

    @property
    def loops(self) -> list[Loop]:
        return self.frame.loops

    @property
    def in_loop(self) -> bool:
        return bool(self.frame.loops)

    @property
    def loop(self) -> Optional[Loop]:
        return self.frame.loops[-1] if self.frame.loops else None

    @property
    def conditional_in_loop(self) -> bool:
        """Inside the innermost loop, is the current code behind an `if` or in an exception handler?"""
        depth = len(self.frame.loops)
        return any(d == depth for _, d in self.frame.conditions) or bool(self.frame.handlers)

    @property
    def function_key(self) -> Optional[FunctionKey]:
        return self.frame.key

    @property
    def function_chain(self) -> tuple[FunctionKey, ...]:
        return tuple(f.key for f in self.frames if f.key is not None)

    @property
    def function_node(self) -> Optional[cst.FunctionDef]:
        node = self.frame.node
        return node if isinstance(node, cst.FunctionDef) else None

    @property
    def class_name(self) -> Optional[str]:
        return self.frame.class_name

    @property
    def in_module_class(self) -> bool:
        return self.frame.class_name in self.module_classes

    def resolve(self, expr: cst.CSTNode) -> Optional[str]:
        """Qualified name an expression refers to through imports: `nn.ReLU` -> "torch.nn.ReLU"."""
        known = self._resolved.get(id(expr))
        if known is not None and known[0] is expr:  # the cache holds expr, so its id is not reused
            return known[1]
        kind = type(expr)  # libcst's concrete node classes have no subclasses
        if kind is cst.Name:
            binding = self._lookup(expr.value)
            result = binding.qualified if binding else None
        elif kind is cst.Attribute:
            base = self.resolve(expr.value)
            result = f"{base}.{expr.attr.value}" if base else None
        else:
            return None
        self._resolved[id(expr)] = (expr, result)
        return result

    def alias_written_at(self, expr: cst.CSTNode) -> tuple[cst.BaseExpression, ...]:
        """Where the name `expr` was assigned what `resolve` gives for it (`torch.cuda.amp.autocast`
        of `amp_cm = torch.cuda.amp.autocast`, for `with amp_cm():`): the expressions of that
        assignment (of each `global` one), or () for anything `names_assigned_alias` says no to."""
        if not self.names_assigned_alias(expr):
            return ()
        return self._lookup(expr.value).written_at  # type: ignore[attr-defined,union-attr]

    def names_assigned_alias(self, expr: cst.CSTNode) -> bool:
        """Is `expr` a name that an assignment bound to another name (`amp_cm = torch.cuda.amp.autocast`,
        then `with amp_cm():` or `train(amp_cm)`)?  What `resolve` gives for it is then written at
        that assignment, not here: a rule that reports where a name is written reports the
        assignment once, not every use of the alias.  False for imports, parameters and names
        bound to anything else."""
        if type(expr) is not cst.Name:
            return False
        binding = self._lookup(expr.value)  # type: ignore[attr-defined]
        return binding is not None and bool(binding.written_at) and binding.qualified is not None

    def value_of(self, expr: cst.BaseExpression) -> Value:
        return values.evaluate(expr, self)

    def holds_graph(self, expr: cst.BaseExpression) -> Optional[bool]:
        """True: carries autograd history; False: certainly not; None: cannot tell."""
        return values.evaluate(expr, self).graph

    def lookup_value(self, name: str) -> Value:
        binding = self._lookup(name)
        return binding.value if binding else values.UNKNOWN

    def initial_value(self, name: str) -> Value:
        """The value `name` had when last bound by `=`: what an accumulator was started with."""
        current = self.frames[-1]
        if name in current.names:
            return current.initial_values.get(name, values.UNKNOWN)
        for frame in reversed(self.frames[:-1]):
            if frame.kind != "class" and name in frame.names:
                return frame.initial_values.get(name, values.UNKNOWN)
        return values.UNKNOWN

    def lookup_self_attribute(self, attr: str) -> Value:
        class_name = self.frame.class_name
        if class_name is None:
            return values.UNKNOWN
        return self.class_attributes.get(class_name, {}).get(attr, values.UNKNOWN)

    def is_builtin(self, name: str) -> bool:
        return self._lookup(name) is None and name not in self._ambiguous

    def is_param(self, name: str) -> bool:
        return name in self.frame.params and name in self.frame.names

    def bound_in_current_loop(self, name: str) -> bool:
        """Was `name` last bound inside the innermost loop (so it is reset on every iteration)?"""
        loop = self.loop
        return loop is not None and self.frame.bound_in_loop.get(name, None) is loop

    def memo(self, key: object, build: Callable[[], object]) -> object:
        """A whole-file analysis computed once per file, on first request (`build()`)."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def binds_at_module_level(self, name: str) -> bool:
        """Does `name`, where the traversal is, mean what the module binds (or will have bound by
        the time a function runs) rather than a local name?"""
        binding = self._lookup(name)
        return binding is None or (binding is self.module_binding(name))

    def from_star_import(self, name: str) -> bool:
        """Can `name` only have come through one of the file's star imports (`from .utils import *`):
        the file binds it nowhere at module level and it is not a builtin?  (What it is there, the
        file does not say: a rule may take it as it takes an imported name of unknown origin.)"""
        return (
            self._star_import
            and name not in self._ambiguous
            and self.frames[0].names.get(name) is None
            and not hasattr(builtins, name)
        )

    def module_binding(self, name: str) -> Optional[Binding]:
        """What `name` is bound to at module level (imports seen so far), ignoring inner scopes."""
        if name in self._ambiguous:
            return None
        binding = self.frames[0].names.get(name)
        if binding is None and self._notebook_globals:
            binding = self._notebook_globals.get(name)
        if binding is None and self._may_declare_globals:
            binding = self._declared_global(name)  # bound only by functions, through `global`
        if binding is None and self._star_import:
            return self._from_star.get(name)
        return binding

    def facts(self) -> FileFacts:
        """Facts about the whole file; only meaningful once the traversal is over."""
        if self._facts is None:
            if self._picks_bound:
                self._settle_picks()
            self._facts = FileFacts(
                defined=set(self.defined_functions),
                call_sites=self.call_sites,
                no_grad_functions=self._no_grad_functions(),
                loop_called_functions=self._loop_called_functions(),
                picked_sites=self.picked_sites,
                nested_only=frozenset(self._nested_keys - self._outer_keys),
                rebound_nested=frozenset(self._rebound_nested),
            )
        return self._facts

    # ------------------------------------------------------------------ traversal hooks

    def on_visit(self, node: cst.CSTNode) -> None:
        # The engine's Traversal calls visit_handlers/leave_handlers directly (one lookup per node
        # type, not per node): register per-node work in those tables, not here.
        handler = self.visit_handlers.get(type(node))
        if handler is not None:
            handler(node)

    def on_leave(self, node: cst.CSTNode) -> None:
        handler = self.leave_handlers.get(type(node))
        if handler is not None:
            handler(node)

    def _visit_function(self, node: cst.FunctionDef) -> None:
        outer = self.frame
        name = node.name.value
        binding = Binding(values.FUNCTION)
        self._bind(name, binding)
        class_name = outer.class_name if outer.kind == "class" else None
        key: FunctionKey = ("method", class_name, name) if class_name else ("func", name)
        self.defined_functions.add(key)
        if outer.kind == "function":  # reachable only inside its function: `CallSite.nested`
            self._nested_defs[id(binding)] = (binding, node)
            self._nested_keys.add(key)
        else:
            self._outer_keys.add(key)
        frame = Frame("function", node, key=key, class_name=class_name or (outer.class_name if outer.kind == "function" else None))
        base = self._base_grad_mode(node, is_method=class_name is not None)
        frame.grad = [base or GradMode.ENABLED]
        frame.grad_inherited = [base is None]
        if class_name is not None and name in self.framework_no_grad_methods.get(class_name, ()):
            frame.grad = [GradMode.DISABLED]
            frame.grad_inherited = [False]
        params = node.params
        all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
        for extra in (params.star_arg, params.star_kwarg):
            if isinstance(extra, cst.Param):
                all_params.append(extra)
        cell = outer.kind == "module" and self._notebook_globals and self.model.notebook.is_cell(node)  # type: ignore[union-attr]
        for index, param in enumerate(all_params):
            if cell and param.name.value in self._notebook_globals:
                # a marimo cell reads `nn` from the one cell that defines it: not an unknown argument
                frame.names[param.name.value] = self._notebook_globals[param.name.value]
                continue
            value = values.UNKNOWN
            if index == 0 and class_name is not None and class_name in self.module_classes:
                value = values.MODULE  # `self` of an nn.Module: calling it runs the model
            elif param.annotation is not None and self._is_module_type(param.annotation.annotation):
                value = values.MODULE
            frame.names[param.name.value] = Binding(value)
            frame.params.add(param.name.value)
        self.frames.append(frame)

    def _visit_class(self, node: cst.ClassDef) -> None:
        name = node.name.value
        self._bind(name, Binding(values.FUNCTION))
        if name in self.project.module_classes or any(self._is_module_type(base.value) for base in node.bases):
            self.module_classes[name] = node
        for base in node.bases:
            base_name = dotted(base.value).rsplit(".", 1)[-1]
            if base_name in tables.NO_GRAD_FRAMEWORK_METHODS:
                self.framework_no_grad_methods[name] = tables.NO_GRAD_FRAMEWORK_METHODS[base_name]
        self.class_attributes.setdefault(name, {})
        self.frames.append(Frame("class", node, class_name=name))

    def _leave_frame(self, node: cst.CSTNode) -> None:
        self.frames.pop()

    def _visit_for(self, node: cst.For) -> None:
        self._bind_iterated(node.target, values.iterated(node.iter, self))
        self._visit_loop(node)

    def _bind_iterated(self, target: cst.BaseExpression, value: "Union[values.Value, tuple]") -> None:
        """`for out, y in zip(self.outputs, self.targets)`: each element of the target takes what
        `values.iterated` says its position holds; a shape that does not match binds UNKNOWN."""
        if not isinstance(value, tuple):
            self._bind_target(target, value)
            return
        elements = target.elements if type(target) in (cst.Tuple, cst.List) else None  # type: ignore[attr-defined]
        if elements is None or len(elements) != len(value) or any(type(e.value) is cst.StarredElement for e in elements):
            self._bind_target(target, values.UNKNOWN)
            return
        for element, part in zip(elements, value):
            self._bind_iterated(element.value, part)

    def _visit_loop(self, node: Loop) -> None:
        self.frame.loops.append(node)
        if node.orelse is not None:
            self._loop_elses[id(node.orelse)] = node

    def _leave_loop(self, node: Loop) -> None:
        self.frame.loops.pop()

    def _visit_else(self, node: cst.Else) -> None:
        """A loop's `else:` runs once, after the loop: its code is not in that loop."""
        loops = self.frame.loops
        if loops and self._loop_elses.get(id(node)) is loops[-1]:
            loops.pop()

    def _leave_else(self, node: cst.Else) -> None:
        loop = self._loop_elses.get(id(node))
        if loop is not None and loop.orelse is node and not (self.frame.loops and self.frame.loops[-1] is loop):
            self.frame.loops.append(loop)

    def _visit_with(self, node: cst.With) -> None:
        mode = self.grad_mode
        inherited = self.frame.grad_inherited[-1]
        for item in node.items:
            set_here = self._grad_mode_of_context(item.item)
            mode = set_here or mode
            inherited = inherited and set_here is None
            if item.asname is not None:
                self._bind_target(item.asname.name, values.UNKNOWN)
            if mode is GradMode.DISABLED:
                self._note_no_grad_decorator_body(node)
        self.frame.grad.append(mode)
        self.frame.grad_inherited.append(inherited)

    def _leave_with(self, node: cst.With) -> None:
        self.frame.grad.pop()
        self.frame.grad_inherited.pop()

    def _visit_if(self, node: cst.If) -> None:
        self.frame.conditions.append((node, len(self.frame.loops)))

    def _leave_if(self, node: cst.If) -> None:
        self.frame.conditions.pop()

    def _visit_handler(self, node: cst.ExceptHandler) -> None:
        self.frame.handlers.append(node)
        if node.name is not None:
            self._bind_target(node.name.name, values.OTHER)

    def _leave_handler(self, node: cst.ExceptHandler) -> None:
        self.frame.handlers.pop()

    def _visit_call(self, node: cst.Call) -> None:
        func = node.func
        kind = type(func)
        callee: Optional[FunctionKey] = None
        if kind is cst.Name and self.resolve(func) is None:
            callee = ("func", func.value)
        elif (
            kind is cst.Attribute
            and type(func.value) is cst.Name
            and func.value.value == "self"
            and self.frame.class_name is not None
        ):
            callee = ("method", self.frame.class_name, func.attr.value)
        elif kind is cst.Call and self.resolve(func.func) in tables.NO_GRAD_CONTEXTS:
            # `return torch.no_grad()(fn)`: this function makes `fn` run without gradients.
            if any(isinstance(a.value, cst.Name) and a.value.value in self.frame.params for a in node.args):
                self._mark_no_grad_decorator()
        if kind is cst.Subscript or (kind is cst.Name and self._picks_bound):
            self._record_picked(node)
        if callee is None:
            return
        nested = None
        if self._nested_defs and kind is cst.Name:
            binding = self._lookup(func.value)
            found = self._nested_defs.get(id(binding)) if binding is not None else None
            nested = found[1] if found is not None and found[0] is binding else None
        site = CallSite(
            callee=callee,
            callers=self.function_chain,
            grad=self.grad_mode,
            in_loop=self.in_loop,
            conditional=self.conditional_in_loop,
            loop=self.loop,
            nested=nested,
            node=node,
        )
        self.call_sites.setdefault(callee, []).append(site)

    def _record_picked(self, node: cst.Call) -> None:
        """`[f, g][i](x)`, `fn(x)` with `fn = [f, g][i]`, `fns[i](x)` with `fns = [f, g]`: a call
        that may reach each function of the literal (picked_functions.py)."""
        names = picked_functions.direct_pick(node)
        frame = None
        if names is None:
            func = node.func
            held = func.value if type(func) is cst.Subscript else func  # type: ignore[attr-defined]
            if type(held) is not cst.Name:
                return
            frame = next((f for f in reversed(self.frames) if f.kind != "class" and held.value in f.names), None)  # type: ignore[attr-defined]
            pick = frame.picks.get(held.value) if frame is not None else None  # type: ignore[attr-defined]
            if pick is None or pick[1] != (held is not func):
                return
            names = pick[0]
        sites = [
            CallSite(
                callee=("func", name.value),
                callers=self.function_chain,
                grad=self.grad_mode,
                in_loop=self.in_loop,
                conditional=True,  # (the pick may choose another)
                loop=self.loop,
            )
            for name in names
            if self.resolve(name) is None  # (an import: not a function of the file)
        ]
        if frame is not None:
            self._named_picks.append((frame, held.value, sites))  # type: ignore[attr-defined]  # (its evidence: `_settle_picks`)
            return
        for site in sites:
            self.picked_sites.setdefault(site.callee, []).append(site)

    def _settle_picks(self) -> None:
        """Keep the calls through a picked name whose scope proves they are all its calls (one walk
        of each function that binds such names); block the functions every other such name may reach."""
        by_frame: dict[int, tuple[Frame, dict[str, bool]]] = {}
        for frame, name, holds_literal, keys in self._pick_bindings:
            if frame.kind != "function":
                self.picks_blocked.update(keys)  # (a module's name another file may import; a class attribute)
                continue
            by_frame.setdefault(id(frame), (frame, {}))[1][name] = holds_literal
        proven = {
            key: picked_functions.only_called(frame.node, picks) for key, (frame, picks) in by_frame.items()
        }
        for frame, name, holds_literal, keys in self._pick_bindings:
            if frame.kind == "function" and name not in proven[id(frame)]:
                self.picks_blocked.update(keys)
        for frame, name, sites in self._named_picks:
            if name in proven.get(id(frame), ()):
                for site in sites:
                    self.picked_sites.setdefault(site.callee, []).append(site)

    def _visit_expression_statement(self, node: cst.Expr) -> None:
        # `torch.set_grad_enabled(False)` as a statement: the rest of the block runs without grad.
        call = node.value
        if isinstance(call, cst.Call) and self.resolve(call.func) in tables.SET_GRAD_ENABLED:
            self.frame.grad[-1] = _literal_flag(call) or GradMode.UNKNOWN
            self.frame.grad_inherited[-1] = False

    def _leave_import(self, node: cst.Import) -> None:
        if self.frame.kind == "module":
            self.module_imports += 1
        for alias in node.names:
            module_name = dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(alias.asname.name.value, Binding(values.OTHER, qualified=module_name))
            else:
                top = module_name.split(".")[0]
                self._bind(top, Binding(values.OTHER, qualified=top))

    def _leave_import_from(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        if self.frame.kind == "module":
            self.module_imports += 1
        module = dotted(node.module) if node.module is not None else ""
        relative = bool(node.relative)
        for alias in node.names:
            imported = dotted(alias.name)
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else imported
            qualified = None if relative else f"{module}.{imported}"
            self._bind(local, Binding(values.OTHER, qualified=qualified))

    def _leave_assign(self, node: cst.Assign) -> None:
        pick = picked_functions.pick_binding(node)
        if pick is not None:
            self.frame.picks[pick[0]] = (pick[1], pick[2])
            self._picks_bound = True
            keys = tuple(("func", name.value) for name in pick[1] if self.resolve(name) is None)
            self._pick_bindings.append((self.frame, pick[0], pick[2], keys))
        value = values.alias_value(node.value, self)
        alias = self.resolve(node.value)
        decided: set[str] = set()  # names the callee's own `return` decides (no sibling guess for them)
        for target in node.targets:
            if _is_none(node.value) and type(target.target) is cst.Name:
                existing = self.frame.names.get(target.target.value)
                if existing is not None and existing.qualified is not None:
                    continue  # `except ImportError: F = None` keeps the import for the analysis
            if alias is not None and type(target.target) is cst.Name:
                self._bind(target.target.value, Binding(values.OTHER, qualified=alias, written_at=(node.value,)))
                continue
            pairs = element_pairs(target.target, node.value)
            if pairs is not None:  # `running_loss, seen = 0.0, 0`: each name gets its own value
                evaluated = [(element, values.evaluate(v, self)) for element, v in pairs]  # (before any binds: `a, b = b, a`)
                for element, element_value in evaluated:
                    self._bind_target(element, element_value)
                continue
            if value.graph and type(target.target) is cst.Tuple and type(node.value) is cst.Call:
                if self._bind_module_elements(target.target, node.value, value):
                    continue
            if type(target.target) in (cst.Tuple, cst.List) and type(node.value) is cst.Call and self._may_guess_elements(node, value):
                if self._bind_returned_elements(target.target, node.value, value, decided):
                    continue
            if type(target.target) in (cst.Tuple, cst.List) and _is_shape(node.value):
                for element in target.target.elements:  # `B, H, L, D = v.shape`: each a Python int
                    self._bind_target(element.value, values.UNKNOWN if type(element.value) is cst.StarredElement else values.NUMBER)
                continue
            if type(target.target) is cst.Name and _is_shape_element(node.value):
                self._bind_target(target.target, values.NUMBER)  # `N = logits.shape[0]`: a Python int
                continue
            self._bind_target(target.target, value)
        self._give_evidenced_history(node, decided)

    def _bind_module_elements(self, target: cst.Tuple, call: cst.Call, value: Value) -> bool:
        """`action, dist = self.actor(state)` where the file's `Actor.forward` returns
        `dist.sample(), dist`: the sampled action carries no history, the distribution does
        (`SemanticModel.graph_free_elements`).  False where the model cannot tell."""
        free = self.model.graph_free_elements(call, self.module_classes)
        elements = target.elements
        if free is None or len(free) != len(elements) or any(type(e.value) is cst.StarredElement for e in elements):
            return False
        for element, graph_free in zip(elements, free):
            self._bind_target(element.value, values.tensor(False) if graph_free else values.element_of(value))
        return True

    def _may_guess_elements(self, node: cst.Assign, value: Value) -> bool:
        """Would the unpacked results of the call be given history without looking at the callee:
        the call's value has history, or another result of it is backpropagated (the sibling
        guess)?  Only then is the callee's `return` worth reading."""
        if value.graph:
            return True
        return value.graph is None and any(e.kind == "sibling" for e in self.model.history_at(node).values())

    def _bind_returned_elements(self, target: cst.BaseExpression, call: cst.Call, value: Value, decided: set[str]) -> bool:
        """`loss, loss_node = loss_compute(out, y, n)` where the file shows every definition the
        call may run and their `return`s put at some position a value with no history of its own
        (`sloss.data * norm`: returned_elements.py): that element carries history only from the
        arguments handed to the parameters it is built from; none where none of them has any,
        unknown where one is unknown.  Such names are `decided`: the guess that every result of a
        call producing a backpropagated value carries history does not apply to them.  False
        where the file does not show the callee's elements."""
        if sum(1 for f in self.frames if f.kind == "function") > 1:
            return False  # a nested function: an enclosing one may define the callee's name again
        caller = next((f.node for f in reversed(self.frames) if f.kind != "class"), None)
        found = self.model.returned_element_sources(
            call, caller if type(caller) is cst.FunctionDef else None, self.module_classes
        )
        elements = target.elements  # type: ignore[attr-defined]
        if found is None or any(type(e.value) is cst.StarredElement for e in elements):
            return False
        sources, definitions = found
        if len(sources) != len(elements) or all(source is None for source in sources):
            return False
        bound = [  # (every argument read before any name is bound: `x, y = f(x)`)
            (element.value, None if source is None else self._history_from_arguments(call, definitions, source))
            for element, source in zip(elements, sources)
        ]
        for element, handed in bound:
            if handed is None or handed.graph:
                self._bind_target(element, values.element_of(value))
            else:
                self._bind_target(element, handed)
                decided.update(target_names(element))
        return True

    def _history_from_arguments(self, call: cst.Call, definitions: list, parameters: frozenset[str]) -> Value:
        """The history an element built only from `parameters` of the callee takes from what the
        call hands them: none where every argument is known to carry none, history where one
        carries it, else unknown (a default, an argument the valuation cannot tell)."""
        graphs = set()
        for function, skipped in definitions:
            for parameter in parameters:
                argument = returned_elements.handed_argument(call, function, skipped, parameter)
                graphs.add(None if argument is None else values.evaluate(argument, self).graph)
        if True in graphs:
            return values.tensor(True)
        return values.tensor(False) if None not in graphs else values.UNKNOWN

    def _give_evidenced_history(self, node: cst.Assign, decided: set[str]) -> None:
        """Direct evidence beats not knowing: a name the file backpropagates later (`loss.backward()`),
        or another result of the call that produced it, carries history even where its valuation
        cannot tell (a loss function of another file, a call the project pass summarised as returning
        nothing known).  A value known to be something else (a number, a plain object) stays so."""
        found = self.model.history_at(node)
        if not found:
            return
        names = self.frame.names
        for name, evidence in found.items():
            if evidence.kind == "sibling" and name in decided:
                continue  # the callee's `return` shows what this result carries: no guess
            binding = names.get(name)
            if binding is not None and binding.value.graph is None and binding.qualified is None:
                value = values.tensor(True, scalar=evidence.scalar)
                names[name] = Binding(value)
                self.frame.initial_values[name] = value

    def _leave_ann_assign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, values.evaluate(node.value, self))

    def _leave_aug_assign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            name = node.target.value
            old = self.lookup_value(name)
            new = values._combine(old, values.evaluate(node.value, self))
            if self.grad_mode is GradMode.DISABLED:
                if new.graph:
                    new = values.tensor(False, scalar=new.scalar)  # `total += loss` under no_grad: a new tensor without history
            elif new.graph is None:
                # direct evidence beats not knowing: the file backpropagates the sum later
                # (`loss_d = 0.0; loss_d += term; loss_d.backward()`)
                evidence = self.model.history_at(node).get(name)
                if evidence is not None:
                    new = values.tensor(True, scalar=evidence.scalar)
            binding = self.frame.names.get(name)
            self.frame.names[name] = Binding(
                new, binding.qualified if binding else None, binding.written_at if binding else (),
            )

    # ------------------------------------------------------------------ helpers

    def _lookup(self, name: str) -> Optional[Binding]:
        current = self.frames[-1]
        binding = current.names.get(name)
        if binding is not None:
            return binding
        for frame in reversed(self.frames[:-1]):
            if frame.kind == "class":
                continue  # class bodies are not visible from their methods
            binding = frame.names.get(name)
            if binding is not None:
                if frame.kind == "module" and name in self._ambiguous and current.kind != "module":
                    return Binding(values.UNKNOWN)  # rebound later at module level: cannot tell which
                return binding
        if self._may_declare_globals:
            declared = self._declared_global(name)
            if declared is not None:
                return declared
        if self._star_import:
            return self._from_star.get(name)
        return None

    def _declared_global(self, name: str) -> Optional[Binding]:
        """A module name that functions bind through `global` (`global BN; BN = nn.BatchNorm2d` in a
        constructor, `BN(planes)` in another class): where every binding of it in the file
        (bindings.declared_global_values) is an assignment of one and the same imported name, the
        name holds that whenever a read of it succeeds, whichever binding ran.  None where they
        disagree, where one is no plain assignment, or where the name may also be a builtin or come
        from a star import or a notebook cell before any of them runs."""
        found = self.memo("declared-globals", lambda: declared_global_values(self.module))
        bound = found.get(name)  # type: ignore[attr-defined]
        if not bound or None in bound or self._star_import or self._notebook_globals or hasattr(builtins, name):
            return None
        qualified = {self._imported_name(value) for value in bound}
        if len(qualified) != 1 or None in qualified:
            return None
        return Binding(values.OTHER, qualified=qualified.pop(), written_at=tuple(bound))

    def _imported_name(self, expr: cst.BaseExpression) -> Optional[str]:
        """What the module's own imports make of `expr` (`nn.BatchNorm2d` -> "torch.nn.BatchNorm2d"),
        not through another global of `_declared_global` (no chains)."""
        if type(expr) is cst.Attribute:
            base = self._imported_name(expr.value)  # type: ignore[attr-defined]
            return f"{base}.{expr.attr.value}" if base else None  # type: ignore[attr-defined]
        if type(expr) is not cst.Name or expr.value in self._ambiguous:  # type: ignore[attr-defined]
            return None
        binding = self.frames[0].names.get(expr.value)  # type: ignore[attr-defined]
        return binding.qualified if binding is not None else None

    def _bind(self, name: str, binding: Binding) -> None:
        frame = self.frame
        if frame.handlers and frame.kind == "module" and name in self._import_fallbacks and name in frame.names:
            return  # the stand-in for a failed import: the import is what the code runs with
        if self._nested_defs:
            previous = self._nested_defs.get(id(frame.names.get(name)))
            if previous is not None and previous[0] is frame.names.get(name):
                self._rebound_nested.add(id(previous[1]))  # `def mix` then `mix = ...`: a later call may reach either
        self.frame.names[name] = binding
        self.frame.bound_in_loop[name] = self.loop
        self.frame.initial_values[name] = binding.value

    def _bind_target(self, target: cst.BaseExpression, value: Value) -> None:
        kind = type(target)
        if kind is cst.Name:
            self._bind(target.value, Binding(value))
        elif kind is cst.Tuple or kind is cst.List:
            for element in target.elements:
                inner = element.value
                if type(inner) is cst.StarredElement:
                    inner = inner.value
                self._bind_target(inner, values.element_of(value))
        elif kind is cst.StarredElement:
            self._bind_target(target.value, values.UNKNOWN)
        elif (
            kind is cst.Attribute
            and isinstance(target.value, cst.Name)
            and (target.value.value == "self" or self._is_class_parameter(target.value.value))
            and self.frame.class_name is not None
        ):
            self.class_attributes.setdefault(self.frame.class_name, {})[target.attr.value] = value

    def _is_class_parameter(self, name: str) -> bool:
        """`cls` of a `@classmethod` (unittest's `setUpClass(cls)`): `cls.outputs = ...` sets what
        the methods read as `self.outputs`."""
        node = self.frame.node
        if self.frame.kind != "function" or not isinstance(node, cst.FunctionDef) or not node.params.params:
            return False
        if node.params.params[0].name.value != name:
            return False
        return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "classmethod" for d in node.decorators)

    def _is_module_type(self, expr: cst.BaseExpression) -> bool:
        qualified = self.resolve(expr)
        if qualified in tables.MODULE_BASES:
            return True
        if qualified is not None and qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[1][:1].isupper():
            return True
        if isinstance(expr, cst.Name) and expr.value in tables.MODULE_BASE_NAMES and qualified is None:
            binding = self._lookup(expr.value)
            return binding is not None and binding.value is values.OTHER  # a relative import of one
        return isinstance(expr, cst.Name) and expr.value in self.module_classes

    def _base_grad_mode(self, node: cst.FunctionDef, *, is_method: bool) -> Optional[GradMode]:
        """The grad mode a function's decorator or hook name sets; None where it inherits its callers'."""
        name = node.name.value
        if is_method and (name in tables.NO_GRAD_HOOKS or name.startswith(tables.NO_GRAD_HOOK_PREFIXES)):
            return GradMode.DISABLED
        for decorator in node.decorators:
            expr = decorator.decorator
            mode = self._grad_mode_of_context(expr)
            if mode is None and not isinstance(expr, cst.Call):
                qualified = self.resolve(expr)
                if qualified in tables.NO_GRAD_CONTEXTS:
                    mode = GradMode.DISABLED
                elif qualified in tables.ENABLE_GRAD_CONTEXTS:
                    mode = GradMode.ENABLED
            if mode is None:
                target = expr.func if isinstance(expr, cst.Call) else expr
                if isinstance(target, cst.Name) and target.value in self.no_grad_decorators:
                    mode = GradMode.DISABLED
            if mode is not None:
                return mode
        return None

    def _grad_mode_of_context(self, expr: cst.BaseExpression) -> Optional[GradMode]:
        return grad_mode_set_by(expr, self.resolve)

    def resolve_at_module_level(self, expr: cst.CSTNode) -> Optional[str]:
        """`resolve` through the module's bindings only (imports seen so far, a star import's, a
        notebook's globals), for code elsewhere in the file than the traversal: not cached, since
        the node's own scope answers when the traversal reaches it."""
        kind = type(expr)
        if kind is cst.Name:
            binding = self.module_binding(expr.value)  # type: ignore[attr-defined]
            return binding.qualified if binding else None
        if kind is cst.Attribute:
            base = self.resolve_at_module_level(expr.value)  # type: ignore[attr-defined]
            return f"{base}.{expr.attr.value}" if base else None  # type: ignore[attr-defined]
        return None

    def _note_no_grad_decorator_body(self, node: cst.With) -> None:
        """`with torch.no_grad(): return fn(*args)` inside a wrapper makes its outer function a decorator."""
        params = {p for f in self.frames if f.kind == "function" for p in f.params}
        if not params:
            return
        for call in _calls_in(node.body):
            if isinstance(call.func, cst.Name) and call.func.value in params:
                self._mark_no_grad_decorator()
                return

    def _mark_no_grad_decorator(self) -> None:
        outermost = next((f for f in self.frames if f.kind == "function"), None)
        if outermost is not None and outermost.key is not None:
            self.no_grad_decorators.add(outermost.key[-1])

    def _no_grad_functions(self) -> set[FunctionKey]:
        """Functions whose every call runs without gradient tracking: in this file, or in the project
        (the project pass sees the call sites in the other files); a function another file calls
        with gradients on is not one, whatever this file's own calls say."""
        project = self.project
        # (the project pass does not see calls through a pick out of a literal, `[f, g][i](x)`: a
        # function the file so calls with gradients maybe on is decided by this file's sites)
        picked = {key for key, sites in self.picked_sites.items() if any(site.grad is not GradMode.DISABLED for site in sites)}
        picked |= self.picks_blocked  # (a pick without evidence: used as a value, or importable)
        result = {key for key in self.defined_functions if key_string(key) in project.no_grad and key not in picked}
        blocked = {key for key in self.defined_functions if key_string(key) in project.grad_elsewhere} | self.picks_blocked
        changed = True
        while changed:
            changed = False
            for key in self.defined_functions - result - blocked:
                sites = [*self.call_sites.get(key, ()), *self.picked_sites.get(key, ())]
                if sites and all(
                    site.grad is GradMode.DISABLED or any(c in result for c in site.callers) for site in sites
                ):
                    result.add(key)
                    changed = True
        return result

    def _loop_called_functions(self) -> set[FunctionKey]:
        """Functions called on every iteration of a loop (directly or through other such functions)."""
        result: set[FunctionKey] = set()
        changed = True
        while changed:
            changed = False
            for key in self.defined_functions - result:
                for site in self.call_sites.get(key, ()):
                    unconditional_in_loop = site.in_loop and not site.conditional
                    via_loop_helper = bool(site.callers) and site.callers[-1] in result and not site.conditional
                    if unconditional_in_loop or via_loop_helper:
                        result.add(key)
                        changed = True
                        break
        return result


def grad_mode_set_by(expr: cst.BaseExpression, resolve: Callable[[cst.CSTNode], Optional[str]]) -> Optional[GradMode]:
    """The grad mode a context manager (a `with` item, a decorator) sets, by what `resolve` says it
    names: `torch.no_grad()`, `torch.inference_mode()` (`(False)`: on), `torch.enable_grad()`,
    `torch.set_grad_enabled(flag)` (UNKNOWN unless the flag is a literal); a conditional expression
    whose branches set different modes, or one sets none (`torch.enable_grad() if train else
    torch.no_grad()`, `torch.no_grad() if frozen else nullcontext()`), may set either: UNKNOWN.
    None where it sets none (the mode around it goes on)."""
    if type(expr) is cst.IfExp:
        chosen = {grad_mode_set_by(expr.body, resolve), grad_mode_set_by(expr.orelse, resolve)}  # type: ignore[attr-defined]
        return None if chosen == {None} else chosen.pop() if len(chosen) == 1 else GradMode.UNKNOWN
    if not isinstance(expr, cst.Call):
        return None
    qualified = resolve(expr.func)
    if qualified in tables.NO_GRAD_CONTEXTS:
        if qualified.endswith("inference_mode") and expr.args:  # type: ignore[union-attr]
            return GradMode.DISABLED if _literal_flag(expr) is GradMode.ENABLED else (
                GradMode.ENABLED if _literal_flag(expr) is GradMode.DISABLED else GradMode.UNKNOWN
            )
        return GradMode.DISABLED
    if qualified in tables.ENABLE_GRAD_CONTEXTS:
        return GradMode.ENABLED
    if qualified in tables.SET_GRAD_ENABLED:
        return _literal_flag(expr) or GradMode.UNKNOWN
    return None


def _literal_flag(call: cst.Call) -> Optional[GradMode]:
    """`set_grad_enabled(False)` -> DISABLED, `(True)` -> ENABLED, anything else -> None."""
    if not call.args:
        return None
    literal = literal_bool(call.args[0].value)
    return None if literal is None else GradMode.ENABLED if literal else GradMode.DISABLED


def element_pairs(target: cst.BaseExpression, value: cst.BaseExpression):
    """(target element, value element) of `a, b = x, y` (same length, nothing starred), else None.
    `a, b = accelerator.gather_for_metrics((x, y))` pairs the same way (tables.GATHERING_METHODS)."""
    if (
        type(value) is cst.Call and type(value.func) is cst.Attribute  # type: ignore[attr-defined]
        and value.func.attr.value in tables.GATHERING_METHODS and len(value.args) == 1  # type: ignore[attr-defined]
    ):  # fmt: skip
        value = value.args[0].value  # type: ignore[attr-defined]
    if type(target) not in (cst.Tuple, cst.List) or type(value) not in (cst.Tuple, cst.List):
        return None
    targets, elements = target.elements, value.elements  # type: ignore[attr-defined]
    if len(targets) != len(elements) or any(type(e) is cst.StarredElement for e in (*targets, *elements)):
        return None
    return [(t.value, e.value) for t, e in zip(targets, elements)]


def _is_shape(node: cst.BaseExpression) -> bool:
    """`x.shape` or `x.size()`: a tuple of Python ints (a torch.Size)."""
    if type(node) is cst.Attribute:
        return node.attr.value == "shape"
    return type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "size" and not node.args


def _is_shape_element(node: cst.BaseExpression) -> bool:
    """`x.shape[0]`, `x.shape[-1]`: one size of a tensor's (or an array's) shape, a Python int (a
    slice, `x.shape[1:]`, is a tuple)."""
    if type(node) is not cst.Subscript or len(node.slice) != 1 or not _is_shape(node.value):
        return False
    index = node.slice[0].slice
    if type(index) is not cst.Index:
        return False
    value = index.value
    if type(value) is cst.UnaryOperation and type(value.operator) is cst.Minus:
        value = value.expression
    return type(value) is cst.Integer


def _is_none(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value == "None"


def _calls_in(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Call:
            yield current
        stack.extend(code_children(current))


def _module_names_bound_twice(module: cst.Module, fallbacks: frozenset[str]) -> set[str]:
    """Module-level names bound by an import and also by something else (def, class, assignment).

    Function bodies run after the module has finished loading, so for them such a name is ambiguous.
    `name = None` (the usual `except ImportError` fallback) does not count, nor does a stand-in
    defined in the `except` of the try that imported the name (`import_fallbacks`).
    """
    imported: dict[str, set[str]] = {}
    other: set[str] = set()

    def scan(statements, in_handler: bool = False) -> None:
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Import):
                        for alias in small.names:
                            if alias.asname is not None:
                                name, source = alias.asname.name.value, dotted(alias.name)
                            else:
                                name = source = dotted(alias.name).split(".")[0]
                            imported.setdefault(name, set()).add(source)
                    elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                        for alias in small.names:
                            name = alias.asname.name.value if alias.asname else dotted(alias.name)
                            imported.setdefault(name, set()).add(dotted(small.module) if small.module else ".")
                    elif isinstance(small, (cst.Assign, cst.AnnAssign)):
                        if isinstance(small.value, cst.Name) and small.value.value == "None":
                            continue
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        other.update(t.value for t in targets if isinstance(t, cst.Name) and not _fallback(t.value, in_handler))
            elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                if not _fallback(statement.name.value, in_handler):
                    other.add(statement.name.value)
            elif isinstance(statement, (cst.Try, cst.TryStar)):
                scan(statement.body.body, in_handler)
                for handler in statement.handlers:
                    scan(handler.body.body, True)
                for extra in (statement.orelse, statement.finalbody):
                    if extra is not None:
                        scan(extra.body.body, in_handler)
            elif isinstance(statement, (cst.If, cst.With)):
                for block in nested_blocks(statement):
                    scan(block, in_handler)

    def _fallback(name: str, in_handler: bool) -> bool:
        return in_handler and name in fallbacks

    scan(module.body)
    ambiguous = {name for name in imported if name in other}
    ambiguous.update(name for name, sources in imported.items() if len(sources) > 1)
    return ambiguous


def import_fallbacks(module: cst.Module) -> frozenset[str]:
    """Module-level names imported in a `try` and rebound (a dummy class, a stand-in function, an
    assignment) only in that try's `except` handlers: the stand-in for an environment where the import
    fails (`except: class GradScaler: ...` for PyTorch < 1.6).  Where the import succeeds, as on the
    installs a linter reasons about, the name is the imported object, so the analysis keeps the import's
    binding.  A name also bound outside those handlers is not one."""
    in_try: set[str] = set()
    elsewhere: set[str] = set()

    def bound(statements) -> set[str]:
        names: set[str] = set()
        for statement in statements:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                names.add(statement.name.value)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, (cst.Assign, cst.AnnAssign)):
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        names.update(t.value for t in targets if isinstance(t, cst.Name))
        return names

    def imports(statements) -> set[str]:
        names: set[str] = set()
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                        names.update(a.asname.name.value if a.asname else dotted(a.name) for a in small.names
                                     if a.asname is None or isinstance(a.asname.name, cst.Name))
        return names

    for statement in module.body:
        if isinstance(statement, cst.Try):
            imported = imports(statement.body.body)
            for handler in statement.handlers:
                rebound = bound(handler.body.body)
                in_try.update(imported & rebound)
            elsewhere.update(bound(statement.body.body))
        else:
            elsewhere.update(bound([statement]))
    return frozenset(in_try - elsewhere)
