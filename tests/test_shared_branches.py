"""Work every branch of an `if` / `elif` / `else` chain does (memlint/analysis/shared_branches.py): the
statements every branch opens with, the same in the same order."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst

from memlint.analysis.shared_branches import done_in_every_branch
from memlint.analysis.shared_branches_ast import done_in_every_branch_ast
from memlint.api import lint_source
from memlint.pipeline.tree import code_descendants

CHAIN = """
if step % 4 == 0:
    mask = torch.zeros(n).cuda()
    out = model(x)
    loss.backward()
elif step % 4 == 1:
    with torch.no_grad():
        mask = torch.zeros(n).cuda()
else:
    mask = torch.zeros(n).cuda()
    if log:
        other = torch.ones(n).cuda()
"""


def _chain(code: str) -> cst.If:
    return cst.parse_statement(textwrap.dedent(code).strip("\n"))  # type: ignore[return-value]


def _calls(node: cst.CSTNode, text: str) -> list[cst.Call]:
    module = cst.Module([])
    return [n for n in code_descendants(node) if type(n) is cst.Call and module.code_for_node(n) == text]


def test_a_statement_every_branch_runs_is_done_whichever_branch_runs():
    chain = _chain(CHAIN)
    moves = _calls(chain, "torch.zeros(n).cuda()")
    assert len(moves) == 3
    assert all(done_in_every_branch(chain, move) for move in moves)
    assert all(done_in_every_branch(chain.orelse, move) for move in moves[1:])  # the `elif`'s own chain


def test_work_one_branch_alone_does_is_not():
    chain = _chain(CHAIN)
    assert not done_in_every_branch(chain, _calls(chain, "model(x)")[0])
    assert not done_in_every_branch(chain, _calls(chain, "torch.ones(n).cuda()")[0])  # behind a further `if`


def test_a_chain_without_an_else_need_run_no_branch():
    chain = _chain("""
        if a:
            mask = torch.zeros(n).cuda()
        elif b:
            mask = torch.zeros(n).cuda()
    """)
    assert not done_in_every_branch(chain, _calls(chain, "torch.zeros(n).cuda()")[0])


def test_an_equal_statement_after_different_work_is_not_the_same_work():
    # one branch writes host data into the buffer before the copy: the copies move different tensors
    code = """
        if step % 100 == 0:
            onehot = torch.zeros(b, c)
            onehot = onehot.cuda()
        else:
            onehot = torch.zeros(b, c)
            onehot.scatter_(1, labels, 1)
            onehot = onehot.cuda()
    """
    chain = _chain(code)
    assert done_in_every_branch(chain, _calls(chain, "torch.zeros(b, c)")[0])
    assert not any(done_in_every_branch(chain, move) for move in _calls(chain, "onehot.cuda()"))
    tree = ast.parse(textwrap.dedent(code)).body[0]
    assert done_in_every_branch_ast(tree, tree.body[0])  # type: ignore[attr-defined,arg-type]
    assert not done_in_every_branch_ast(tree, tree.body[1])  # type: ignore[attr-defined,arg-type]
    assert not done_in_every_branch_ast(tree, tree.orelse[2])  # type: ignore[attr-defined,arg-type]


def test_the_same_fact_on_cpythons_tree():
    chain = ast.parse(textwrap.dedent(CHAIN)).body[0]
    first = chain.body[0]  # type: ignore[attr-defined]
    assert done_in_every_branch_ast(chain, first)  # type: ignore[arg-type]
    assert not done_in_every_branch_ast(chain, chain.body[1])  # type: ignore[attr-defined,arg-type]
    no_else = ast.parse("if a:\n    f(x)\nelif b:\n    f(x)\n").body[0]
    assert not done_in_every_branch_ast(no_else, no_else.body[0])  # type: ignore[attr-defined,arg-type]


def test_a_loop_statement_in_every_branch_of_a_counters_if_else_is_reported_in_each():
    # KellerJordan/cifar10-airbench: one step in four trains, the others evaluate; both build the mask
    code = textwrap.dedent("""
        import torch
        for step, (x, y) in enumerate(train_loader):
            if step % 4 == 0:
                mask = torch.zeros(len(x)).cuda().bool()
                loss = criterion(model(x), y)[mask].sum()
                loss.backward()
                optimizer.step()
            else:
                with torch.no_grad():
                    mask = torch.zeros(len(x)).cuda().bool()
            if step % 100 == 0:
                shown = torch.ones(len(x)).cuda()
    """)
    found = [(d.code, d.location.row) for d in lint_source(code, "train.py", select=["ML013"])]
    assert found == [("ML013", 5), ("ML013", 11)]
