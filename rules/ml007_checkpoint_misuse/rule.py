"""ML007 checkpoint-misuse."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis import Kind
from memlint.analysis.call_edits import append_keyword
from memlint.analysis.inventory import inventory
from memlint.analysis.iteration import names_in
from memlint.analysis.module_changes import module_changes
from memlint.analysis.precision_api import has_star_args, keyword
from memlint.analysis.versions import is_version_check
from memlint.analysis.walk import code_descendants, self_attr
from memlint.diagnostics import Severity
from memlint.rule import Harness, Invalid, Rule, Valid
from memlint.rules.ml007_checkpoint_misuse.meta import META

_CHECKPOINT = frozenset({"torch.utils.checkpoint.checkpoint"})
_CHECKPOINT_SEQUENTIAL = frozenset({"torch.utils.checkpoint.checkpoint_sequential"})
_CHECKPOINT_MODULE = "torch.utils.checkpoint"
# The keywords each function takes for itself; any other keyword is meant for the checkpointed
# function, which only the non-reentrant implementation passes on (`checkpoint(fn, x, mode=mode)`).
_OWN_KEYWORDS = {
    "checkpoint": frozenset({"function", "use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug", "early_stop"}),
    "checkpoint_sequential": frozenset({"functions", "segments", "input", "use_reentrant", "preserve_rng_state"}),
}
# Calls that build a callable from their arguments: `checkpoint(partial(block, mask=m), x)`.
_CALLABLE_FACTORIES = frozenset({"partial", "create_custom_forward", "custom_forward", "wrapper"})


class CheckpointMisuse(Rule):
    """
    ## What it does
    Finds activation-checkpointing calls that crash or fall back to the old implementation. They are
    calls of `torch.utils.checkpoint.checkpoint` and `checkpoint_sequential` whose function argument
    is a call result instead of a callable (`checkpoint(self.conv_1(x), x)`) or that do not pass
    `use_reentrant`, and calls of the module `torch.utils.checkpoint` itself.

    Names are resolved through imports (`from torch.utils.checkpoint import checkpoint as ckpt`);
    any other function called `checkpoint` (a project's own, DeepSpeed's) is never reported. A call
    whose arguments are forwarded with `**kwargs` is not reported for `use_reentrant`, since the
    option may be among them. Nor is a call without `use_reentrant=` that is compatibility code for
    PyTorch before 1.11, which has no such keyword (behind a version check, or in the `except` of a
    `try` that passed it), checkpointing that is off unless asked for (behind a flag that is a
    parameter defaulting to False: `memory_efficient=False` stored as `self.memory_efficient`; a
    literal `self.gradient_checkpointing = False` that a framework method switches on still counts as
    checkpointing), or a call guarded by a `requires_grad` test (the reentrant
    implementation's failure, a block whose inputs need no gradient, is excluded by the code); a
    function whose every call in the file is so guarded counts as guarded. Nor is a call without
    `use_reentrant=` that passes a keyword the checkpoint function does not take for itself
    (`checkpoint(run, x, mode=mode)`, meant for the checkpointed function): the reentrant
    implementation rejects it (`ValueError: Unexpected keyword arguments`) before anything is saved,
    and `use_reentrant=False` would hand it on to a function that may not take it.

    ## Why is this bad?
    `checkpoint(self.conv_1(x), x)` runs the layer eagerly, storing its activations as usual, and then
    raises `TypeError: 'Tensor' object is not callable`: nothing is checkpointed. Calling the module
    (`torch.utils.checkpoint(fn, x)`) raises `TypeError: 'module' object is not callable`.

    Without `use_reentrant=`, current PyTorch warns and uses the reentrant implementation, which
    needs at least one input with `requires_grad=True` (otherwise the checkpointed block gets no
    gradients) and peaked higher when measured.

    ## Example
    ```python
    from torch.utils.checkpoint import checkpoint

    def forward(self, x):
        x = checkpoint(self.conv_1(x), x)
        x = checkpoint(self.conv_2, x)
        return x
    ```

    ## Use instead
    ```python
    from torch.utils.checkpoint import checkpoint

    def forward(self, x):
        x = checkpoint(self.conv_1, x, use_reentrant=False)
        x = checkpoint(self.conv_2, x, use_reentrant=False)
        return x
    ```

    ## Fix safety
    Passing the layer instead of its result (`checkpoint(self.conv_1(x), x)` ->
    `checkpoint(self.conv_1, x, use_reentrant=False)`) is safe when `self.conv_1` is a layer that
    `__init__` builds (a torch layer or a module class of the file) and nothing rebinds: the original
    call always raises, and the fixed one runs the layer on the same inputs. Otherwise it is unsafe:
    a callable that may return a module (`checkpoint(self.pick(x), x)` where `pick` returns a layer
    works as written, and the fix would make `forward` return the layer). A method of the class is
    not reported. It is offered only when the inner call's arguments are exactly the arguments passed
    after it.
    Adding `use_reentrant=False` to a working call is unsafe: with the reentrant implementation a
    block whose inputs do not require grad gets no parameter gradients, with the non-reentrant one it
    does, so training can change. Calling the module itself has no automatic fix.

    ## Measured effect
    `fixtures/ml007_checkpoint_reentrant.py`, PyTorch 2.13 on CPU, exact tensor-storage tracker, `memlint confirm fixtures` (docs/measured-savings.md): adding `use_reentrant=False`
    lowers the script's peak from 24,441,944 B to 23,916,632 B (513 KiB, 2.1%), same result. On the
    spec's larger benchmark (8 blocks of 2×Linear(512)+ReLU, batch 8192): 321 MiB without
    checkpointing, 227 MiB with `use_reentrant=True`, 210 MiB with `use_reentrant=False`.
    `checkpoint(self.conv_1(x), x)` saves nothing: it raises `TypeError: 'Tensor' object is not
    callable` after the layer has already run.
    """

    meta = META
    severity = Severity.ERROR
    fix_safety = "mixed"

    VALID = [
        Valid(
            """
import torch
from torch.utils.checkpoint import checkpoint
def forward(self, x):
    return checkpoint(self.block, x, use_reentrant=False)
"""
        ),
        Valid(  # a project's own function called checkpoint
            """
import torch
def checkpoint(state, path):
    torch.save(state, path)
checkpoint(model.state_dict(), "model.pt")
"""
        ),
        Valid(  # DeepSpeed's checkpoint is not torch's
            """
import torch
from deepspeed.checkpointing import checkpoint
def forward(self, x):
    return checkpoint(self.block, x)
"""
        ),
        Valid(  # a factory that returns a callable
            """
import torch
import torch.utils.checkpoint
from functools import partial
def forward(self, x, mask):
    return torch.utils.checkpoint.checkpoint(partial(self.block, mask=mask), x, use_reentrant=False)
"""
        ),
        Valid(  # use_reentrant may be among the forwarded keyword arguments
            """
import torch
from torch.utils.checkpoint import checkpoint
def run(fn, *args, **kwargs):
    return checkpoint(fn, *args, **kwargs)
"""
        ),
        Valid(  # checkpoint_sequential takes a Sequential, which may well be built by a call
            """
import torch
from torch.utils.checkpoint import checkpoint_sequential
def forward(self, x):
    return checkpoint_sequential(nn.Sequential(*self.layers), 2, x, use_reentrant=False)
"""
        ),
        Valid(  # rebound after the import: not torch's checkpoint any more
            """
import torch
from torch.utils.checkpoint import checkpoint
def forward(self, x):
    checkpoint = self.saver
    return checkpoint(self.block(x), x)
"""
        ),
        Valid(  # the branch for PyTorch before 1.11, which has no use_reentrant (a version check guards it)
            """
import torch
from packaging import version
from torch.utils.checkpoint import checkpoint
def forward(self, x):
    if version.parse(torch.__version__) < version.parse("1.11"):
        return checkpoint(self.block, x)
    return checkpoint(self.block, x, use_reentrant=False)
"""
        ),
        Valid(  # the fallback after trying the new keyword
            """
import torch
from torch.utils.checkpoint import checkpoint
def forward(self, x):
    try:
        return checkpoint(self.block, x, use_reentrant=False)
    except TypeError:
        return checkpoint(self.block, x)
"""
        ),
        Valid(  # checkpointing off unless asked for: a flag that defaults to False, in a helper it guards
            """
import torch.nn as nn
import torch.utils.checkpoint as cp
class DenseLayer(nn.Module):
    def __init__(self, growth, memory_efficient=False):
        super().__init__()
        self.memory_efficient = memory_efficient
    def call_checkpoint_bottleneck(self, inputs):
        return cp.checkpoint(self.bn_function, *inputs)
    def forward(self, inputs):
        if self.memory_efficient:
            return self.call_checkpoint_bottleneck(inputs)
        return self.bn_function(*inputs)
"""
        ),
        Valid(  # guarded by requires_grad: the case the reentrant implementation gets wrong cannot happen
            """
import torch
from torch.utils.checkpoint import checkpoint
def forward(self, x):
    if self.training and x.requires_grad:
        x = checkpoint(self.block, x)
    return x
"""
        ),
    ]

    VALID += [
        Valid(  # a keyword for the checkpointed function: the reentrant path raises, and the fix would pass it on
            """
import torch
def encode(self, hidden, mask, mode):
    def wrap(layer):
        def run(*inputs):
            return layer(*inputs)
        return run
    return torch.utils.checkpoint.checkpoint(wrap(self.layer), hidden, mask, mode=mode)
"""
        ),
        Valid(  # the same for checkpoint_sequential
            """
import torch
from torch.utils.checkpoint import checkpoint_sequential
def forward(self, x):
    return checkpoint_sequential(self.blocks, 2, x, scale=0.5)
"""
        ),
        Valid(  # a method that returns a layer: checkpoint runs the layer, as written (issue 25)
            """
import torch.nn as nn
from torch.utils.checkpoint import checkpoint
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 3, 1), nn.Conv2d(3, 3, 3, padding=1)])
    def pick(self, x):
        return self.convs[0] if x.shape[-1] < 8 else self.convs[1]
    def forward(self, x):
        return checkpoint(self.pick(x), x, use_reentrant=False)
""",
            harness=Harness(setup="import torch", then="result = Net()(torch.randn(1, 3, 4, 4, requires_grad=True))"),
        ),
    ]

    INVALID = [
        Invalid(  # the source articles' form
            """
import torch.nn as nn
from torch.utils.checkpoint import checkpoint
class Net(nn.Module):
    def forward(self, x):
        x = checkpoint(self.conv_1(x), x)
        return x
""",
            line=5,
            column=13,
            message="'Tensor' object is not callable",
            unsafe=True,  # what `self.conv_1` is cannot be seen here
            fixed="""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint
class Net(nn.Module):
    def forward(self, x):
        x = checkpoint(self.conv_1, x, use_reentrant=False)
        return x
""",
        ),
        Invalid(  # a layer known from __init__, through a module alias
            """
import torch.nn as nn
import torch.utils.checkpoint as cp
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 8)
    def forward(self, x):
        return cp.checkpoint(self.body(x), x, use_reentrant=False)
""",
            line=8,
            column=16,
            fixed="""
import torch.nn as nn
import torch.utils.checkpoint as cp
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 8)
    def forward(self, x):
        return cp.checkpoint(self.body, x, use_reentrant=False)
""",
            harness=Harness(
                setup="import torch",
                then="model = Net()\nx = torch.randn(2, 8, requires_grad=True)\nout = model(x)\nout.sum().backward()\n"
                "result = (out, x.grad, model.body.weight.grad)",
                raises="TypeError: 'Tensor' object is not callable",
            ),
        ),
        Invalid(  # calling the module itself
            """
import torch
import torch.utils.checkpoint
def forward(self, x):
    return torch.utils.checkpoint(self.block, x)
""",
            line=4,
            column=12,
            message="is a module",
        ),
        Invalid(  # use_reentrant missing: warning, unsafe fix
            """
import torch
from torch.utils.checkpoint import checkpoint as ckpt
def forward(self, x):
    return ckpt(self.segment0, x)
""",
            line=4,
            column=12,
            unsafe=True,
            message="use_reentrant",
            fixed="""
import torch
from torch.utils.checkpoint import checkpoint as ckpt
def forward(self, x):
    return ckpt(self.segment0, x, use_reentrant=False)
""",
        ),
        Invalid(  # a keyword checkpoint takes for itself is no reason to stay silent
            """
import torch
from torch.utils.checkpoint import checkpoint
def forward(self, x):
    return checkpoint(self.block, x, preserve_rng_state=False)
""",
            line=4,
            column=12,
            unsafe=True,
            message="use_reentrant",
            fixed="""
import torch
from torch.utils.checkpoint import checkpoint
def forward(self, x):
    return checkpoint(self.block, x, preserve_rng_state=False, use_reentrant=False)
""",
        ),
        Invalid(  # checkpoint_sequential, multi-line with a trailing comma
            """
import torch
from torch.utils.checkpoint import checkpoint_sequential
def forward(self, x):
    return checkpoint_sequential(
        self.conv,
        2,
        x,
    )
""",
            line=4,
            column=12,
            unsafe=True,
            fixed="""
import torch
from torch.utils.checkpoint import checkpoint_sequential
def forward(self, x):
    return checkpoint_sequential(
        self.conv,
        2,
        x,
        use_reentrant=False,
    )
""",
        ),
        Invalid(  # behind a flag that defaults to True: checkpointing is on
            """
import torch.nn as nn
from torch.utils.checkpoint import checkpoint
class Block(nn.Module):
    def __init__(self, use_checkpoint=True):
        super().__init__()
        self.use_checkpoint = use_checkpoint
    def forward(self, x):
        if self.use_checkpoint:
            return checkpoint(self.body, x)
        return self.body(x)
""",
            line=9,
            column=20,
            unsafe=True,
            message="use_reentrant",
            fixed="""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint
class Block(nn.Module):
    def __init__(self, use_checkpoint=True):
        super().__init__()
        self.use_checkpoint = use_checkpoint
    def forward(self, x):
        if self.use_checkpoint:
            return checkpoint(self.body, x, use_reentrant=False)
        return self.body(x)
""",
        ),
        Invalid(  # a literal False that a framework method switches on (Hugging Face's gradient_checkpointing)
            """
import torch
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.gradient_checkpointing = False
    def forward(self, x):
        if self.gradient_checkpointing and self.training:
            return torch.utils.checkpoint.checkpoint(self.block, x)
        return self.block(x)
""",
            line=9,
            column=20,
            unsafe=True,
            fixed="""
import torch
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.gradient_checkpointing = False
    def forward(self, x):
        if self.gradient_checkpointing and self.training:
            return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False)
        return self.block(x)
""",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._guards: list[cst.BaseExpression] = []  # tests of the conditional expressions around the node
        self._pending: list[tuple[cst.Call, str, Optional[tuple]]] = []  # use_reentrant candidates
        self._calls: dict[tuple, list[bool]] = {}  # the file's functions -> is each call of it guarded?
        self._guard_answers: dict[int, bool] = {}  # id(test) -> does it guard checkpointing (_guarded)
        self._attribute_answers: dict[tuple[int, str], bool] = {}  # (id(class), attribute) -> _attribute_defaults_false

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._guards.append(node.test)

    def leave_IfExp(self, node: cst.IfExp) -> None:
        self._guards.pop()

    def visit_Call(self, node: cst.Call) -> None:
        callee = self._callee_key(node)
        if callee is not None:
            self._calls.setdefault(callee, []).append(self._guarded())
        qualified = self.ctx.resolve(node.func)
        if qualified == _CHECKPOINT_MODULE:
            self.report(
                node,
                "`torch.utils.checkpoint` is a module, not a function: calling it raises "
                "`TypeError: 'module' object is not callable`; call `torch.utils.checkpoint.checkpoint(fn, ...)`",
                severity=Severity.ERROR,
            )
            return
        if qualified in _CHECKPOINT and self._check_callable(node):
            return
        if qualified in _CHECKPOINT | _CHECKPOINT_SEQUENTIAL:
            self._check_use_reentrant(node, qualified.rsplit(".", 1)[1])

    def _check_callable(self, node: cst.Call) -> bool:
        """Report `checkpoint(layer(x), x)`; True when reported."""
        if not node.args or node.args[0].keyword is not None or node.args[0].star:
            return False
        inner = node.args[0].value
        if not isinstance(inner, cst.Call) or not _is_tensor_result(inner, node, self.ctx):
            return False
        module = self.ctx.module
        layer = module.code_for_node(inner.func)
        message = (
            f"`{module.code_for_node(inner)}` runs the layer eagerly and passes its result (a tensor) to "
            "checkpoint, which raises `TypeError: 'Tensor' object is not callable`: nothing is checkpointed; "
            f"pass the layer itself: `checkpoint({layer}, ...)`"
        )
        fix = None
        if _arguments_repeated(inner, node):
            fixed = node.with_deep_changes(node.args[0], value=inner.func)
            if keyword(fixed, "use_reentrant") is None and not has_star_args(fixed):
                fixed = append_keyword(fixed, "use_reentrant", cst.Name("False"))
            fix = self.replace(node, fixed, f"Pass `{layer}` itself to checkpoint", safe=_built_layer(inner.func, self.ctx))
        self.report(node, message, fix, severity=Severity.ERROR)
        return True

    def _check_use_reentrant(self, node: cst.Call, function: str) -> None:
        if keyword(node, "use_reentrant") is not None:
            return
        if any(arg.star == "**" for arg in node.args):
            return  # it may be among the forwarded keyword arguments
        if _passes_foreign_keyword(node, function):
            # `checkpoint(custom_forward, x, mode=mode)`: without use_reentrant torch takes the reentrant
            # path, which raises `ValueError: Unexpected keyword arguments` before it saves anything, so
            # no memory claim holds; and `use_reentrant=False` would hand `mode=` to a function that
            # may not take it.  What the call needs is not ours to say.
            return
        if self._guarded():
            return
        self._pending.append((node, function, self.ctx.function_key))

    def _guarded(self) -> bool:
        """Is the code being visited compatibility code for an older PyTorch (behind a version check,
        or in an `except` after a try of the new API), checkpointing that is off unless asked for (behind
        a flag that defaults to False), or guarded by a `requires_grad` test (the case the reentrant
        implementation gets wrong is excluded by the code itself)?"""
        frame = self.ctx.frame
        if frame.handlers:
            return True
        tests = [*self._guards, *(node.test for node, _ in frame.conditions)]
        return any(self._guards_checkpointing(t) for t in tests)

    def _guards_checkpointing(self, test: cst.BaseExpression) -> bool:
        # Asked for every call under the same `if` (each call site of the file's functions): a test
        # sits in one function and class, so its answer is kept by node.
        known = self._guard_answers.get(id(test))
        if known is None:
            known = self._guard_answers[id(test)] = (
                is_version_check(test) or _tests_requires_grad(test) or self._off_by_default(test)
            )
        return known

    def _off_by_default(self, test: cst.BaseExpression) -> bool:
        """`if memory_efficient:` / `if self.memory_efficient and ...:` where the flag is a parameter
        that defaults to False (of this function, or of `__init__` stored on `self`)."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._off_by_default(test.left) or self._off_by_default(test.right)
        if isinstance(test, cst.Name):
            function = self.ctx.function_node
            return function is not None and _parameter_defaults_false(function, test.value)
        attribute = self_attr(test)
        if attribute is None:
            return False
        class_node = next((f.node for f in reversed(self.ctx.frames) if f.kind == "class"), None)
        if class_node is None:
            return False
        key = (id(class_node), attribute)  # `if self.training:` in every method: one walk of the class
        known = self._attribute_answers.get(key)
        if known is None:
            known = self._attribute_answers[key] = _attribute_defaults_false(class_node, attribute)  # type: ignore[arg-type]
        return known

    def _callee_key(self, node: cst.Call) -> Optional[tuple]:
        """The file's function a call may run, as the Context keys them."""
        func = node.func
        if isinstance(func, cst.Name) and self.ctx.resolve(func) is None:
            return ("func", func.value)
        class_name = self.ctx.class_name
        if class_name is not None and self_attr(func) is not None:
            return ("method", class_name, func.attr.value)  # type: ignore[attr-defined]
        return None

    def finish(self, facts) -> None:
        for node, function, key in self._pending:
            calls = self._calls.get(key, []) if key is not None else []
            if calls and all(calls):
                continue  # every call of the function that checkpoints is guarded as above
            self._report_use_reentrant(node, function)

    def _report_use_reentrant(self, node: cst.Call, function: str) -> None:
        fix = self.replace(
            node,
            append_keyword(node, "use_reentrant", cst.Name("False")),
            "Pass `use_reentrant=False`",
            safe=False,
        )
        self.report(
            node,
            f"`{function}` without `use_reentrant=`: PyTorch warns and falls back to the reentrant "
            "implementation, which gives no gradients to a block whose inputs do not require grad and "
            "peaked higher when measured (227 MiB vs 210 MiB); pass `use_reentrant=False`",
            fix,
            severity=Severity.WARNING,
        )


def _passes_foreign_keyword(node: cst.Call, function: str) -> bool:
    """Does the call pass a keyword that `function` (checkpoint, checkpoint_sequential) does not take
    for itself?"""
    own = _OWN_KEYWORDS[function]
    return any(arg.keyword is not None and arg.keyword.value not in own for arg in node.args)


def _is_tensor_result(inner: cst.Call, outer: cst.Call, ctx) -> bool:
    """Is the first argument of checkpoint the result of running a layer, not a callable?"""
    func = inner.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
    if name is None or name in _CALLABLE_FACTORIES or ctx.resolve(func) is not None:
        return False
    if ctx.value_of(func).kind is Kind.FUNCTION or _own_method(func, ctx):
        return False  # a helper or a method of this file: it may return a callable (a module)
    if ctx.value_of(inner).kind is Kind.TENSOR:
        return True
    return _arguments_repeated(inner, outer)


def _own_method(func: cst.BaseExpression, ctx) -> bool:
    """`self.pick` where the enclosing class defines `pick`: a method, which may return a module."""
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
        return False
    methods = ctx.memo(("ml007.methods", ctx.class_name), lambda: _methods_of(ctx.module, ctx.class_name))
    return func.attr.value in methods


def _methods_of(module: cst.Module, class_name: Optional[str]) -> frozenset[str]:
    for node in code_descendants(module):
        if type(node) is cst.ClassDef and node.name.value == class_name:
            return frozenset(s.name.value for s in node.body.body if type(s) is cst.FunctionDef)
    return frozenset()


def _built_layer(func: cst.BaseExpression, ctx) -> bool:
    """Is `func` certainly a layer, so that calling it gives a tensor and passing it to checkpoint
    runs the same computation: `self.<attr>` that `__init__` builds as a torch layer or a module class
    of this file, and that nothing in the file binds again?  Anything else (a method, a callable
    attribute of unknown origin) may return a module, which checkpoint would run as it was."""
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
        return False
    described = inventory(ctx).get(ctx.class_name or "")
    layer = described.attributes.get(func.attr.value) if described is not None else None
    return layer is not None and layer.kind is not None and layer.kind != "Parameter" and module_changes(ctx).bound_once(func.attr.value, ctx.class_name)


def _arguments_repeated(inner: cst.Call, outer: cst.Call) -> bool:
    """`checkpoint(layer(x, y), x, y)`: the inner call takes exactly the inputs passed after it."""
    inner_args = inner.args
    rest = outer.args[1:]
    positional_rest = [a for a in rest if a.keyword is None and not a.star]
    if not inner_args or any(a.keyword is not None or a.star for a in inner_args):
        return False
    if len(positional_rest) != len(inner_args) or len(positional_rest) != len([a for a in rest if a.keyword is None]):
        return False
    code = _code
    return all(code(a.value) == code(b.value) for a, b in zip(inner_args, positional_rest))


def _code(expr: cst.CSTNode) -> Optional[str]:
    return cst.Module(body=[]).code_for_node(expr)


def _tests_requires_grad(test: cst.BaseExpression) -> bool:
    """`if x.requires_grad:`, `if any(t.requires_grad for t in inputs):`, `torch.is_grad_enabled()`."""
    return any(name in ("requires_grad", "is_grad_enabled") for name in names_in(test))


def _parameter_defaults_false(function: cst.FunctionDef, name: str) -> bool:
    params = [*function.params.params, *function.params.kwonly_params]
    return any(p.name.value == name and isinstance(p.default, cst.Name) and p.default.value == "False" for p in params)


def _attribute_defaults_false(class_node: cst.ClassDef, attribute: str) -> bool:
    """Every `self.<attribute> = ...` in the class's methods assigns a parameter of that method that
    defaults to False (at least one does): an option of the module's own API, off unless asked for.
    A literal `self.gradient_checkpointing = False` that a framework method switches on is not."""
    found = False
    for method in class_node.body.body:
        if not isinstance(method, cst.FunctionDef):
            continue
        for node in (n for n in code_descendants(method.body) if type(n) is cst.Assign):
            for target in node.targets:
                if self_attr(target.target) != attribute:
                    continue
                value = node.value
                if isinstance(value, cst.Name) and _parameter_defaults_false(method, value.value):
                    found = True
                else:
                    return False
    return found
