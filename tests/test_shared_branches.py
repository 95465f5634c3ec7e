"""Work every branch of an `if` / `elif` / `else` chain does (memlint/analysis/shared_branches.py), and
the settings a run fixes (memlint/analysis/flag_arguments.py's `settings` / `varies`)."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst

from memlint.analysis.flag_arguments import run_setting, setting_parameters, varying_arguments
from memlint.analysis.shared_branches import done_in_every_branch
from memlint.analysis.shared_branches_ast import done_in_every_branch_ast
from memlint.api import lint_source
from memlint.pipeline.tree import code_descendants

CHAIN = """
if step % 4 == 0:
    out = model(x)
    mask = torch.zeros(n).cuda()
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


def test_the_same_fact_on_cpythons_tree():
    chain = ast.parse(textwrap.dedent(CHAIN)).body[0]
    first = chain.body[1]  # type: ignore[attr-defined]
    assert done_in_every_branch_ast(chain, first)  # type: ignore[arg-type]
    assert not done_in_every_branch_ast(chain, chain.body[0])  # type: ignore[attr-defined,arg-type]
    no_else = ast.parse("if a:\n    f(x)\nelif b:\n    f(x)\n").body[0]
    assert not done_in_every_branch_ast(no_else, no_else.body[0])  # type: ignore[attr-defined,arg-type]


def test_settings_are_parameters_with_a_literal_default():
    function = ast.parse("def f(x, y=None, alpha=1.0, mode='l2', *, per_sample=False, n=-1): pass").body[0]
    assert setting_parameters(function) == [["alpha", 2], ["mode", 3], ["per_sample", -1], ["n", -1]]


def test_arguments_that_may_change_between_calls():
    def call(code: str) -> ast.Call:
        return ast.parse(code).body[0].value  # type: ignore[attr-defined,return-value]

    assert varying_arguments(call("mixup(x, y, args.alpha, per_sample=True)")) == ([0, 1], [])
    assert varying_arguments(call("mixup(x, y, alpha, mode=cfg.mode, n=-1)")) == ([0, 1, 2], [])
    assert varying_arguments(call("mixup(x, *rest)")) == ([-1], [])
    assert varying_arguments(call("mixup(x, **kw)")) == ([-1], [])
    assert run_setting(ast.parse("self.args.alpha", mode="eval").body)
    assert not run_setting(ast.parse("alpha * 2", mode="eval").body)


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
