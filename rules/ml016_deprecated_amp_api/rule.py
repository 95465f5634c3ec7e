"""ML016 deprecated-amp-api."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

import libcst as cst

from memlint.analysis.call_edits import attribute_chain, positional_to_keywords, prepend_argument
from memlint.analysis.precision_api import AUTOCAST, DEPRECATED_AMP, GRAD_SCALERS
from memlint.analysis.versions import is_version_check
from memlint.diagnostics import Applicability, Severity
from memlint.rule import Harness, Invalid, NodeFix, Rule, Valid
from memlint.rules.ml016_deprecated_amp_api.meta import META

Import = Union[cst.Import, cst.ImportFrom]

# The examples' harness (tests/test_fix_execution.py), on the CPU: `torch.amp` for "cuda" warns and
# disables itself there, as the deprecated classes do; what is compared is what the code computes,
# what the scaler reports, and what other modules can import from the example.
_CPU_MODEL = """
import torch
model = torch.nn.Linear(2, 2)
x = torch.ones(1, 2)
"""
_SCALER = "result = (scaler.is_enabled(), scaler.state_dict())"
_STAR_IMPORT = """
import sys, types
module = types.ModuleType("amp_helpers")
module.__dict__.update(globals())
sys.modules["amp_helpers"] = module
imported = {}
exec("from amp_helpers import *", imported)
result = (sorted(k for k in imported if not k.startswith("__")), imported["run"](torch.nn.Linear(2, 2), torch.ones(1, 2)))
"""


@dataclass
class _ImportStatement:
    """A module-level import line that binds names the fix may make unused."""

    line: cst.SimpleStatementLine
    statement: Import
    aliases: dict[str, cst.ImportAlias] = field(default_factory=dict)  # local name -> alias


@dataclass
class _Site:
    call: cst.Call
    old: str  # deprecated qualified name
    new_call: Optional[cst.Call]  # the rewritten call, given a name bound to the torch module
    torch_name: Optional[str]  # the local name of the torch module at the call, if any
    local: Optional[str]  # the imported name the call goes through (`autocast`, `amp`), if any
    # A call through a name assigned the class (`with amp_cm():`): where that name was assigned it
    # (Context.alias_written_at); () for a call that writes the class itself.
    alias_of: tuple[cst.BaseExpression, ...] = ()


class DeprecatedAmpApi(Rule):
    """
    ## What it does
    Finds calls of the deprecated mixed-precision constructors of `torch.cuda.amp` and `torch.cpu.amp`.
    They are `torch.cuda.amp.autocast(...)`, `torch.cuda.amp.GradScaler(...)`,
    `torch.cpu.amp.autocast(...)` and `torch.cpu.amp.GradScaler(...)`, however they are imported (`from torch.cuda.amp import autocast, GradScaler`,
    `from torch.cuda import amp`), and those classes used as values, to be called later: bound to a
    name (`amp_cm = autocast if args.amp else contextlib.nullcontext`), passed as an argument or
    returned (not when only tested with `isinstance`). Such a class assigned to a name is reported
    once, where it is assigned: a later call or use of that name (`with amp_cm():`,
    `train(amp_cm)`) writes nothing deprecated again. Where the assignment is not reported (in an
    `except` or behind a version check), the calls through the name are, unless the same scope also
    binds the name to the current class (`try: amp_cm = torch.amp.autocast` / `except
    AttributeError: amp_cm = torch.cuda.amp.autocast`: a real fallback). A name imported in a `try` whose `except` only
    defines a stand-in for old PyTorch (`except: class GradScaler: ...`) is the deprecated class: the
    import is what current PyTorch runs. A project's own `autocast` is never reported, nor is a call that
    is a compatibility fallback for old PyTorch: behind a version check
    (`... if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()`) or in the `except` branch of
    a `try` that used the new API first.

    ## Why is this bad?
    They are deprecated in current PyTorch (each call emits a `FutureWarning`) in favour of the
    device-generic `torch.amp.autocast("cuda", ...)` and `torch.amp.GradScaler("cuda", ...)`, and
    will be removed. The behaviour, and the memory saved by mixed precision, is the same.

    ## Example
    ```python
    from torch.cuda.amp import autocast, GradScaler
    scaler = GradScaler()
    with autocast():
        loss = model(x)
    ```

    ## Use instead
    ```python
    import torch
    scaler = torch.amp.GradScaler("cuda")
    with torch.amp.autocast("cuda"):
        loss = model(x)
    ```

    ## Fix safety
    Safe: `torch.cuda.amp.autocast(args)` is `torch.amp.autocast("cuda", args)` (positional arguments are
    passed by keyword, because the two constructors order them differently), and the same holds for
    GradScaler and for the CPU variants. Imports are fixed along with the calls: a name imported
    from `torch.cuda.amp` (or the `amp` module itself) whose every use is rewritten is removed from
    its import, and an import line left empty is removed, or becomes `import torch` when the file
    did not import torch yet. All calls that go through one import line are fixed together, so every
    finding of that line carries the same fix. An imported name stays imported when other code may
    import it from this module: it is in `__all__`, another linted file imports it from here or
    star-imports this module, or the file is a package's `__init__.py`. The fix is unsafe when the
    file names a deprecated class other than to call it (`isinstance(scaler, GradScaler)`, a
    subclass): the new object is an instance of the `torch.amp` class, not of its deprecated
    subclass. No fix for a class used as a value: `functools.partial(torch.amp.autocast, "cuda")`
    would take positional arguments in another order, and is no class. No fix for a call with `*args`, or when the import sits in a block (`try:`) or under a
    comment that removing it would disturb.

    ## Measured effect
    None on memory: the replacement does exactly the same thing without the deprecation warning.
    """

    meta = META
    severity = Severity.INFO
    fix_safety = "mixed"

    VALID = [
        Valid(
            """
import torch
scaler = torch.amp.GradScaler("cuda")
with torch.autocast("cuda", dtype=torch.bfloat16):
    out = model(x)
"""
        ),
        Valid(  # a project's own autocast
            """
import torch
from mytools.amp import autocast
with autocast():
    out = model(x)
"""
        ),
        Valid(  # a fallback for old PyTorch behind a version check
            """
import torch
scaler = torch.amp.GradScaler(device=device) if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()
"""
        ),
        Valid(  # a fallback in the except branch
            """
import torch
try:
    scaler = torch.amp.GradScaler(device=device)
except (AttributeError, TypeError):
    scaler = torch.cuda.amp.GradScaler()
"""
        ),
        Valid(  # the new API imported by name
            """
import torch
from torch.amp import autocast, GradScaler
with autocast("cuda"):
    out = model(x)
"""
        ),
        Valid(  # named only to test an instance: no deprecated constructor runs
            """
import torch
from torch.cuda.amp import GradScaler
def is_scaler(obj):
    return isinstance(obj, GradScaler)
"""
        ),
        Valid(  # a fallback bound in the except branch, called later through the name: no new reference
            """
import torch
try:
    amp_cm = torch.amp.autocast
    device_args = ("cuda",)
except AttributeError:
    amp_cm = torch.cuda.amp.autocast
    device_args = ()
with amp_cm(*device_args):
    out = model(x)
"""
        ),
    ]

    INVALID = [
        Invalid(  # bound in the `except` of an unrelated import: no fallback, so the call through it is reported
            """
import torch
try:
    from apex import amp
    amp_cm = None
except ImportError:
    amp_cm = torch.cuda.amp.autocast
def train(model, x):
    with amp_cm():
        return model(x)
""",
            line=8,
            column=10,
            message="deprecated",
        ),
        Invalid(  # bound in the new-PyTorch branch of a version check: the call through it runs the deprecated class
            """
import contextlib
import torch
if torch.__version__ < "1.6":
    amp_cm = contextlib.nullcontext
else:
    amp_cm = torch.cuda.amp.autocast
def train(model, x):
    with amp_cm():
        return model(x)
""",
            line=8,
            column=10,
            message="deprecated",
        ),
        Invalid(  # fully qualified: only the call changes
            """
import torch
with torch.cuda.amp.autocast(enabled=use_amp):
    out = model(x)
""",
            line=2,
            column=6,
            message='torch.amp.autocast("cuda"',
            fixed="""
import torch
with torch.amp.autocast("cuda", enabled=use_amp):
    out = model(x)
""",
            harness=Harness(setup=_CPU_MODEL + "use_amp = True", then="result = out"),
        ),
        Invalid(  # bound to a name, uncalled, and called later through it (TorchSSL): reported without a fix
            """
import contextlib
import torch
from torch.cuda.amp import autocast
amp_cm = autocast if args.amp else contextlib.nullcontext
with amp_cm():
    out = model(x)
""",
            line=4,
            column=10,
            message="called later",
        ),
        Invalid(  # bound to a local name, then called and passed on through it: reported once, where it is written
            """
import contextlib
import torch
def main(args):
    amp_autocast = contextlib.nullcontext
    if args.amp:
        amp_autocast = torch.cuda.amp.autocast
    with amp_autocast():
        out = model(x)
    train_one_epoch(model, amp_autocast)
    evaluate(model, amp_autocast)
""",
            line=6,
            column=24,
            message="called later",
        ),
        Invalid(  # torch not imported yet: the import line becomes `import torch`
            """
from torch.cuda.amp import GradScaler
model = Net().cuda()
scaler = GradScaler()
""",
            line=3,
            column=10,
            fixed="""
import torch
model = Net().cuda()
scaler = torch.amp.GradScaler("cuda")
""",
            harness=Harness(setup="import types\nNet = lambda: types.SimpleNamespace(cuda=lambda: None)", then=_SCALER),
        ),
        Invalid(  # torch already imported: the unused import line is removed
            """
import torch
from torch.cuda.amp import autocast
@autocast(True, torch.bfloat16)
def forward(x):
    return x
""",
            line=3,
            column=2,
            fixed="""
import torch
@torch.amp.autocast("cuda", enabled=True, dtype=torch.bfloat16)
def forward(x):
    return x
""",
            harness=Harness(then="result = forward(torch.ones(2))"),
        ),
        Invalid(  # a name with another use stays imported
            """
import torch
from torch.cuda.amp import GradScaler
scaler = GradScaler(init_scale=1024)
assert isinstance(scaler, GradScaler)
""",
            unsafe=True,  # the new scaler is not an instance of the deprecated subclass
            line=3,
            column=10,
            fixed="""
import torch
from torch.cuda.amp import GradScaler
scaler = torch.amp.GradScaler("cuda", init_scale=1024)
assert isinstance(scaler, GradScaler)
""",
            harness=Harness(then=_SCALER),
        ),
        Invalid(  # the amp module imported from torch.cpu
            """
import torch
from torch.cpu import amp
with amp.autocast():
    y = model(x)
""",
            line=3,
            column=6,
            fixed="""
import torch
with torch.amp.autocast("cpu"):
    y = model(x)
""",
            harness=Harness(setup=_CPU_MODEL, then="result = y"),
        ),
        Invalid(  # imported in a try, a dummy class only the fallback for PyTorch < 1.6 (RAFT): the import is what runs
            """
import torch
try:
    from torch.cuda.amp import GradScaler
except ImportError:
    class GradScaler:
        def scale(self, loss):
            return loss
def train(args):
    scaler = GradScaler(enabled=args.mixed_precision)
""",
            line=9,
            column=14,
            message="deprecated",
        ),
        Invalid(  # re-exported through `__all__`: the import stays (issue 25)
            """
import torch
from torch.cuda.amp import autocast
__all__ = ["autocast", "run"]
def run(model, x):
    with autocast():
        return model(x)
""",
            line=5,
            column=10,
            fixed="""
import torch
from torch.cuda.amp import autocast
__all__ = ["autocast", "run"]
def run(model, x):
    with torch.amp.autocast("cuda"):
        return model(x)
""",
            harness=Harness(then=_STAR_IMPORT),
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._imports: dict[str, _ImportStatement] = {}  # local name -> the module-level line binding it
        self._line: Optional[cst.SimpleStatementLine] = None
        self._in_import = False
        self._skip: set[int] = set()  # Name nodes that are not uses (attribute names, keywords)
        self._uses: dict[str, list[cst.Name]] = {}
        self._sites: list[_Site] = []
        self._guards: list[bool] = []  # enclosing conditional expressions: is each a version check?
        self._written_out: list[cst.Attribute] = []  # the deprecated classes named by their full path
        self._only_called: Optional[bool] = None  # _written_out_only_called, found once in finish
        # the classes used as values, uncalled, with where an alias used here was assigned (() if none)
        self._references: list[tuple[cst.BaseExpression, str, tuple[cst.BaseExpression, ...]]] = []
        # Assignments of a deprecated class skipped as a compatibility fallback, as (scope, name, value),
        # and the (scope, name) pairs bound to the current class (`amp_cm = torch.amp.autocast` in the
        # `try`): a fallback for a name its scope also binds to the current API settles that name.
        self._fallbacks: list[tuple[int, str, cst.BaseExpression]] = []
        self._current_api: set[tuple[int, str]] = set()

    # ------------------------------------------------------------------ what the file imports and uses

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._line = node

    def visit_Import(self, node: cst.Import) -> None:
        self._in_import = True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import = True

    def leave_Import(self, node: cst.Import) -> None:
        self._in_import = False
        self._note_import(node)

    def leave_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import = False
        self._note_import(node)

    def _note_import(self, node: Import) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        module_level = self.ctx.frame.kind == "module" and not self.ctx.in_loop
        line = self._line
        if not module_level or line is None or line.body[0] is not node or len(line.body) != 1:
            return
        if line not in self.ctx.module.body:
            return  # inside a block: removing the line could leave the block empty
        entry = _ImportStatement(line, node)
        for alias in node.names:
            local = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(local, cst.Name):
                entry.aliases[local.value] = alias
                self._imports[local.value] = entry

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._skip.add(id(node.attr))
        if self.ctx.resolve(node) in DEPRECATED_AMP:
            self._written_out.append(node)  # `torch.cuda.amp.GradScaler`, called or not

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def visit_Name(self, node: cst.Name) -> None:
        if self._in_import or id(node) in self._skip:
            return
        if node.value in self._imports:
            self._uses.setdefault(node.value, []).append(node)

    # ------------------------------------------------------------------ the calls

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._guards.append(is_version_check(node.test))
        self._note_reference(node.body)  # `autocast if args.amp else contextlib.nullcontext`
        self._note_reference(node.orelse)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._note_reference(node.value)  # `amp_cm = autocast`
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            scope = id(self.ctx.frame.node)
            old = self.ctx.resolve(node.value)
            if old in DEPRECATED_AMP and self._compatibility_fallback():
                self._fallbacks.append((scope, name, node.value))
            elif old in (AUTOCAST | GRAD_SCALERS) and old not in DEPRECATED_AMP:
                self._current_api.add((scope, name))  # `amp_cm = torch.amp.autocast`

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._note_reference(node.value)

    def _note_reference(self, expr: cst.BaseExpression) -> None:
        """The deprecated class used as a value, to be called later through the name it is bound or
        passed to: each call runs the deprecated constructor.  Reported without a fix: the
        stand-in `functools.partial(torch.amp.autocast, "cuda")` would take positional arguments in
        another order (`amp_cm(True)` would pass `dtype`), and is no class for `isinstance`."""
        if isinstance(expr, (cst.Name, cst.Attribute)) and not self._compatibility_fallback():
            old = self.ctx.resolve(expr)
            if old in DEPRECATED_AMP:
                self._references.append((expr, old, self.ctx.alias_written_at(expr)))

    def leave_IfExp(self, node: cst.IfExp) -> None:
        self._guards.pop()

    def _compatibility_fallback(self) -> bool:
        """Behind a version check, or in the `except` of a try that used the new API first."""
        frame = self.ctx.frame
        return bool(frame.handlers) or any(self._guards) or any(is_version_check(n.test) for n, _ in frame.conditions)

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        if not (isinstance(node.func, cst.Name) and node.func.value in ("isinstance", "issubclass")):
            for arg in node.args:
                self._note_reference(arg.value)  # `make_context(autocast)`
        old = ctx.resolve(node.func)
        if old not in DEPRECATED_AMP or self._compatibility_fallback():
            return
        new_name, device, positional = DEPRECATED_AMP[old]
        root = _root_name(node.func)
        local = root.value if root is not None and ctx.resolve(root) != "torch" else None
        if local is None and root is not None:
            torch_name: Optional[str] = root.value
        else:
            torch_name = "torch" if ctx.resolve(cst.Name("torch")) == "torch" else None
        new_call = None
        if not any(arg.star == "*" for arg in node.args):
            rewritten = node
            if new_name == "autocast":
                rewritten = positional_to_keywords(rewritten, positional)
            new_call = prepend_argument(rewritten, cst.SimpleString(f'"{device}"'))
        self._sites.append(_Site(node, old, new_call, torch_name, local, ctx.alias_written_at(node.func)))

    def finish(self, facts) -> None:
        reported = self._reported_assignments()
        by_line: dict[int, list[_Site]] = {}
        for site in self._sites:
            if _repeats(site.alias_of, reported):
                continue  # `with amp_cm():`: the class is written (and reported) where amp_cm was assigned it
            entry = self._imports.get(site.local) if site.local else None
            if site.local is not None and entry is not None:
                by_line.setdefault(id(entry), []).append(site)
            else:
                self._report(site, self._single_fix(site))
        for sites in by_line.values():
            fix = self._group_fix(self._imports[sites[0].local], sites)
            for site in sites:
                self._report(site, fix)
        for expr, old, alias_of in self._references:
            if _repeats(alias_of, reported):
                continue  # `train(amp_cm)`: reported where amp_cm was assigned the class
            new_name, device, _ = DEPRECATED_AMP[old]
            self.report(
                expr,
                f"`{old}` is deprecated (each call of it emits a FutureWarning in current PyTorch), and this "
                f'reference is called later: use `torch.amp.{new_name}("{device}", ...)` where it is called',
            )

    def _reported_assignments(self) -> set[int]:
        """The references (by id) reported, or repeating a reported one: a use of an alias repeats its
        assignment only where that assignment is reported itself (one decision, asked once: an
        assignment skipped as a compatibility fallback leaves its later calls to be reported),
        or is a fallback for a name its scope also binds to the current class.
        Aliases of aliases (`b = a`) are settled in order of their assignments, to a fixed point."""
        reported = {id(expr) for expr, _, alias_of in self._references if not alias_of}
        # (a real fallback: `try: amp_cm = torch.amp.autocast / except AttributeError: amp_cm =
        # torch.cuda.amp.autocast`, then `with amp_cm():` runs the current class where it exists)
        reported.update(id(value) for scope, name, value in self._fallbacks if (scope, name) in self._current_api)
        pending = [(expr, alias_of) for expr, _, alias_of in self._references if alias_of]
        changed = True
        while changed:
            changed = False
            for expr, alias_of in pending:
                if id(expr) not in reported and _repeats(alias_of, reported):
                    reported.add(id(expr))
                    changed = True
        return reported

    def _report(self, site: _Site, fix: Optional[NodeFix]) -> None:
        new_name, device, _ = DEPRECATED_AMP[site.old]
        self.report(
            site.call,
            f"`{site.old}(...)` is deprecated (it emits a FutureWarning in current PyTorch): use "
            f'`torch.amp.{new_name}("{device}", ...)`',
            fix,
        )

    def _single_fix(self, site: _Site) -> Optional[NodeFix]:
        if site.new_call is None or site.torch_name is None or site.local is not None:
            return None
        new = _with_func(site, site.torch_name)
        safety = Applicability.SAFE if self._written_out_only_called() else Applicability.UNSAFE
        return NodeFix(_fix_message(site), safety, ((site.call, new),))

    def _written_out_only_called(self) -> bool:
        """Is every written-out deprecated name (`torch.cuda.amp.GradScaler`) the callee of a reported
        call?  The same answer for every site, so found once per file: per site it made a file with a
        finding in every function quadratic (tests/test_findings_cost.py)."""
        if self._only_called is None:
            called = {id(site.call.func) for site in self._sites}
            self._only_called = all(id(node) in called for node in self._written_out)
        return self._only_called

    def _group_fix(self, entry: _ImportStatement, sites: list[_Site]) -> Optional[NodeFix]:
        """Rewrite every call that goes through this import line, and drop the names it no longer needs."""
        if any(site.new_call is None for site in sites):
            return None
        roots = {id(_root_name(site.call.func)) for site in sites}
        exported = self._exported()
        # A deprecated class named other than to call it (`isinstance(s, GradScaler)`, a subclass)
        # would now meet an instance of the torch.amp class, which is not an instance of it: unsafe.
        only_called = all(
            all(id(use) in roots for use in self._uses.get(site.local, ())) for site in sites if site.local
        ) and self._written_out_only_called()
        removable = [
            name for name in entry.aliases
            if self._uses.get(name) and all(id(use) in roots for use in self._uses[name])
            and "*" not in exported and name not in exported
        ]  # fmt: skip
        torch_names = {site.torch_name for site in sites}
        kept = [alias for name, alias in entry.aliases.items() if name not in removable]
        replacements: list[tuple[cst.CSTNode, object]] = []
        if torch_names == {"torch"} or (len(torch_names) == 1 and None not in torch_names):
            torch_name = next(iter(torch_names))
            if not kept:
                if _has_comments(entry.line):
                    return None
                replacements.append((entry.line, cst.RemovalSentinel.REMOVE))
        elif torch_names == {None} and not kept and not self._torch_is_bound_elsewhere():
            torch_name = "torch"
            import_torch = cst.Import(names=[cst.ImportAlias(name=cst.Name("torch"))])
            replacements.append((entry.line, entry.line.with_changes(body=[import_torch])))
        else:
            return None
        if kept and len(kept) != len(entry.aliases):
            last = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            new_statement = entry.statement.with_changes(names=[*kept[:-1], last])
            if isinstance(entry.statement, cst.ImportFrom) and entry.statement.rpar is not None:
                new_statement = new_statement.with_changes(names=[*kept])
            replacements.append((entry.statement, new_statement))
        for site in sites:
            replacements.append((site.call, _with_func(site, torch_name)))
        message = "Use torch.amp with the device argument" + (", and fix the import" if len(replacements) > len(sites) else "")
        applicability = Applicability.SAFE if only_called else Applicability.UNSAFE
        return NodeFix(message, applicability, tuple(replacements))  # type: ignore[arg-type]

    def _exported(self) -> frozenset[str]:
        """Names other code may import from this module, so that the import line must stay: those
        in `__all__` ("*" when `__all__` is not a list of literals), those another linted file
        imports from here, and any ("*") when one star-imports it or it is a package's __init__.py."""
        return _all_names(self.ctx.module) | self.ctx.project.imported_names

    def _torch_is_bound_elsewhere(self) -> bool:
        return self.ctx.frames[0].names.get("torch") is not None


def _all_names(module: cst.Module) -> frozenset[str]:
    """The strings of the module's `__all__` (`=`, `+=`, `.append`, `.extend` at the top level);
    "*" when one of them is not a literal."""
    names: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            value: Optional[cst.BaseExpression] = None
            if isinstance(small, cst.Assign) and any(_is_all(t.target) for t in small.targets):
                value = small.value
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)) and _is_all(small.target):
                value = small.value
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                func = small.value.func
                if isinstance(func, cst.Attribute) and _is_all(func.value) and func.attr.value in ("append", "extend"):
                    args = small.value.args
                    value = args[0].value if len(args) == 1 else cst.Name("unknown")
                    if func.attr.value == "append":
                        value = cst.List([cst.Element(value)])
            else:
                continue
            if value is None:
                continue
            elements = value.elements if isinstance(value, (cst.List, cst.Tuple)) else None
            for element in elements if elements is not None else [None]:
                text = element.value.evaluated_value if element is not None and isinstance(element.value, cst.SimpleString) else None
                names.add(text if isinstance(text, str) else "*")
    return frozenset(names)


def _is_all(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "__all__"


def _repeats(alias_of: tuple[cst.BaseExpression, ...], reported: set[int]) -> bool:
    """Is a use of an alias assigned at `alias_of` only a repeat of reported references?"""
    return bool(alias_of) and all(id(expr) in reported for expr in alias_of)


def _root_name(expr: cst.BaseExpression) -> Optional[cst.Name]:
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return expr if isinstance(expr, cst.Name) else None


def _with_func(site: _Site, torch_name: str) -> cst.Call:
    new_name = DEPRECATED_AMP[site.old][0]
    assert site.new_call is not None
    return site.new_call.with_changes(func=attribute_chain(f"{torch_name}.amp.{new_name}"))


def _fix_message(site: _Site) -> str:
    new_name, device, _ = DEPRECATED_AMP[site.old]
    return f'Use `torch.amp.{new_name}("{device}", ...)`'


def _has_comments(line: cst.SimpleStatementLine) -> bool:
    return any(empty.comment is not None for empty in line.leading_lines) or line.trailing_whitespace.comment is not None
