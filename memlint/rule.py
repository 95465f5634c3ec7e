"""The rule API: a rule is a small class with its identity, its docs, its examples and its checks.

A rule defines `visit_<Node>` / `leave_<Node>` methods for the libcst node types it cares about; the
engine calls them during its single traversal of each file.  Rules ask `self.ctx` (the shared
analysis) about the code and call `self.report(...)`; they never walk the tree themselves.

    class AccumulatedGraph(Rule):
        '''
        ## What it does
        ...
        '''
        code = "ML001"
        name = "accumulated-graph"
        severity = Severity.WARNING
        fix_safety = "safe"
        VALID = [Valid("...")]
        INVALID = [Invalid("...", line=4, column=9, fixed="...")]

A built-in rule is a folder of the top-level rules/ directory (shipped as `memlint.rules`): its
`meta.py` holds a `Meta` (code, name, default, options, trigger words) that memlint reads without
importing the rule or libcst, its optional `screen.py` a necessary condition of its reporting on
CPython's AST, and its `rule.py` the class, which names the meta (`meta = META`) instead of
repeating code, name and default.  Third-party rules set `code` and `name` themselves.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Optional, Sequence

from memlint.diagnostics import Applicability, Severity
from memlint.report.sentences import first_sentence
from memlint.units import parse_size

# The key in `Settings.options` under which the run passes the codes that select / extend-select
# name exactly (memlint.config.resolve_exact_selection); no configuration file sets it.
SELECTED_BY_CODE = "selected-by-code"

if TYPE_CHECKING:
    import libcst as cst

    from memlint.analysis.context import Context, FileFacts, FunctionKey

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Measured effect")
CODE_PATTERN = re.compile(r"^[A-Z]{1,4}[0-9]{3}$")


# ---------------------------------------------------------------------------- meta


@dataclass(frozen=True)
class Option:
    """A `[tool.memlint]` key a rule reads: its default and `check`, which turns the configured
    value into the one the rule sees or raises ValueError with what was expected."""

    key: str
    default: Any
    check: Callable[[Any], Any]


@dataclass(frozen=True)
class Meta:
    """What memlint needs to know about a built-in rule before importing it (rules/*/meta.py).

    `words`: the trigger words, groups of identifiers; the rule can only report in a text that
    mentions at least one word of every group (anywhere: code, strings or comments).  They are the
    cheapest part of the rule's screen, asked before its `screen.py`.

    `follows_other_files_steps`: the rule asks whether a loop runs another file's training step
    (`FileView.update_calls`), so it may report in a file that never mentions torch itself (SPADE's
    train.py calls `trainer.run_generator_one_step(data)`); every other rule is skipped there.

    `follows_other_files_models`: likewise, the rule asks what another file's models do when this
    file runs them (`FileView.model_methods`, `FileView.eval_contexts`), so it may report in a file
    that never mentions torch (protonets' `utils/model.py`: `model.eval()` then `model.loss(sample)`).
    """

    code: str
    name: str
    default_enabled: bool = True
    options: tuple[Option, ...] = ()
    words: tuple[tuple[str, ...], ...] = ()
    follows_other_files_steps: bool = False
    follows_other_files_models: bool = False


def boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError("expected true or false")


def fraction(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1:
        return float(value)
    raise ValueError("expected a number from 0 up to (not including) 1")


def positive_int(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise ValueError("expected a positive integer")


def integer_at_least(minimum: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
            return value
        raise ValueError(f"expected an integer of at least {minimum}")

    check.json_schema = {"type": "integer", "minimum": minimum}  # type: ignore[attr-defined]
    return check


size = parse_size  # "24GiB", "80GB" or a number of bytes

# What each check accepts, as JSON Schema (docs/memlint.schema.json, memlint/commands/schema.py).
boolean.json_schema = {"type": "boolean"}  # type: ignore[attr-defined]
fraction.json_schema = {"type": "number", "minimum": 0, "exclusiveMaximum": 1}  # type: ignore[attr-defined]
positive_int.json_schema = {"type": "integer", "minimum": 1}  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- examples


@dataclass(frozen=True)
class Harness:
    """A small program that runs an example, so that its fix can be executed (tests/test_fix_execution.py).

    `setup` runs before the example's code (inputs, stand-ins for what the snippet takes as given) and
    `then` after it; `then` sets `result`.  The example runs as written and as fixed, each in a fresh
    child process with torch on the CPU and the same seed, and the two outcomes are compared exactly:
    `result` (values, dtypes, devices, `requires_grad`, and whatever else the harness puts in it, such
    as the caller's inputs that an in-place edit could overwrite) or the exception raised.  A safe fix
    must give the same outcome; an unsafe example with a harness must show the difference that makes
    it unsafe.  `fake_cuda`: run under torch's FakeTensorMode with a stand-in for `Tensor.cuda`, for
    code that puts tensors on the GPU (devices, dtypes and shapes are compared, not values).  `rtol`:
    floating-point numbers may differ by this relative amount (0: bit for bit), for a fix that
    changes the precision of arithmetic the program does on the values (ML001's `.item()`).
    `raises`: the original program always fails with this error (the start of "Type: message"), which
    the fix removes (ML007: a tensor passed to checkpoint as the function); the check then requires
    that error before and a program that runs after, its result computed by the harness.
    """

    setup: str = ""
    then: str = ""
    fake_cuda: bool = False
    rtol: float = 0.0
    raises: str = ""


# A stand-in for the `marimo` package, for a harness whose example is a marimo notebook (setup):
# `@app.cell` keeps each cell, in order, in `app.cells` for the harness to run, passing each cell
# what the cells before it returned (`(nn,) = app.cells[0](); (net,) = app.cells[1](nn)`).
MARIMO_STAND_IN = """
import sys, types
class _App:
    def __init__(self, **options):
        self.cells = []
    def cell(self, function=None, **options):
        if function is None:
            return self.cell
        self.cells.append(function)
        return function
sys.modules["marimo"] = types.SimpleNamespace(App=_App)
"""


@dataclass(frozen=True)
class Valid:
    """A snippet on which the rule must report nothing.  With a `harness`, any safe fix some later
    change of the rule offers on it is executed too (a reproduction of a fix that was wrong)."""

    code: str
    config: Mapping[str, Any] = field(default_factory=dict)
    harness: Optional[Harness] = None


@dataclass(frozen=True)
class Invalid:
    """A snippet on which the rule must report exactly once, at `line`/`column` (1-based).

    `fixed` is the code after `--fix` (with `--unsafe-fixes` when `unsafe` is true); None means the
    finding has no fix.  `message` is a substring the message must contain.  `harness`: a program
    that runs the example before and after its fix (see Harness).
    """

    code: str
    line: int
    column: int
    fixed: Optional[str] = None
    unsafe: bool = False
    message: Optional[str] = None
    config: Mapping[str, Any] = field(default_factory=dict)
    harness: Optional[Harness] = None


@dataclass(frozen=True)
class NodeFix:
    """A fix described as CST node replacements; the engine turns it into minimal text edits."""

    message: str
    applicability: Applicability
    replacements: tuple[tuple[cst.CSTNode, cst.CSTNode], ...]


@dataclass
class Report:
    rule: "Rule"
    node: cst.CSTNode
    message: str
    fix: Optional[NodeFix]
    # Enclosing functions when the finding only holds where gradients are recorded; the engine drops
    # it when the file shows that one of them only ever runs without gradient tracking.
    grad_sensitive_chain: Optional[tuple["FunctionKey", ...]] = None
    # A rule whose findings differ in severity (ML007: a crash is an error, a missing option a
    # warning) sets it per finding; None means the rule's own severity.
    severity: Optional[Severity] = None
    # Other places the finding involves, each with what it is (Diagnostic.related).
    related: tuple[tuple[cst.CSTNode, str], ...] = ()
    # Calls of a helper in this file that choose the code the finding is in (a trainer's
    # `self.run_epoch('val', loader)`): the engine drops the finding when every one of them runs
    # without gradient tracking (the Context's grad mode at the call, `CallSite.grad`, or a caller
    # that only ever runs so).
    grad_calls: tuple[cst.Call, ...] = ()


class Rule:
    # A built-in rule's meta.py; code, name and default_enabled are taken from it.
    meta: ClassVar[Optional[Meta]] = None
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    default_enabled: ClassVar[bool] = True
    # "safe", "unsafe", "mixed" or "none": what `memlint rules` shows in its fix column.
    fix_safety: ClassVar[str] = "none"
    VALID: ClassVar[list[Valid]] = []
    INVALID: ClassVar[list[Invalid]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        meta = cls.__dict__.get("meta")
        if meta is not None:
            cls.code, cls.name, cls.default_enabled = meta.code, meta.name, meta.default_enabled

    def __init__(self, ctx: "Context", reports: list[Report], options: Mapping[str, Any]) -> None:
        self.ctx = ctx
        self.options = options
        self._reports = reports

    def selected_by_code(self) -> bool:
        """Was this rule selected by its exact code (`select = ["ML003"]`, `--extend-select ML003`),
        not only through the default set, a prefix (`ML`, `ML0`) or `ALL`?  A rule reports its
        findings whose fix saves nothing in the code at hand only then (docs/adding-a-rule.md)."""
        return self.code in self.options.get(SELECTED_BY_CODE, ())

    def option(self, key: str) -> Any:
        """The configured value of one of the rule's options, or the default its meta gives."""
        if key in self.options:
            return self.options[key]
        defaults = {option.key: option.default for option in self.meta.options} if self.meta else {}
        return defaults[key]  # KeyError: the rule reads an option its meta does not declare

    # -------------------------------------------------------------- for rule authors

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fix: Optional[NodeFix] = None,
        *,
        grad_sensitive: bool = False,
        severity: Optional[Severity] = None,
        related: Sequence[tuple[cst.CSTNode, str]] = (),
        grad_calls: Sequence[cst.Call] = (),
    ) -> None:
        """`related`: other places the finding involves, as (node, what it is there). `grad_calls`
        (with `grad_sensitive`): the calls of the file that choose the code of the finding (the
        calls that pick a helper's evaluation branch): dropped where every one of them runs without
        gradient tracking (`Report.grad_calls`)."""
        chain = self.ctx.function_chain if grad_sensitive else None
        self._reports.append(Report(self, node, message, fix, chain, severity, tuple(related), tuple(grad_calls) if grad_sensitive else ()))

    @staticmethod
    def replace(
        old: cst.CSTNode, new: cst.CSTNode, message: str, *, safe: bool = True
    ) -> NodeFix:
        applicability = Applicability.SAFE if safe else Applicability.UNSAFE
        return NodeFix(message, applicability, ((old, new),))

    def finish(self, facts: "FileFacts") -> None:
        """Called once the whole file has been seen; rules with look-ahead conditions report here."""

    # -------------------------------------------------------------- documentation

    @classmethod
    def documentation(cls) -> str:
        return textwrap.dedent(inspect.getdoc(cls) or "").strip()

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        sections: dict[str, str] = {}
        current = None
        for line in cls.documentation().splitlines():
            match = re.match(r"^##\s+(.*?)\s*$", line)
            if match:
                current = match.group(1)
                sections[current] = ""
            elif current is not None:
                sections[current] += line + "\n"
        return {key: value.strip() for key, value in sections.items()}

    @classmethod
    def summary(cls) -> str:
        """The first sentence of "What it does", for listings."""
        what = cls.doc_sections().get("What it does", "")
        return first_sentence(what.split("\n\n")[0])


def rule_url(code: str) -> Optional[str]:
    """The rule page's URL where one is configured ($MEMLINT_DOCS_URL, a template with {code}), else None:
    a help link must point at something that exists."""
    import os

    from memlint import DOCS_URL_VARIABLE

    template = os.environ.get(DOCS_URL_VARIABLE, "").strip()
    if not template:
        return None
    return template.replace("{code}", code.lower())
