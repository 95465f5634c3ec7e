"""Command-line flags named for mixed precision that select nothing: `parser.add_argument('--amp',
action='store_true')` where every read of `args.amp` is the test of an `if` whose branches only
rename the run (`opt.model_name = '{}_amp'.format(...)`).

A flag's name is no evidence of mixed precision; what it selects is.  A flag that turns on autocast,
a GradScaler, apex's amp or `.half()` shows that call in the file (precision_api.mixed_precision_call,
which ML017 asks directly), so the flag's own strings only matter where its value goes somewhere the
file cannot show: handed to a call (`Trainer(fp16=args.fp16)`, `setup(args.amp)`), stored, or
tested by a branch that does anything but build or print text (`cfg.MIXED = True` may be read by
another file's code).  Those keep the flag as evidence; only a flag the file declares and reads
solely as such idle tests is idle.  (The parsed namespace
as a whole may still reach other files' code; a read there of the flag by its attribute is not seen
here: the rare case this module accepts.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.pipeline.tree import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Methods that build text from a string (`'{}_amp'.format(name)`).
_TEXT_METHODS = frozenset({"format", "join", "replace", "lower", "upper", "strip"})


def idle_flag_strings(ctx: "Context") -> frozenset[int]:
    """The ids of the string literals of the `add_argument(...)` calls (option names, `help=`,
    `dest=`) that declare an idle flag (module docstring), found once per file."""
    return ctx.memo("idle-precision-flags", lambda: _idle_flag_strings(ctx.module))  # type: ignore[return-value]


def _idle_flag_strings(module: cst.Module) -> frozenset[int]:
    declarations: dict[str, list[cst.Call]] = {}
    reads: dict[str, int] = {}
    idle_tests: dict[str, int] = {}
    for node in code_descendants(module):
        kind = type(node)
        if kind is cst.Call:
            dest = _declared(node)
            if dest is not None:
                declarations.setdefault(dest, []).append(node)
        elif kind is cst.Attribute:
            reads[node.attr.value] = reads.get(node.attr.value, 0) + 1
        elif kind is cst.If:
            attribute = _tested_attribute(node.test)
            if attribute is not None and _only_text(node):
                idle_tests[attribute] = idle_tests.get(attribute, 0) + 1
    found: set[int] = set()
    for dest, calls in declarations.items():
        if reads.get(dest, 0) == 0 or reads.get(dest, 0) != idle_tests.get(dest, 0):
            continue  # never read here (another file may read it), or read for something else
        for call in calls:
            found.update(id(n) for n in code_descendants(call) if type(n) is cst.SimpleString)
    return frozenset(found)


def _declared(call: cst.Call) -> Optional[str]:
    """The destination of `p.add_argument('--use-amp', ...)` ("use_amp"), or None."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value != "add_argument":
        return None
    for argument in call.args:
        if argument.keyword is not None and argument.keyword.value == "dest":
            value = argument.value
            return value.evaluated_value if type(value) is cst.SimpleString and isinstance(value.evaluated_value, str) else None
    options = [a.value.evaluated_value for a in call.args if a.keyword is None and type(a.value) is cst.SimpleString]
    longs = [o for o in options if isinstance(o, str) and o.startswith("--")]
    return longs[0][2:].replace("-", "_") if longs else None


def _tested_attribute(test: cst.BaseExpression) -> Optional[str]:
    """`args.amp` / `not args.amp` as an `if`'s whole test: "amp"."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test = test.expression
    if type(test) is cst.Attribute and type(test.value) is cst.Name:
        return test.attr.value
    return None


def _only_text(branch: cst.If) -> bool:
    """Do the `if`'s branches only name the run: assign text (`name = "{}_amp".format(name)`,
    `name += "_amp"`) or print it?  Any other statement or value may hand the flag on."""
    blocks = [branch.body]
    if branch.orelse is not None:
        if type(branch.orelse) is not cst.Else:
            return False  # an `elif`: a test of its own
        blocks.append(branch.orelse.body)
    for block in blocks:
        if type(block) is cst.SimpleStatementSuite:
            statements = list(block.body)
        elif type(block) is cst.IndentedBlock and all(type(line) is cst.SimpleStatementLine for line in block.body):
            statements = [small for line in block.body for small in line.body]  # type: ignore[attr-defined]
        else:
            return False
        if not all(_names_the_run(statement) for statement in statements):
            return False
    return True


def _names_the_run(statement: cst.BaseSmallStatement) -> bool:
    kind = type(statement)
    if kind is cst.Assign or kind is cst.AugAssign or kind is cst.AnnAssign:
        return statement.value is not None and _is_text(statement.value)  # type: ignore[attr-defined]
    if kind is cst.Expr:
        call = statement.value  # type: ignore[attr-defined]
        return type(call) is cst.Call and type(call.func) is cst.Name and call.func.value == "print"
    return kind is cst.Pass


def _is_text(value: cst.BaseExpression) -> bool:
    """A string built in place: a literal, an f-string, `str(x)`, `'{}_amp'.format(...)`, `a + '_amp'`."""
    kind = type(value)
    if kind is cst.SimpleString or kind is cst.FormattedString or kind is cst.ConcatenatedString:
        return True
    if kind is cst.Call:
        func = value.func  # type: ignore[attr-defined]
        if type(func) is cst.Name:
            return func.value == "str"
        return type(func) is cst.Attribute and func.attr.value in _TEXT_METHODS and _is_text(func.value)
    if kind is cst.BinaryOperation and type(value.operator) in (cst.Add, cst.Modulo):  # type: ignore[attr-defined]
        return _is_text(value.left) or _is_text(value.right)  # type: ignore[attr-defined]
    return False
