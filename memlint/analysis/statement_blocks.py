"""The statement lists of a function or a module, the blocks a statement-by-statement reading walks
(what follows what inside one block: ML003's "the line before", the layers added one after another)."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from memlint.analysis.walk import code_children

# A nested function or class has blocks of its own; a simple statement line has no block in it.
_NO_BLOCKS_INSIDE = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.SimpleStatementLine})


def function_blocks(function: cst.FunctionDef, into_if: bool = True) -> Iterator[list]:
    """Every statement list in the function's body (nested blocks too, not nested functions);
    without `into_if`, not the blocks of `if` statements (whose walk starts from the block around them)."""
    return _blocks([function.body], into_if)


def module_code_blocks(module: cst.Module) -> Iterator[list]:
    """Every statement list of the module's own code, its top level first (a script's training loop
    and the branches inside it; not the bodies of functions or classes): the module read as a
    function of its own."""
    yield list(module.body)
    yield from _blocks(list(module.body), into_if=True)


def _blocks(stack: list[cst.CSTNode], into_if: bool) -> Iterator[list]:
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in _NO_BLOCKS_INSIDE:
            continue
        if kind is cst.IndentedBlock:
            yield node.body  # type: ignore[attr-defined]
        if kind is cst.If and not into_if:
            stack.extend(_blocks_below_if(node))  # type: ignore[arg-type]
            continue
        stack.extend(code_children(node))


def _blocks_below_if(node: cst.If):
    """The statements of an `if`'s branches, whose own blocks (of a `for` inside, say) are walked
    from scratch; the branches' statement lists themselves are not yielded."""
    branch: Optional[cst.CSTNode] = node
    while branch is not None:
        body = branch.body  # type: ignore[attr-defined]
        if type(body) is cst.IndentedBlock:
            yield from body.body
        branch = branch.orelse if type(branch) is cst.If else None  # type: ignore[attr-defined]
