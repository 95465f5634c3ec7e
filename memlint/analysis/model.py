"""The semantic model of one file: facts about its code found once, on libcst's tree, each with the
evidence it rests on, for every rule to ask (issue 27).

The Context (context.py) follows the code in traversal order and answers "what is this name bound to
here"; some facts need the whole file first (a `loss.backward()` three lines below the assignment
proves that the assignment's value has history).  Those are found here, in one walk of the file, the
first time a rule or the Context asks, and never re-derived by a rule.

Facts, and the evidence of each (docs/architecture.md, "The semantic model"):

- **history**: which assignments bind a value that carries autograd history, by direct evidence in
  the code (`Evidence`): backward called on it in any form (memlint/analysis/evidence.py), or it is
  another result of the call that produced such a value (`loss, mse, ce = criterion(...)` then
  `loss.backward()`: `mse` and `ce` come out of the same forward computation); a `+=` on a name is
  such a binding too (`loss = 0.0; loss += term; loss.backward()`: the sum backward runs on),
  where the backward is reached from it (memlint/analysis/flows_to.py).  The
  Context gives these bindings history where its own valuation cannot tell
  (`Context._leave_assign`, `_leave_aug_assign`); it never
  overrides what it knows (a number, a plain object).
- **backward**: where backward runs: which loops and functions call it, directly or through the
  file's own helpers, and which names a loop backpropagates.
- **models**: which names (and `self.<attr>`s) hold a model by evidence: they get a method only an
  nn.Module has (`.parameters()`, `.eval()`, `.train()`, ...) and are called (`G(z)`).
- **meters**: which names and `self.<attr>`s hold a running meter whose `update` keeps its argument
  (meters.py).
- **device**: whether the file puts anything on an accelerator (`.cuda()`, `.to(device)`,
  `device=` / `accelerator=` / `gpus=` other than "cpu"; a dtype is not a device), what it moves
  (`model` in `model.to(device)`), whether it asks a Trainer for the CPU, and where each loop
  sends its inputs.  `explicit`: something names an accelerator by itself (`.cuda()`, `.to(device)`,
  `device="cuda"`), not only by following a tensor's device (`.to(x.device)`, which moves nothing
  in a script that keeps everything on the CPU).
- **accelerator named** (accelerators.py): the first identifier or string that names an
  accelerator (`device`, `args.gpu`, `use_cuda`, `"cuda:0"`; not `torch.cuda.manual_seed`), weaker
  than `device.accelerator`: the placement may be in another file.  With **runs at module level**
  (a script or notebook) it gives `host_only`: a file that names no accelerator runs on the CPU.
- **loop scope** (roles.py): for every loop, a fixed small count, one iteration per step over a
  loader, one per epoch, or unknown, with its evidence.
- **function role** (roles.py): training (backward), evaluation (`@torch.no_grad()`), plotting
  (matplotlib calls), or none known.
- **datasets**: what a dataset was built from: `ds = TensorDataset(X, y)` -> {"ds": {"X", "y"}},
  `ds = MyDataset(torch.as_tensor(X_test).float())` -> {"ds": {"X_test"}} (every tensor of a
  TensorDataset, the first argument of another `*Dataset` class), per function: `len(X)` is then
  at least the dataset's length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, Mapping, Optional, Union

import libcst as cst

from memlint.analysis import accelerators, evidence, forward_returns, frameworks, notebooks, placement, returned_elements, roles, tables
from memlint.analysis.bindings import exact_names_bound_by, own_scope, parameter_names, target_names
from memlint.analysis.optimizer_bindings import constructed_optimizers
from memlint.analysis.calling_helpers import parameter_for
from memlint.analysis.datasets import dataset_classes
from memlint.analysis.flows_to import parents_below, reaches
from memlint.analysis.iteration import function_runs_model
from memlint.analysis.loop_bounds import parameter_default
from memlint.analysis.meters import Meters
from memlint.analysis.naming import OPTIMIZER_ONLY_NAME
from memlint.analysis.walk import code_descendants, dotted_name, held_as, held_name, module_entries_key
from memlint.pipeline.tree import code_children

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Where a backward call or a helper call is recorded (a lambda or a class ends a loop's own statements).
_SCOPES = (cst.FunctionDef, cst.For, cst.While, cst.Lambda, cst.ClassDef)
_LOOPS = (cst.For, cst.While)
_OWN_SCOPE_ENDS = frozenset({cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda})


@dataclass(frozen=True)
class Evidence:
    """Why a binding carries history: `kind` "backward" (backward is called on it: `call`),
    "returned" (a framework backpropagates what the hook returns: `call` is the `return`) or
    "sibling" (another result of the same call is backpropagated by `call`: `via` names it)."""

    kind: str
    call: cst.CSTNode
    scalar: bool  # backward without a gradient argument needs a 0-d tensor
    via: Optional[str] = None


@dataclass(frozen=True)
class DeviceFacts:
    accelerator: bool  # the file puts something on an accelerator
    moved: frozenset[str]  # receivers of `.cuda()` / `.to(<not the CPU>)`, as written
    cpu_trainer: bool  # `accelerator="cpu"` somewhere (a Lightning Trainer kept on the CPU)
    explicit: bool = True  # an accelerator is named by itself, not only followed (`.to(x.device)`)
    launched: bool = False  # a launcher places the model and batches (`accelerator.prepare`, `fabric.setup`)


_NO_HISTORY: Mapping[str, Evidence] = {}
_NO_SWITCHES: Mapping[str, tuple[str, int]] = {}


class SemanticModel:
    def __init__(
        self, module: cst.Module, text: Optional[str] = None, project_meters: frozenset[str] = frozenset(),
        gradient_classes: frozenset[str] = frozenset(),
        gradient_switches: Mapping[str, tuple[str, int]] = _NO_SWITCHES,
        gradient_factories: Mapping[str, tuple[str, int]] = _NO_SWITCHES,
        model_runner_calls: frozenset[str] = frozenset(),
    ) -> None:
        self.module = module
        # Calls as written here ("train_utils.evaluate", "Class.method" for `self.method()`) that run a
        # function of another file running a model (the project pass's FileView.update_calls with
        # "model"): a loop over a dataset's items that makes one runs a model per item (loop_scope).
        self._model_runner_calls = model_runner_calls
        self._holders: Optional[dict[int, tuple[Optional[cst.ClassDef], Optional[cst.FunctionDef]]]] = None  # _walk_holders
        self._runs_model_of: dict[tuple[int, str], bool] = {}  # (id(module or class), name) -> _function_runs_model
        self._project_meters = project_meters  # meter classes of other files, as imported here (meters.py)
        # nn.Module classes, as named here, whose forward computes gradients (the project pass's
        # FileView.gradient_classes: this file's and other files' classes alike)
        self._gradient_classes = gradient_classes
        self._gradient_instances: Optional[dict[str, Optional[str]]] = None
        # classes whose forward computes gradients only with a flag on, and project functions that
        # return an instance of a gradient class (FileView.gradient_switches / gradient_factories):
        # name as written here -> (the flag, or "" for always; its position among the arguments)
        self._gradient_switches = gradient_switches
        self._gradient_factories = gradient_factories
        self._switched_instances: Optional[dict[str, tuple[str, int]]] = None
        self._unpacked_switches: dict[str, tuple[str, int]] = {}  # `model, _ = make(...)` at module level
        self._shadowed: frozenset[str] = frozenset()  # of those, names some function binds itself
        self._module_call_ids: Optional[frozenset[int]] = None
        self._built_instances: Optional[dict[str, Optional[str]]] = None  # forward_returns.constructed_classes, any class
        # Without the word there is no backward call, and nothing to find for the history fact: most
        # library files are answered without a walk.
        self._may_backpropagate = text is None or "backward" in text or "autograd" in text or "training_step" in text
        self._may_show_modules = text is None or any(f".{m}(" in text for m in evidence.MODULE_METHODS)
        self._walked = False
        self._history: dict[int, dict[str, Evidence]] = {}
        self._aug_scopes: dict[int, cst.CSTNode] = {}  # a `+=` site's function (or the module)
        self._scope_parents: dict[int, dict[int, cst.CSTNode]] = {}  # flows_to.parents_below, per scope
        self._direct_backward: set[int] = set()  # ids of scopes (loops, functions) with a backward call under them
        self._any_backward = False  # a backward call anywhere in the file (module-level code included)
        self._own_backward: set[int] = set()  # ids of loops with one in their own statements
        self._helper_calls: dict[int, set[str]] = {}  # scope id -> names of the file's functions it calls
        self._own_helper_calls: dict[int, set[str]] = {}  # loop id -> those called in its own statements
        self._backpropagated: dict[int, set[str]] = {}  # scope id -> names backpropagated under it
        self._functions: dict[str, Optional[cst.FunctionDef]] = {}
        self._helpers_backward: Optional[set[str]] = None
        self._backward_classes: Optional[frozenset[str]] = None  # the file's classes with a hand-written `backward(self, ...)`
        self._device: Optional[DeviceFacts] = None
        self._named: Optional[tuple[Optional[cst.CSTNode]]] = None
        self._script: Optional[bool] = None
        self._imports: dict[str, str] = {}
        self._text = text
        self._notebook: Optional[notebooks.MarimoNotebook] = None
        self._notebook_known = False
        self._meters: Optional[Meters] = None
        self._constructed: dict[int, Mapping[str, tuple[cst.Call, ...]]] = {}
        self._datasets: dict[int, Mapping[str, frozenset[str]]] = {}
        self._dataset_classes: Optional[frozenset[str]] = None  # the file's own dataset classes (datasets.py)
        self._module_receivers: set[str] = set()  # names and "self.<attr>"s given a module method
        self._called: set[str] = set()  # names and "self.<attr>"s called directly
        self._model_scanned = False  # `_called` and `_module_receivers` are complete without the walk
        self._loader_names: Optional[frozenset[str]] = None
        self._scopes: dict[int, roles.LoopScope] = {}
        self._roles: dict[int, Optional[str]] = {}
        self._host_models: Optional[frozenset[str]] = None
        self._optimizers: Optional[frozenset[str]] = None  # held names bound to an optimizer's construction
        # (callee, its arguments' names with the assignment that last bound each, the call, its scopes):
        # a helper of the file that backpropagates its parameter proves the argument has history
        self._helper_arguments: list[tuple[str, bool, list[tuple[int, str, list]], cst.Call, tuple]] = []
        self._kept_returns: Optional[Mapping[int, str]] = None
        # (the module classes asked about, their graph-free forward positions, what builds each name)
        self._forward_returns: Optional[tuple[frozenset[str], dict, dict]] = None
        self._callee_index: Optional[returned_elements.CalleeIndex] = None  # (built on the first tuple-unpacking call asked)

    # ------------------------------------------------------------------ notebook semantics

    @property
    def notebook(self) -> Optional[notebooks.MarimoNotebook]:
        """The file's marimo cells and what each defines (notebooks.py), or None: not a notebook."""
        if not self._notebook_known:
            self._notebook_known = True
            self._notebook = notebooks.marimo_notebook(self.module, self._text)
        return self._notebook

    # ------------------------------------------------------------------ what a module call returns

    def graph_free_elements(self, call: cst.Call, module_classes: Iterable[str]) -> Optional[tuple[bool, ...]]:
        """When `call` runs an instance of one of the file's nn.Module classes (`self.actor(state)`
        with `self.actor = Actor(...)` wherever the file assigns it) whose `forward` returns tuples
        of one length: per element, does it certainly carry no autograd history (a sampled
        action, a detached value)?  None where that cannot be told (analysis/forward_returns.py)."""
        classes = frozenset(module_classes)
        if not classes:
            return None
        if self._forward_returns is None or self._forward_returns[0] != classes:
            imports = self._module_imports()
            self._forward_returns = (
                classes,
                forward_returns.graph_free_positions(self.module, classes, imports),
                forward_returns.of_classes(self._instances(), classes),
            )
        _, positions, built = self._forward_returns
        if not positions:
            return None
        written = dotted_name(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
        owner = built.get(written) if written is not None else None
        return positions.get(owner) if owner is not None else None

    def returned_element_sources(
        self, call: cst.Call, caller: Optional[cst.FunctionDef], module_classes: Iterable[str]
    ) -> Optional[tuple[tuple[returned_elements.Sources, ...], list]]:
        """Where the file shows every definition `call` may run and each returns a tuple display of
        one length: per position, the callee parameters an element may take history from (None:
        history of its own), with those definitions (analysis/returned_elements.py)."""
        if self._callee_index is None:
            self._callee_index = returned_elements.CalleeIndex(self.module, self._instances(), self._text)
        definitions = self._callee_index.definitions(call, caller, frozenset(module_classes))
        return self._callee_index.combined_sources(definitions) if definitions else None

    def _instances(self) -> dict[str, Optional[str]]:
        """Names and `self.<attr>`s -> the class every assignment of them builds (one walk, whatever
        class set is asked: `forward_returns.of_classes`)."""
        if self._built_instances is None:
            self._built_instances = forward_returns.constructed_classes(self.module)
        return self._built_instances

    def runs_gradient_forward(self, call: cst.Call) -> bool:
        """Does `call` run an instance of an nn.Module class whose `forward` computes gradients
        (`self.model((shot, label, query))` with `self.model = MtlLearner(args)` wherever the file
        assigns it, whose `meta_forward` adapts a base learner with `torch.autograd.grad`; also
        `self.model.forward(...)`)?  Such a run needs gradients: `no_grad` around it would raise."""
        if not self._gradient_classes and not self._gradient_switches and not self._gradient_factories:
            return False
        if self._gradient_instances is None:
            self._gradient_instances = forward_returns.of_classes(self._instances(), self._gradient_classes)
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "forward":
            func = func.value
        written = dotted_name(func) if type(func) in (cst.Name, cst.Attribute) else None
        if written is None:
            return False
        if written in self._gradient_instances:
            return True
        switch = self._switched().get(written)
        if switch is None and written in self._unpacked_switches:
            # (a module-level name: not where a function binds one of its own, `def loss(model, x)`)
            if written not in self._shadowed or id(call) in self._module_calls():
                switch = self._unpacked_switches[written]
        return switch is not None and (not switch[0] or forward_returns.turns_on(call, *switch))

    def _module_calls(self) -> frozenset[int]:
        if self._module_call_ids is None:
            skip = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
            self._module_call_ids = frozenset(id(n) for n in code_descendants(self.module, skip=skip) if type(n) is cst.Call)
        return self._module_call_ids

    def _switched(self) -> dict[str, tuple[str, int]]:
        """Names and `self.<attr>`s -> the switch of the gradient-computing class they hold: built
        as a class of `gradient_switches`, or bound to what a function of `gradient_factories`
        returns (`model = make(...)`, `model, _ = make(...)`)."""
        if self._switched_instances is None:
            found: dict[str, tuple[str, int]] = {}
            if self._gradient_switches or self._gradient_factories:
                for written, built in self._instances().items():
                    switch = self._gradient_switches.get(built) or self._gradient_factories.get(built)  # type: ignore[arg-type]
                    if switch is not None:
                        found[written] = switch
                if self._gradient_factories:
                    unpacked, self._shadowed = forward_returns.first_items(self.module)
                    for written, callee in unpacked.items():
                        switch = self._gradient_factories.get(callee)
                        if switch is not None:
                            self._unpacked_switches[written] = switch
            self._switched_instances = found
        return self._switched_instances

    # ------------------------------------------------------------------ history

    def history_at(self, assign: Union[cst.Assign, cst.AugAssign]) -> Mapping[str, Evidence]:
        """The names `assign` (an `=`, or a `+=` on a name) binds to a value with history, by direct
        evidence, and why."""
        if not self._may_backpropagate:
            return _NO_HISTORY
        self._walk()
        return self._history.get(id(assign), _NO_HISTORY)

    # ------------------------------------------------------------------ backward

    def calls_backward(self, scope: cst.CSTNode) -> bool:
        """Does the loop or function `scope` call backward (any form), directly or through the file's
        own functions it calls (`train_step(batch)` whose body runs `loss.backward()`)?"""
        if not self._may_backpropagate:
            return False
        self._walk()
        if id(scope) in self._direct_backward:
            return True
        return not self._helpers_that_backpropagate().isdisjoint(self._helper_calls.get(id(scope), ()))

    def hands_to_backpropagating_helper(self, call: cst.Call, argument: cst.BaseExpression) -> bool:
        """Is `argument` handed (positionally) to one of the file's functions that calls backward,
        directly or through its helpers, and reads the parameter it binds (`compute_acer_loss(
        policies, q_values, ...)` whose body builds `loss` from `policies[step]` and runs
        `loss.backward()`)?  What it was handed may be the objective: the caller's accumulation is
        then the gradient's, as if the body were written in place."""
        if not self._may_backpropagate:
            return False
        func = call.func
        if type(func) is cst.Name:
            callee, through_self = func.value, False
        elif type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
            callee, through_self = func.attr.value, True
        else:
            return False
        self._walk()
        function = self._functions.get(callee)
        if function is None or callee not in self._helpers_that_backpropagate():
            return False
        arg = next((a for a in call.args if a.value is argument), None)
        param = parameter_for(call, arg, function, through_self) if arg is not None and not arg.star else None
        if param is None:
            return False
        return any(type(node) is cst.Name and node.value == param for node in code_descendants(function.body))

    def backpropagates_anywhere(self) -> bool:
        """Does the file call backward (any form) anywhere, in a function or at module level?"""
        if not self._may_backpropagate:
            return False
        self._walk()
        return self._any_backward

    def backward_in_own_statements(self, loop: cst.CSTNode) -> bool:
        """Backward in the loop's own statements (not a nested loop's or function's), directly or
        through a helper of the file it calls there."""
        if not self._may_backpropagate:
            return False
        self._walk()
        if id(loop) in self._own_backward:
            return True
        return not self._helpers_that_backpropagate().isdisjoint(self._own_helper_calls.get(id(loop), ()))

    def backpropagated_names(self, scope: cst.CSTNode) -> frozenset[str]:
        """The names backward is called on somewhere in `scope` (`loss` of `loss.backward()`,
        `scaler.scale(loss).backward()`, `accelerator.backward(loss)`)."""
        if not self._may_backpropagate:
            return frozenset()
        self._walk()
        return frozenset(self._backpropagated.get(id(scope), ()))

    def _helpers_that_backpropagate(self) -> set[str]:
        """The file's functions (by name; a name defined twice is left out) that call backward,
        directly or through each other (a least fixed point over the file's call graph)."""
        if self._helpers_backward is None:
            found: set[str] = set()
            changed = True
            while changed:
                changed = False
                for name, node in self._functions.items():
                    if node is None or name in found:
                        continue
                    if id(node) in self._direct_backward or not found.isdisjoint(self._helper_calls.get(id(node), ())):
                        found.add(name)
                        changed = True
            self._helpers_backward = found
        return self._helpers_backward

    # ------------------------------------------------------------------ what a value is

    def module_evidence(self, written: Optional[str]) -> bool:
        """Does the file show that `written` (a name, or "self.<attr>") holds a model: it gets a
        method only an nn.Module has (`G.parameters()`, `G.eval()`, `G.train()`) and it is called
        (`G(z)`)?  File-wide, as a name's role in training code is (evidence.module_names is the
        same fact on CPython's AST, for the screens)."""
        if written is None or not self._may_show_modules:
            return False
        if not self._walked and not self._model_scanned:
            self._scan_model_names()
        return written in self._module_receivers and written in self._called

    def is_meter(self, receiver: cst.BaseExpression) -> bool:
        """Is `receiver` a running meter that keeps what its `update` is given (meters.py)?"""
        if self._meters is None:
            self._meters = Meters(self.module, self._project_meters)
        return self._meters.is_meter(receiver)

    def constructed(self, scope: cst.CSTNode) -> Mapping[str, tuple[cst.Call, ...]]:
        """Names the function (or the module) `scope` binds, by assignments of its own code, only to
        what calls of capitalised callees build, through methods that return the module
        (`G = Generator().cuda()` -> {"G": (<the call `Generator()`>,)}): the evidence that a name
        holds an instance of a class, whichever statement the traversal is at (a region found before
        the assignment is reached still knows what `G` will be)."""
        known = self._constructed.get(id(scope))
        if known is None:
            known = self._constructed[id(scope)] = _constructed(scope)
        return known

    def dataset_sources(self, scope: cst.CSTNode) -> Mapping[str, frozenset[str]]:
        """Names the function (or the module) `scope` binds to a dataset, each with the code of the
        values it was built from (`ds = TensorDataset(X, y)` -> {"ds": {"X", "y"}}); a name bound to
        anything else too is left out."""
        known = self._datasets.get(id(scope))
        if known is None:
            known = self._datasets[id(scope)] = _datasets(self.module, scope, self._own_datasets())
        return known

    def built_from(self, dataset: cst.BaseExpression) -> frozenset[str]:
        """The code of the values an inline dataset call was built from (`TensorDataset(X, y)`)."""
        return _dataset_call_sources(self.module, dataset, self._own_datasets())

    def _own_datasets(self) -> frozenset[str]:
        if self._dataset_classes is None:
            self._dataset_classes = dataset_classes(self.module)
        return self._dataset_classes

    # ------------------------------------------------------------------ loops and functions

    def loop_scope(self, loop: cst.CSTNode) -> roles.LoopScope:
        """How often the loop's own statements run: "fixed" (a small literal count), "step" (per
        batch of a loader), "epoch", or "unknown", with the evidence (roles.py)."""
        known = self._scopes.get(id(loop))
        if known is None:
            if self._loader_names is None:
                self._loader_names = roles.loader_names(self.module, roles.qualifier(self._module_imports()))
            known = roles.loop_scope(
                loop,
                self._loader_names,
                lambda name: parameter_default(self._function_around(loop), name),
                lambda: self._loop_around(loop) is not None,
                lambda: self._loop_around(loop),
                lambda call: self._runs_model_through(call, loop),
            )
            self._scopes[id(loop)] = known
        return known

    def _runs_model_through(self, call: cst.Call, loop: cst.CSTNode) -> bool:
        """Does `call`, in `loop`'s own statements, run a function that runs a model: `self.test()`
        where the class around the loop defines `test` in this file and its own body runs one
        (`self.net_g(self.lq)`, a value the file shows is a model: _function_runs_model), or where
        the project pass found that the method (inherited from another file's class) or the other
        file's function does (`_model_runner_calls`)?  Asked only for a loop over a dataset's items
        (roles.loop_scope)."""
        func = call.func
        holders = self._walk_holders().get(id(loop), (None, None))
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
            owner = holders[0]
            if type(owner) is not cst.ClassDef:
                return False
            method = func.attr.value
            if f"{owner.name.value}.{method}" in self._model_runner_calls:
                return True
            return self._function_runs_model(owner, method)
        written = dotted_name(func)
        if written is None or written.partition(".")[0] in _parameters_of(holders[1]):
            return False  # (a parameter of the function holding the loop: not the module's name)
        if written in self._model_runner_calls:
            return True
        if type(func) is cst.Name:
            return self._function_runs_model(self.module, written)
        return False

    def _walk_holders(self) -> Mapping[int, tuple[Optional[cst.ClassDef], Optional[cst.FunctionDef]]]:
        """For each loop of the file (by id), the innermost class and function around it: one walk,
        made the first time a loop over a dataset's items asks what its calls run (rare), where a
        walk per call would cost the file's size per call."""
        if self._holders is None:
            found: dict[int, tuple[Optional[cst.ClassDef], Optional[cst.FunctionDef]]] = {}
            stack: list[tuple[cst.CSTNode, Optional[cst.ClassDef], Optional[cst.FunctionDef]]] = [(self.module, None, None)]
            while stack:
                current, owner, function = stack.pop()
                kind = type(current)
                if kind is cst.For or kind is cst.While:
                    found[id(current)] = (owner, function)
                elif kind is cst.ClassDef:
                    owner = current  # type: ignore[assignment]
                elif kind is cst.FunctionDef:
                    function = current  # type: ignore[assignment]
                stack.extend((child, owner, function) for child in code_children(current))
            self._holders = found
        return self._holders

    def _function_runs_model(self, holder: Union[cst.Module, cst.ClassDef], name: str) -> bool:
        """Does the `def name` that `holder` (the module, or a class) binds run a model
        (iteration.function_runs_model)?  Found once per function: every walk loop of the file may
        call the same method many times (`self.test()`)."""
        key = (id(holder), name)
        known = self._runs_model_of.get(key)
        if known is None:
            function = _function_bound(holder.body if type(holder) is cst.Module else holder.body.body, name)  # type: ignore[attr-defined]
            known = function is not None and function_runs_model(function, self.module_evidence)
            self._runs_model_of[key] = known
        return known

    def _loop_around(self, loop: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The innermost loop of the same function whose body holds `loop` (asked only for a fixed
        loop that steps itself: rare, so a walk rather than a parent map)."""

        def around_of(node: cst.CSTNode, around: Optional[cst.CSTNode]) -> Optional[cst.CSTNode]:
            kind = type(node)
            return None if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda) else node if kind in (cst.For, cst.While) else around

        return self._innermost_around(loop, around_of)

    def _function_around(self, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
        """The innermost function whose body holds `node` (asked only for a loop cut short by a
        counter compared with a name: rare, so a walk rather than a parent map)."""
        return self._innermost_around(node, lambda current, around: current if type(current) is cst.FunctionDef else around)  # type: ignore[return-value]

    def _innermost_around(self, node: cst.CSTNode, around_of) -> Optional[cst.CSTNode]:
        """A walk from the module to `node`, `around_of(current, around)` giving what holds the
        children of `current`; what holds `node`."""
        stack: list[tuple[cst.CSTNode, Optional[cst.CSTNode]]] = [(self.module, None)]
        while stack:
            current, around = stack.pop()
            if current is node:
                return around
            inner = around_of(current, around)
            stack.extend((child, inner) for child in code_children(current))
        return None

    def function_role(self, function: cst.FunctionDef) -> Optional[str]:
        """"training", "evaluation", "plotting" or None (roles.py)."""
        if id(function) not in self._roles:
            self._roles[id(function)] = roles.function_role(function, roles.qualifier(self._module_imports()), self.calls_backward(function))
        return self._roles[id(function)]

    # ------------------------------------------------------------------ optimizers

    def optimizers(self) -> frozenset[str]:
        """The held names (`Dopt`, `self.optimizer_S`) the file binds to what torch.optim, the
        optimizer table or a known factory builds, directly or through the file's own function that
        returns it (optimizer_bindings.py)."""
        if self._optimizers is None:
            text = self._text
            if text is not None and "optim" not in text and "Adam" not in text:
                self._optimizers = frozenset()  # no optimizer is named: no walk
            else:
                imports = self._module_imports()
                self._optimizers = constructed_optimizers(self.module, lambda written: _qualified(written, imports))
        return self._optimizers

    def is_optimizer(self, receiver: cst.BaseExpression) -> bool:
        """Is `receiver` (of a `.step()`) bound to an optimizer's construction in this file?"""
        name = held_name(receiver)
        return name is not None and name in self.optimizers()

    def steps_optimizer(self, call: cst.Call) -> bool:
        """Is `call` `x.step(...)` on an optimizer?  By construction (`x` bound in this file to what
        builds one: `Dopt = optim.Adam(...)`), else by the name `x` is held under where the file shows
        no construction (a parameter, an attribute set elsewhere: `optimizer`, `d_optim`, `optimG`;
        naming.OPTIMIZER_ONLY_NAME: not a scaler's, a scheduler's or an environment's step).  The one
        answer for ML017 and the closures; loop roles stay name-based (optimizer_bindings.py)."""
        func = call.func
        if type(func) is not cst.Attribute or func.attr.value != "step":
            return False
        name = held_as(func.value)
        if name is not None and OPTIMIZER_ONLY_NAME.search(name):
            return True
        return self.is_optimizer(func.value)

    # ------------------------------------------------------------------ device

    @property
    def device(self) -> DeviceFacts:
        if self._device is None:
            self._device = self._find_device()
        return self._device

    @property
    def accelerator_named(self) -> Optional[cst.CSTNode]:
        """The first name or string that names an accelerator (`device`, `args.gpu`, `use_cuda`,
        `"cuda:0"`), evidence that the file may run on one even where it places nothing itself; None
        where nothing does (accelerators.py)."""
        if self._named is None:
            self._named = (accelerators.accelerator_named(self.module, self._text),)
        return self._named[0]

    @property
    def runs_at_module_level(self) -> bool:
        """A script or a notebook: a loop, a `with`, a call or `if __name__ == "__main__":` at module level."""
        if self._script is None:
            self._script = accelerators.runs_at_module_level(self.module)
        return self._script

    def host_only(self, host_importers: bool) -> bool:
        """Does the file run on the CPU only?  It names no accelerator, and it is a script, or a
        library module whose importers in the project name none either (`host_importers`: the
        project pass's `FileView.host_importers`)."""
        return self.accelerator_named is None and (self.runs_at_module_level or host_importers)

    def loop_device(self, loop: cst.CSTNode) -> Optional[str]:
        """Where the loop's own statements send its inputs: "accelerator" (`.cuda()`, `.to(device)`),
        the model whose device they follow (`x.to(model.device)`: "model"), or None."""
        followed = None
        for node in _own_statements(loop):
            if type(node) is not cst.Call or type(node.func) is not cst.Attribute:
                continue
            method = node.func.attr.value
            if method == "cuda":
                return "accelerator"
            if method != "to" or not node.args:
                continue
            where = node.args[0].value
            if names_cpu(where) or self._names_dtype(where):
                continue
            if configured_device(where):
                return "accelerator"  # `x.to(args.device)`: the run's chosen device, like `x.to(device)`
            if type(where) is cst.Attribute and where.attr.value == "device" and type(where.value) in (cst.Name, cst.Attribute):
                followed = self.module.code_for_node(where.value)
                continue
            return "accelerator"
        return followed

    def models_on_host(self) -> frozenset[str]:
        """Names bound only to a model built or loaded on the CPU and never moved (placement.py)."""
        if self._host_models is None:
            self._host_models = placement.models_on_host(self.module, self.device.moved)
        return self._host_models

    def loop_on_host(self, loop: cst.CSTNode) -> bool:
        """Does the loop, which moves none of its inputs, only call models the file leaves on the CPU
        (`model = Net.load_from_checkpoint(path)` and `preds.append(model(x))`)?"""
        called = {
            node.func.value  # type: ignore[attr-defined]
            for node in _own_statements(loop)
            if type(node) is cst.Call and type(node.func) is cst.Name  # type: ignore[attr-defined]
        }
        host = called & self.models_on_host() if called else set()
        return bool(host) and not any(self.module_evidence(name) for name in called - host)

    def read_back_as_data(self, scope: cst.CSTNode, name: str) -> bool:
        """Is the list `name` of `scope` a data cache a training loop reads back (placement.py)?"""
        return placement.read_back_as_data(scope, name, self.calls_backward)

    # ------------------------------------------------------------------ framework semantics

    def kept_by_framework(self, function: Optional[cst.FunctionDef]) -> Optional[str]:
        """The epoch-end hook that gets every batch's return of this step hook (Lightning 1.x keeps
        them until the epoch ends: frameworks.py), or None."""
        if function is None:
            return None
        if self._kept_returns is None:
            self._kept_returns = frameworks.kept_step_returns(self.module)
        return self._kept_returns.get(id(function))

    def _names_dtype(self, where: cst.BaseExpression) -> bool:
        """`torch.float16`, `torch.bfloat16` (anything of torch's as an argument of `.to`): a dtype."""
        return _qualified(dotted_name(where), self._module_imports()).startswith("torch.")

    def _find_device(self) -> DeviceFacts:
        accelerator = cpu_trainer = explicit = launcher_on_cpu = False
        launched = False
        moved: set[str] = set()
        stack: list[cst.CSTNode] = [self.module]
        while stack:
            node = stack.pop()
            stack.extend(code_children(node))
            kind = type(node)
            if kind is cst.Call:
                func = node.func
                if type(func) is not cst.Attribute:
                    continue
                method = func.attr.value
                if method == "cuda":
                    accelerator = explicit = True
                elif method in _PLACING_METHODS and _names_launcher(func.value):
                    # `accelerator.prepare(model, loader)`, `fabric.setup(model)`: the launcher puts the
                    # model and every batch on its device (an accelerator, unless asked for the CPU)
                    launched = True
                    continue
                elif method in ("to", "device") and node.args:
                    where = node.args[0].value
                    if names_cpu(where) or self._names_dtype(where):
                        continue  # the host, or a dtype (`x.to(torch.float16)`): nothing moves to a device
                    accelerator = True
                    explicit = explicit or not follows_device(where)
                else:
                    continue
                if method in ("cuda", "to") and type(func.value) in (cst.Name, cst.Attribute):
                    moved.add(self.module.code_for_node(func.value))
            elif kind is cst.Arg and node.keyword is not None and node.keyword.value == "cpu" and type(node.value) is cst.Name and node.value.value == "True":
                launcher_on_cpu = True  # `Accelerator(cpu=True)`
            elif kind is cst.Arg and node.keyword is not None and node.keyword.value in ("device", "accelerator", "gpus"):
                if not names_cpu(node.value):
                    accelerator = True
                    explicit = explicit or not follows_device(node.value)
                elif node.keyword.value == "accelerator":
                    cpu_trainer = True  # `Trainer(accelerator="cpu")`
        if launched and not launcher_on_cpu:
            accelerator = explicit = True
        return DeviceFacts(accelerator, frozenset(moved), cpu_trainer, explicit, launched and not launcher_on_cpu)

    # ------------------------------------------------------------------ the walk

    def _module_imports(self) -> dict[str, str]:
        """Local name -> what it imports, for the module's own import statements (enough to tell
        `torch.autograd.grad` and `torch.float16` from the file's own names)."""
        if self._imports:
            return self._imports
        found: dict[str, str] = {}
        for statement in self.module.body:
            if type(statement) is cst.SimpleStatementLine:
                for small in statement.body:
                    if type(small) in (cst.Import, cst.ImportFrom):
                        _note_import(small, found)
        notebook = self.notebook
        if notebook is not None:  # a marimo notebook's cell imports are its globals
            for name, qualified in notebook.imports().items():
                found.setdefault(name, qualified)
        self._imports = found
        return found

    def _walk(self) -> None:
        """One walk of the file, in source order, keeping per scope (function, or the module) the
        assignment that last bound each name: a backward call on a name marks that assignment."""
        if self._walked:
            return
        self._walked = True
        imports = self._module_imports()
        # (node, enclosing loops and functions, innermost last, the binding scope's last assignments)
        module_sites: dict[str, Optional[cst.Assign]] = {}
        stack: list[tuple[cst.CSTNode, tuple, dict]] = [(self.module, (), module_sites)]
        returned: list[tuple[cst.Return, str, Optional[cst.Assign]]] = []  # see tables.BACKPROPAGATED_RETURNS
        manual = False  # `self.automatic_optimization = False`: the framework backpropagates nothing
        while stack:
            node, scopes, sites = stack.pop()
            kind = type(node)
            if kind is cst.Return and node.value is not None:  # type: ignore[attr-defined]
                function = next((s for s in reversed(scopes) if type(s) is cst.FunctionDef), None)
                name = _backpropagated_return(node.value) if function is not None and function.name.value in tables.BACKPROPAGATED_RETURNS else None  # type: ignore[attr-defined]
                if name is not None:
                    returned.append((node, name, sites.get(name)))
                    for scope in scopes:
                        self._backpropagated.setdefault(id(scope), set()).add(name)
            elif kind is cst.Assign and any(_names_attribute(t.target, "automatic_optimization") for t in node.targets):  # type: ignore[attr-defined]
                manual = manual or (type(node.value) is cst.Name and node.value.value == "False")  # type: ignore[attr-defined]
            if kind is cst.FunctionDef:
                name = node.name.value
                self._functions[name] = None if name in self._functions else node
                sites = {}
            elif kind is cst.Assign:
                for bound in exact_names_bound_by(node):
                    sites[bound] = node
            elif kind is cst.AugAssign and type(node.target) is cst.Name:  # type: ignore[attr-defined]
                # `loss_d = 0.0; loss_d += term; loss_d.backward()`: the running sum is what backward
                # runs on (a float has no `.backward()`), so the binding `+=` made carries history
                sites[node.target.value] = node  # type: ignore[attr-defined]
                function = next((s for s in reversed(scopes) if type(s) is cst.FunctionDef), None)
                self._aug_scopes[id(node)] = function if function is not None else self.module
            elif kind in (cst.AugAssign, cst.AnnAssign, cst.For):
                for bound in exact_names_bound_by(node):
                    sites[bound] = None  # rebound otherwise: what comes later is not the last `=`'s value
            elif kind is cst.Call:
                self._call(node, scopes, sites, imports)
            elif kind is cst.ImportFrom or kind is cst.Import:
                _note_import(node, imports)  # (also inside a function or a `try`)
            inner = scopes + (node,) if kind in _SCOPES else scopes
            children = code_children(node)
            # Pushed in reverse, so that they are visited in source order; a function's body gets a
            # scope of its own, a loop's shares its function's.
            for child in reversed(children):
                stack.append((child, inner, sites))
        for node, name, site in [] if manual else returned:
            if site is not None and name not in self._history.get(id(site), {}):
                self._mark(site, name, node, False)
        self._mark_helper_arguments()

    def _mark_helper_arguments(self) -> None:
        """`self.backpropagation(loss)` / `backward(loss)` where the file's helper runs backward on that
        parameter (`def backpropagation(self, loss): self.scaler.scale(loss).backward()`): the argument
        is backpropagated, as if the call were written in place."""
        for callee, through_self, arguments, call, scopes in self._helper_arguments:
            function = self._functions.get(callee)
            if function is None:
                continue
            backpropagated = self._backpropagated.get(id(function), set())
            params = [p.name.value for p in function.params.params]
            if through_self and params[:1] == ["self"]:
                params = params[1:]
            for position, name, chain in arguments:
                if position < len(params) and params[position] in backpropagated:
                    for scope in scopes:
                        self._backpropagated.setdefault(id(scope), set()).add(name)
                    for bound, site in chain:
                        if bound not in self._history.get(id(site), {}):
                            self._mark(site, bound, call, False)

    def _mark_chain(self, sites: dict, name: str, call: cst.CSTNode, scalar: bool) -> None:
        for bound, site in _chain(sites, name):
            self._mark(site, bound, call, scalar if bound == name else False)

    def _note_module_run(self, call: cst.Call) -> None:
        """`nn.parallel.data_parallel(netG, inputs, gpus)` calls `netG` (evidence.MODULE_RUNNING_FUNCTIONS)."""
        func = call.func
        final = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None  # type: ignore[union-attr]
        if final not in evidence.MODULE_RUNNING_FUNCTIONS or not call.args:
            return
        ran = dotted_name(call.args[0].value)
        if ran is not None and (type(call.args[0].value) is cst.Name or (ran.startswith("self.") and ran.count(".") == 1)):
            self._called.add(ran)

    def _note_model_names(self, func: cst.BaseExpression, written: Optional[str], method: Optional[str]) -> None:
        """The model fact's part of a call (`module_evidence`): a name or `self.<attr>` called, or
        given one of evidence.MODULE_METHODS; an element of one (`self.networks[key](x)`,
        `self.networks[key].parameters()`) as "self.networks[]": a collection of models."""
        if written is not None and (type(func) is cst.Name or (written.startswith("self.") and written.count(".") == 1)):
            self._called.add(written)
        elif (entries := module_entries_key(func)) is not None:
            self._called.add(entries)  # `self.networks["feat_model"](x)`: an entry of a container called
        elif method in evidence.MODULE_METHODS:
            receiver = dotted_name(func.value)  # type: ignore[attr-defined]
            if receiver is not None and (type(func.value) is cst.Name or (receiver.startswith("self.") and receiver.count(".") == 1)):  # type: ignore[attr-defined]
                self._module_receivers.add(receiver)
            elif method in evidence.ENTRY_MODULE_METHODS and (entries := module_entries_key(func.value)) is not None:  # type: ignore[attr-defined]
                self._module_receivers.add(entries)  # `self.networks[key].parameters()`

    def _scan_model_names(self) -> None:
        """The calls of the whole file, for the model fact alone: most files that ask it never ask
        for history, and the full walk (`_walk`) keeps assignments and scopes besides.  It visits
        the same nodes as `_walk` (every code child), so the two give the same names."""
        self._model_scanned = True
        # (the file's pre-order index of code nodes, pipeline/tree.py: a slice, not a second walk; the
        # facts are sets, so the order does not matter)
        for node in code_descendants(self.module):
            if type(node) is cst.Call:
                func = node.func  # type: ignore[attr-defined]
                self._note_model_names(func, dotted_name(func), func.attr.value if type(func) is cst.Attribute else None)
                self._note_module_run(node)  # type: ignore[arg-type]

    def _call(self, call: cst.Call, scopes: tuple, sites: dict, imports: dict) -> None:
        func = call.func
        written = dotted_name(func)
        method = func.attr.value if type(func) is cst.Attribute else None
        self._note_model_names(func, written, method)
        self._note_module_run(call)
        qualified = _qualified(written, imports) if written is not None else None
        if evidence.is_backward(written, method, qualified) and not self._hand_written_backward(func, sites):
            self._any_backward = True
            for scope in scopes:
                self._direct_backward.add(id(scope))
            own_loop = _own_loop(scopes)
            if own_loop is not None:
                self._own_backward.add(id(own_loop))
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            subject_of = evidence.backward_subject(written, method, len(positional), qualified)
            if subject_of is None:
                return
            subject = func.value if subject_of == "receiver" else positional[0]  # type: ignore[union-attr]
            name, scalar = _subject_name(subject)
            if name is None:
                return
            for scope in scopes:
                self._backpropagated.setdefault(id(scope), set()).add(name)
            if subject_of == "argument" and method is None:
                scalar = False  # `torch.autograd.grad(out, x, grad_outputs=...)` takes any shape
            self._mark_chain(sites, name, call, scalar)
            return
        callee = None
        if type(func) is cst.Name:
            callee = func.value
        elif type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
            callee = func.attr.value
        if callee is not None:
            for scope in scopes:
                self._helper_calls.setdefault(id(scope), set()).add(callee)
            arguments = [
                (position, arg.value.value, _chain(sites, arg.value.value))  # type: ignore[attr-defined]
                for position, arg in enumerate(a for a in call.args if a.keyword is None and not a.star)
                if type(arg.value) is cst.Name
            ]
            if arguments:
                self._helper_arguments.append((callee, type(func) is cst.Attribute, arguments, call, scopes))
            own_loop = _own_loop(scopes)
            if own_loop is not None:
                self._own_helper_calls.setdefault(id(own_loop), set()).add(callee)

    def _hand_written_backward(self, func: cst.BaseExpression, sites: dict) -> bool:
        """`lrmodel.backward(x, yhat, y)` where `lrmodel = LR(...)` and the file's class `LR` defines
        `def backward(self, ...)` itself (a tutorial's hand-written gradients, on an `nn.Module`
        too: it has no `backward` of its own): that method runs, not autograd's backward."""
        if type(func) is not cst.Attribute or type(func.value) is not cst.Name:
            return False
        site = sites.get(func.value.value)
        value = site.value if type(site) is cst.Assign else None
        if not (type(value) is cst.Call and type(value.func) is cst.Name):
            return False
        if self._backward_classes is None:
            self._backward_classes = frozenset(
                statement.name.value
                for statement in self.module.body
                if type(statement) is cst.ClassDef and any(
                    type(member) is cst.FunctionDef and member.name.value == "backward" and not member.decorators
                    and member.params.params[:1] and member.params.params[0].name.value == "self"
                    for member in statement.body.body
                )
            )
        return value.func.value in self._backward_classes

    def _flows_to(self, site: cst.AugAssign, call: cst.CSTNode) -> bool:
        """Is the backward statement `call` reached from the `+=` `site` (flows_to.reaches)?  The
        parents of the `+=`'s function are listed once, only for files that backpropagate a sum."""
        scope = self._aug_scopes.get(id(site), self.module)
        parents = self._scope_parents.get(id(scope))
        if parents is None:
            parents = self._scope_parents[id(scope)] = parents_below(scope)
        return reaches(site, call, parents)

    def _mark(self, site: Union[cst.Assign, cst.AugAssign], name: str, call: cst.CSTNode, scalar: bool) -> None:
        if type(site) is cst.AugAssign and not self._flows_to(site, call):
            return  # `if not train: loss += m; continue` then `loss.backward()`: never the value backward runs on
        found = self._history.setdefault(id(site), {})
        found[name] = Evidence("backward" if type(call) is cst.Call else "returned", call, scalar)
        if type(site) is not cst.Assign or type(site.value) is not cst.Call:
            return
        # `loss, mse, ce = criterion(out, y)`: the other results of the call that produced `loss`
        for target in site.targets:
            if type(target.target) not in (cst.Tuple, cst.List):
                continue
            for other in target_names(target.target):
                if other != name and other not in found:
                    found[other] = Evidence("sibling", call, False, via=name)


def _note_import(node: cst.CSTNode, found: dict[str, str]) -> None:
    """Local name -> what an `import` / `from ... import` statement binds it to (relative and star
    imports left out)."""
    if type(node) is cst.Import:
        for alias in node.names:  # type: ignore[attr-defined]
            written = dotted_name(alias.name) or ""
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                found[alias.asname.name.value] = written
            else:
                found[written.partition(".")[0]] = written.partition(".")[0]
    elif type(node) is cst.ImportFrom and not node.relative and not isinstance(node.names, cst.ImportStar):  # type: ignore[attr-defined]
        base = dotted_name(node.module) if node.module is not None else None  # type: ignore[attr-defined]
        for alias in node.names:  # type: ignore[attr-defined]
            name = dotted_name(alias.name) or ""
            local = alias.asname.name.value if alias.asname is not None and type(alias.asname.name) is cst.Name else name
            if base:
                found[local] = f"{base}.{name}"


# Module methods that return the module itself: `Net().cuda().eval()` is still the `Net`.
MODULE_RETURNING = tables.MODULE_RETURNING  # (in tables: the project pass's summaries read it too)


def _name_assignments(scope: cst.CSTNode) -> Iterator[tuple[str, cst.BaseExpression]]:
    """`name = value` statements of `scope`'s own code (not of the functions, classes and lambdas it
    defines), as (name, value)."""
    body = scope.body if type(scope) is cst.FunctionDef else scope  # type: ignore[attr-defined]
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        stack.extend(code_children(node))
        if kind is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:  # type: ignore[attr-defined]
            yield node.targets[0].target.value, node.value  # type: ignore[attr-defined]


def _constructed(scope: cst.CSTNode) -> dict[str, tuple[cst.Call, ...]]:
    found: dict[str, tuple[cst.Call, ...]] = {}
    clashes: set[str] = set()
    for name, value in _name_assignments(scope):
        while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in MODULE_RETURNING:  # type: ignore[attr-defined]
            value = value.func.value  # type: ignore[attr-defined]
        written = dotted_name(value.func) if type(value) is cst.Call else None  # type: ignore[attr-defined]
        last = written.rpartition(".")[2] if written else ""
        if last[:1].isupper():
            found[name] = (*found.get(name, ()), value)  # type: ignore[assignment]
        else:
            clashes.add(name)  # bound to something else too: no single answer
    for name in clashes:
        found.pop(name, None)
    return found


# Calls that make a tensor or an array of their first argument, and methods that keep its length:
# `torch.as_tensor(X).float()`, `torch.from_numpy(X)`, `X.values` are still X's rows.
_TENSOR_MAKERS = frozenset({"tensor", "as_tensor", "from_numpy", "Tensor", "FloatTensor", "LongTensor", "array", "asarray"})
_SAME_ROWS = frozenset({"float", "double", "long", "int", "half", "to", "cuda", "cpu", "type", "astype", "contiguous", "clone", "detach"})


def _dataset_call_sources(module: cst.Module, call: cst.BaseExpression, own: frozenset[str] = frozenset()) -> frozenset[str]:
    if type(call) is not cst.Call:
        return frozenset()
    written = dotted_name(call.func) or ""  # type: ignore[attr-defined]
    last = written.rpartition(".")[2]
    if not last.endswith("Dataset") and written not in own:  # `MyData(X, y)`, a dataset class of the file
        return frozenset()
    positional = [a.value for a in call.args if a.keyword is None and not a.star]  # type: ignore[attr-defined]
    chosen = positional if last == "TensorDataset" else positional[:1]
    found: set[str] = set()
    for value in chosen:
        value = _rows_of(value)
        if type(value) in (cst.Name, cst.Attribute):
            found.add(module.code_for_node(value))
    return frozenset(found)


def _rows_of(value: cst.BaseExpression) -> cst.BaseExpression:
    """`torch.as_tensor(X).float()` -> `X`: through calls that keep the rows of their operand."""
    while True:
        if type(value) is cst.Attribute and value.attr.value == "values":  # type: ignore[attr-defined]
            value = value.value  # type: ignore[attr-defined]
            continue
        if type(value) is not cst.Call:
            return value
        func = value.func  # type: ignore[attr-defined]
        name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        args = [a.value for a in value.args if a.keyword is None and not a.star]  # type: ignore[attr-defined]
        if name in _TENSOR_MAKERS and args:
            value = args[0]
        elif name in _SAME_ROWS and type(func) is cst.Attribute:
            value = func.value
        else:
            return value


def _datasets(module: cst.Module, scope: cst.CSTNode, own: frozenset[str]) -> dict[str, frozenset[str]]:
    found: dict[str, frozenset[str]] = {}
    clashes: set[str] = set()
    for name, value in _name_assignments(scope):
        sources = _dataset_call_sources(module, value, own)
        if sources and found.get(name, sources) == sources:
            found[name] = sources
        else:
            clashes.add(name)
    for name in clashes:
        found.pop(name, None)
    return found


def names_cpu(expr: cst.BaseExpression, ctx: Optional["Context"] = None) -> bool:
    """`"cpu"`, `torch.device("cpu")`: the host, not an accelerator.  Without `ctx`, any call whose
    first argument is `"cpu"` reads as the host (a loop's move that is no move to a device); with
    `ctx`, only `torch.device("cpu")` itself, resolved through the file's imports and given that one
    argument: the host for certain (host_targets: where a tensor is built)."""
    if type(expr) is cst.SimpleString:
        return expr.evaluated_value == "cpu"  # type: ignore[union-attr]
    if type(expr) is not cst.Call or not expr.args or type(expr.args[0].value) is not cst.SimpleString:  # type: ignore[union-attr]
        return False
    if ctx is not None and (len(expr.args) != 1 or ctx.resolve(expr.func) != "torch.device"):  # type: ignore[union-attr]
        return False
    return expr.args[0].value.evaluated_value == "cpu"  # type: ignore[union-attr]


def follows_device(where: cst.BaseExpression) -> bool:
    """`x.device`: a local value's device (a tensor's), not one the code names or configures
    (`args.device`, `self.device`, `self.args.device` are set by the run's configuration)."""
    return (
        type(where) is cst.Attribute
        and where.attr.value == "device"  # type: ignore[attr-defined]
        and type(where.value) is cst.Name  # type: ignore[attr-defined]
        and where.value.value not in _CONFIGURATIONS  # type: ignore[attr-defined]
    )


def configured_device(where: cst.BaseExpression) -> bool:
    """`args.device`, `cfg.device`, `self.args.device`: the device the run's configuration names (a
    flag's value, as a plain `device` is), not one that follows a model or a tensor (`model.device`,
    `x.device`); `self.device` stays a module's own (Lightning's follows the module)."""
    if type(where) is not cst.Attribute or where.attr.value != "device":  # type: ignore[attr-defined]
        return False
    root = where.value  # type: ignore[attr-defined]
    if type(root) is cst.Attribute and type(root.value) is cst.Name and root.value.value == "self":  # type: ignore[attr-defined]
        root = root.attr  # type: ignore[attr-defined]
    return type(root) is cst.Name and root.value in _CONFIGURATIONS and root.value != "self"  # type: ignore[attr-defined]


_CONFIGURATIONS = frozenset({"self", "args", "opt", "opts", "config", "cfg", "conf", "hparams", "params", "settings", "flags", "FLAGS", "hp"})


def _qualified(written: Optional[str], imports: Mapping[str, str]) -> str:
    if not written:
        return ""
    root, dot, rest = written.partition(".")
    base = imports.get(root)
    return (base + dot + rest) if base is not None else ""


def _own_loop(scopes: tuple) -> Optional[cst.CSTNode]:
    """The loop whose own statements hold a node with these enclosing scopes (none when a function
    or a lambda is nearer)."""
    return scopes[-1] if scopes and type(scopes[-1]) in _LOOPS else None


def _own_statements(loop: cst.CSTNode):
    stack: list[cst.CSTNode] = [loop.body, loop.iter if type(loop) is cst.For else loop.test]  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in code_children(node) if type(child) not in _OWN_SCOPE_ENDS)


def _subject_name(expr: cst.BaseExpression) -> tuple[Optional[str], bool]:
    """The name whose value a backpropagated expression is, and whether that value must be 0-d:
    `loss`, `scaler.scale(loss)`, `loss / accum`, `2 * loss` (0-d); `loss.mean()` (any shape)."""
    scalar = True
    while True:
        kind = type(expr)
        if kind is cst.Name:
            return expr.value, scalar  # type: ignore[attr-defined]
        if kind is cst.Subscript and type(expr.value) is cst.Name and _constant_key(expr):  # type: ignore[attr-defined]
            # `losses["total"].backward()`, `loss = res[0]` backpropagated: an element of the value
            # of a name (a call's dict or tuple of results), which then holds history, as the
            # other results of the call that produced `loss` do (`_mark`)
            return expr.value.value, False  # type: ignore[attr-defined]
        if kind is cst.Call and type(expr.func) is cst.Attribute:  # type: ignore[attr-defined]
            method = expr.func.attr.value  # type: ignore[attr-defined]
            positional = [a.value for a in expr.args if a.keyword is None]  # type: ignore[attr-defined]
            if method in evidence.SCALING_METHODS and len(positional) == 1:
                expr = positional[0]
                continue
            if method in evidence.REDUCING_METHODS:
                scalar = scalar and method not in ("mean", "sum")
                expr = expr.func.value  # type: ignore[attr-defined]
                continue
            return None, False
        if kind is cst.BinaryOperation:
            left, right = expr.left, expr.right  # type: ignore[attr-defined]
            operator = type(expr.operator)  # type: ignore[attr-defined]
            if operator in (cst.Divide, cst.Multiply) and _is_number(right):
                expr = left
                continue
            if operator is cst.Divide and type(right) in (cst.Name, cst.Attribute):
                expr = left  # `loss / accumulation_steps`
                continue
            if operator is cst.Multiply and _is_number(left):
                expr = right
                continue
        return None, False


def _constant_key(subscript: cst.Subscript) -> bool:
    """`d["loss"]`, `res[0]`: one element taken by a literal key or index."""
    if len(subscript.slice) != 1 or type(subscript.slice[0].slice) is not cst.Index:
        return False
    return type(subscript.slice[0].slice.value) in (cst.Integer, cst.SimpleString)  # type: ignore[attr-defined]


def _is_number(expr: cst.BaseExpression) -> bool:
    return type(expr) in (cst.Integer, cst.Float)


def _backpropagated_return(value: cst.BaseExpression) -> Optional[str]:
    """The name a framework backpropagates of a hook's return: `return loss`, `return {"loss": loss, ...}`."""
    if type(value) is cst.Name:
        return value.value  # type: ignore[attr-defined]
    if type(value) is cst.Dict:
        for element in value.elements:  # type: ignore[attr-defined]
            key = getattr(element, "key", None)
            if type(key) is cst.SimpleString and key.evaluated_value == "loss" and type(element.value) is cst.Name:  # type: ignore[union-attr]
                return element.value.value  # type: ignore[attr-defined]
    return None


def _names_attribute(target: cst.BaseExpression, attr: str) -> bool:
    return type(target) is cst.Attribute and target.attr.value == attr  # type: ignore[attr-defined]


def _chain(sites: dict, name: str) -> list[tuple[str, Union[cst.Assign, cst.AugAssign]]]:
    """The binding of a backpropagated name, and through `loss = raw_loss / accumulation_steps` (a
    scaled, reduced or aliased form of another name: `_subject_name`) the binding of that name too,
    as (name, assignment) pairs: the same computation, with the same history."""
    found: list[tuple[str, cst.Assign]] = []
    for _ in range(4):
        site = sites.get(name)
        if site is None:
            break
        found.append((name, site))
        if type(site) is not cst.Assign or len(site.targets) != 1 or type(site.targets[0].target) is not cst.Name:
            break
        name = _subject_name(site.value)[0]  # type: ignore[assignment]
        if name is None:
            break
    return found


# Methods of accelerate's `Accelerator` and Lightning's `Fabric` that place what they are given.
_PLACING_METHODS = frozenset({"prepare", "prepare_model", "prepare_data_loader", "setup", "setup_module", "setup_dataloaders"})


def _names_launcher(receiver: cst.BaseExpression) -> bool:
    """`accelerator`, `self.accelerator`, `fabric`: an accelerate `Accelerator` or a Lightning `Fabric`."""
    name = receiver.value if type(receiver) is cst.Name else receiver.attr.value if type(receiver) is cst.Attribute else ""  # type: ignore[attr-defined]
    return "accelerator" in name.lower() or "fabric" in name.lower()


def _function_bound(body: Iterable[cst.CSTNode], name: str) -> Optional[cst.FunctionDef]:
    """The `def name` that `body` (a module's or class's statements) leaves bound to `name`: its
    only binding of the name.  None where anything else binds it there too (a later
    `from utils import summarize as evaluate`, a second `def`, an assignment): which one a call
    reaches is then not this `def`'s to say."""
    found: Optional[cst.FunctionDef] = None
    for statement in body:
        for node in own_scope(statement):
            if name not in exact_names_bound_by(node):
                continue
            if type(node) is not cst.FunctionDef or found is not None:
                return None
            found = node  # type: ignore[assignment]
    return found


def _parameters_of(function: Optional[cst.FunctionDef]) -> set[str]:
    return parameter_names(function) if function is not None else set()
