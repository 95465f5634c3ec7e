"""Is one statement's value the one a later statement sees: does control flow from `source` (a
`+=`) to `target` (a backward call) without a jump between?  Asked by the semantic model before it
gives a backpropagated `+=` history (`SemanticModel._mark`): the last `+=` before a backward in
source order is the value backward runs on only when the backward is reached from it.

The form is deliberately narrow: `target` must sit after `source` in a block that encloses both
(the same statement list, or one enclosing the `+=`'s: `for part in parts: loss += part` then
`loss.backward()` after the loop), with no `return`, `raise`, `continue` or `break` between that
could skip it: `if not train: loss += m; continue` then `loss.backward()`, or `+=` in one branch of
an `if` and backward in the other, are not reached.  A `continue`/`break` inside a loop that lies
between the two (the loop the `+=` runs in) only ends that loop, which then flows on.
"""

from __future__ import annotations

import libcst as cst

from memlint.pipeline.tree import code_children

# Nodes whose `.body` is a list of statements run one after another.
_BLOCKS = (cst.Module, cst.IndentedBlock, cst.SimpleStatementLine, cst.SimpleStatementSuite)
_LOOPS = (cst.For, cst.While)
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def parents_below(root: cst.CSTNode) -> dict[int, cst.CSTNode]:
    """Each node below `root` (by id) mapped to its parent."""
    parents: dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in code_children(node):
            parents[id(child)] = node
            stack.append(child)
    return parents


def _path(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> list[cst.CSTNode]:
    path = [node]
    while id(path[-1]) in parents:
        path.append(parents[id(path[-1])])
    path.reverse()
    return path


def reaches(source: cst.CSTNode, target: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> bool:
    """Does control flow from `source` on to `target`, with no jump between (see the module doc)?
    When it cannot tell, no."""
    up, down = _path(source, parents), _path(target, parents)
    if up[0] is not down[0]:
        return False
    common = 0
    while common + 1 < min(len(up), len(down)) and up[common + 1] is down[common + 1]:
        common += 1
    block = up[common]
    if not isinstance(block, _BLOCKS) or common + 1 >= len(up) or common + 1 >= len(down):
        return False  # different branches of one statement (`if`/`else`, `try`/`except`), or nested
    statements = list(block.body)  # type: ignore[attr-defined]
    first, last = statements.index(up[common + 1]), statements.index(down[common + 1])
    if first >= last:
        return False
    if any(_may_jump(s, loops_end_jumps=False) for s in statements[first + 1 : last]):
        return False
    # climbing out of the `+=`'s own blocks: what follows it there runs first
    for depth in range(len(up) - 1, common + 1, -1):
        parent = up[depth - 1]
        if not isinstance(parent, _BLOCKS):
            continue
        inner_loop = any(
            isinstance(up[d], _LOOPS) and up[d + 1] is up[d].body  # type: ignore[attr-defined]
            for d in range(common + 1, depth - 1)
        )
        after = list(parent.body)  # type: ignore[attr-defined]
        after = after[after.index(up[depth]) + 1 :]
        if any(_may_jump(s, loops_end_jumps=inner_loop) for s in after):
            return False
    return True


def _may_jump(statement: cst.CSTNode, loops_end_jumps: bool) -> bool:
    """Can `statement` leave its block other than by falling through: a `return` or `raise`, or a
    `continue`/`break` of an enclosing loop (harmless where `loops_end_jumps`: that loop lies
    between the `+=` and the backward)?"""
    stack: list[tuple[cst.CSTNode, bool]] = [(statement, False)]
    while stack:
        node, in_loop = stack.pop()
        kind = type(node)
        if kind in (cst.Return, cst.Raise):
            return True
        if kind in (cst.Continue, cst.Break) and not in_loop and not loops_end_jumps:
            return True
        if isinstance(node, _SCOPES):
            continue
        inner = in_loop or isinstance(node, _LOOPS)
        stack.extend((child, inner) for child in code_children(node))
    return False
