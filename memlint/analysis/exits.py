"""Statements that a path through their block never falls through: an `if` whose branch leaves the
function before the next statement runs.

robustness's ResNet block ends

    out += self.shortcut(x)
    if fake_relu:
        return FakeReLU.apply(out)
    return F.relu(out)

On the path that reaches `F.relu(out)` the `if` ran only its test: its branch returned otherwise,
so what the branch does with `out` (hands it to `FakeReLU.apply`) happens on another path, one that
never reaches the activation.  Such an `if` has no `elif` / `else`, a test that does not mention
the name asked about (a test runs on every path), and a branch whose last statement, at its own top
level, is a `return` or a `raise` (a `break` or `continue` would only leave a loop).  Asked by
ML003's fresh values (analysis/fresh_values.py): the statement before the activation on its path is
the one before such an `if`.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.walk import code_descendants


def leaves_first(statement: cst.CSTNode, name: str) -> bool:
    """Is `statement` an `if` (no `elif` / `else`) whose test does not mention `name` and whose
    branch always leaves the function by a `return` or `raise` at its end?"""
    if type(statement) is not cst.If or statement.orelse is not None:  # type: ignore[attr-defined]
        return False
    body = statement.body  # type: ignore[attr-defined]
    if type(body) is cst.IndentedBlock:
        last = body.body[-1] if body.body else None  # type: ignore[attr-defined]
        smalls = last.body if type(last) is cst.SimpleStatementLine else ()  # type: ignore[union-attr]
    else:
        smalls = body.body  # `if c: return x` on one line
    if not smalls or type(smalls[-1]) not in (cst.Return, cst.Raise):
        return False
    test = statement.test  # type: ignore[attr-defined]
    return not any(type(n) is cst.Name and n.value == name for n in (test, *code_descendants(test)))  # type: ignore[attr-defined]
